package reports

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// The JUnit XML elements rxeq writes (the subset of the Surefire / Jenkins
// xUnit schema, junit-10.xsd, that it needs).
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Time     string       `xml:"time,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name       string          `xml:"name,attr"`
		Tests      int             `xml:"tests,attr"`
		Failures   int             `xml:"failures,attr"`
		Errors     int             `xml:"errors,attr"`
		Skipped    int             `xml:"skipped,attr"`
		Time       string          `xml:"time,attr"`
		Properties []junitProperty `xml:"properties>property"`
		Cases      []junitCase     `xml:"testcase"`
	}
	junitProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitProblem `xml:"failure"`
		Error     *junitProblem `xml:"error"`
		Skipped   *junitProblem `xml:"skipped"`
	}
	junitProblem struct {
		Message string `xml:"message,attr,omitempty"`
		Type    string `xml:"type,attr,omitempty"`
		Body    string `xml:",chardata"`
	}
)

// WriteJUnit writes r as JUnit XML that validates against the Surefire /
// Jenkins xUnit schema (junit-10.xsd) and loads in the usual CI viewers.
//
// Layout: one <testsuite> per scenario, in order of first appearance; in
// it one <testcase> per case, named "FUNCTION/bBATCH/EXECUTOR" (for
// example "score_linear/b16/native"), and one per lock, named
// "FUNCTION/lock"; classname is the scenario. A failed case carries
// <failure type="mismatch"> (type="mismatch:float32-limit" or
// "mismatch:executor" when the mismatch was blamed; a failed lock
// type="lock") whose message
// attribute is the first line of the report and whose text is all of it;
// an error carries <error>, a skip <skipped>. Each suite's <properties>
// hold the tool version, the compiler, the run seed, each case's seed
// ("seed.FUNCTION/bBATCH") and each output's tolerance
// ("tolerance.FUNCTION.OUTPUT" = "rtol=… atol=…"). Times are plain
// decimal seconds with millisecond precision (0.125), as the schema's
// SUREFIRE_TIME pattern requires.
func WriteJUnit(w io.Writer, r *Report) error {
	if r == nil {
		return fmt.Errorf("reports: nil report")
	}
	// One pass gathers each suite's cases and counts; then the suites are
	// encoded one at a time, so the XML of one suite is held at a time,
	// never the whole document's (rxeq merge of large reports).
	type suiteAt struct {
		name         string
		cases, locks []int
		n            junitSuite // the counts and time; no cases
		time         float64
	}
	var suites []*suiteAt
	index := map[string]*suiteAt{}
	suite := func(name string) *suiteAt {
		s, ok := index[name]
		if !ok {
			s = &suiteAt{name: name}
			index[name] = s
			suites = append(suites, s)
		}
		return s
	}
	count := func(s *suiteAt, st Status) {
		s.n.Tests++
		switch st {
		case StatusPass, StatusXPass:
		case StatusXFail, StatusSkip:
			s.n.Skipped++
		case StatusFail:
			s.n.Failures++
		default:
			s.n.Errors++
		}
	}
	for i := range r.Cases {
		c := &r.Cases[i]
		s := suite(c.Scenario)
		s.cases = append(s.cases, i)
		s.time += nonNegative(c.Duration)
		count(s, c.Status)
	}
	for i := range r.Locks {
		l := &r.Locks[i]
		s := suite(l.Scenario)
		s.locks = append(s.locks, i)
		s.time += nonNegative(l.Duration)
		count(s, l.Status)
	}
	root := junitSuites{Name: "rxeq", Time: junitTime(r.Duration)}
	for _, s := range suites {
		root.Tests += s.n.Tests
		root.Failures += s.n.Failures
		root.Errors += s.n.Errors
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(xml.Header)
	enc := xml.NewEncoder(bw)
	enc.Indent("", "  ")
	start := xml.StartElement{Name: xml.Name{Local: "testsuites"}, Attr: []xml.Attr{
		{Name: xml.Name{Local: "name"}, Value: root.Name},
		{Name: xml.Name{Local: "tests"}, Value: strconv.Itoa(root.Tests)},
		{Name: xml.Name{Local: "failures"}, Value: strconv.Itoa(root.Failures)},
		{Name: xml.Name{Local: "errors"}, Value: strconv.Itoa(root.Errors)},
		{Name: xml.Name{Local: "time"}, Value: root.Time},
	}}
	if err := enc.EncodeToken(start); err != nil {
		return fmt.Errorf("reports: writing JUnit: %w", err)
	}
	for _, s := range suites {
		js := s.n
		js.Name, js.Time = s.name, junitTime(s.time)
		cases := make([]*Case, len(s.cases))
		js.Cases = make([]junitCase, 0, len(s.cases)+len(s.locks))
		for k, i := range s.cases {
			c := &r.Cases[i]
			cases[k] = c
			failType := "mismatch"
			if c.Blame != "" {
				failType = "mismatch:" + c.Blame
			}
			js.Cases = append(js.Cases, caseXML(c.Name(), c.Scenario, c.Duration, c.Status, failType, caseText(c)))
		}
		for _, i := range s.locks {
			l := &r.Locks[i]
			js.Cases = append(js.Cases, caseXML(l.Name(), l.Scenario, l.Duration, l.Status, "lock", l.Message))
		}
		js.Properties = properties(r, cases)
		if err := enc.EncodeElement(&js, xml.StartElement{Name: xml.Name{Local: "testsuite"}}); err != nil {
			return fmt.Errorf("reports: writing JUnit: %w", err)
		}
	}
	if err := enc.EncodeToken(start.End()); err != nil {
		return fmt.Errorf("reports: writing JUnit: %w", err)
	}
	if err := enc.Flush(); err != nil {
		return fmt.Errorf("reports: writing JUnit: %w", err)
	}
	bw.WriteString("\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("reports: writing JUnit: %w", err)
	}
	return nil
}

func caseXML(name, classname string, d float64, st Status, failType, text string) junitCase {
	c := junitCase{Name: name, Classname: classname, Time: junitTime(d)}
	p := &junitProblem{Message: firstLine(text), Body: text}
	switch st {
	case StatusPass, StatusXPass:
	case StatusXFail:
		c.Skipped = p
	case StatusFail:
		p.Type = failType
		c.Failure = p
	case StatusSkip:
		c.Skipped = p
	default: // StatusError and anything unknown
		p.Type = "error"
		if text == "" {
			p.Message = "status " + string(st)
		}
		c.Error = p
	}
	return c
}

// caseText is the full explanation of a case's outcome.
func caseText(c *Case) string {
	if c.Message != "" {
		return c.Message
	}
	var lines []string
	for _, o := range c.Outputs {
		if !o.OK {
			lines = append(lines, o.Report)
		}
	}
	if c.Error != "" {
		lines = append(lines, c.Error)
	}
	return strings.Join(lines, "\n")
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// properties lists the run's and a scenario's reproduction facts; cases
// are the scenario's.
func properties(r *Report, cases []*Case) []junitProperty {
	props := []junitProperty{
		{"tool_version", r.ToolVersion},
		{"compiler", r.Compiler},
		{"seed", strconv.FormatUint(r.Seed, 10)},
	}
	if r.Framework != "" {
		props = append(props, junitProperty{"framework", r.Framework})
	}
	for _, e := range sortedKeys(r.Frameworks) {
		props = append(props, junitProperty{"framework." + e, r.Frameworks[e]})
	}
	for _, u := range r.Unavailable {
		props = append(props, junitProperty{"unavailable." + u.Executor, u.Reason})
	}
	seeds := map[string]string{}
	tols := map[string]string{}
	for _, c := range cases {
		seeds["seed."+c.Function+"/b"+itoa(c.Batch)] = strconv.FormatUint(c.Seed, 10)
		for _, o := range c.Outputs {
			if o.Tolerance != nil {
				text := fmt.Sprintf("rtol=%g atol=%g", o.Tolerance.RTol, o.Tolerance.ATol)
				if o.Tolerance.NoAbsRel {
					text = ""
				}
				if o.Tolerance.ULP != nil {
					text = strings.TrimSpace(text + fmt.Sprintf(" ulp=%d", *o.Tolerance.ULP))
				}
				tols["tolerance."+c.Function+"."+o.Name] = text
			}
		}
	}
	for _, m := range []map[string]string{seeds, tols} {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			props = append(props, junitProperty{k, m[k]})
		}
	}
	return props
}

func nonNegative(d float64) float64 {
	if math.IsNaN(d) || d < 0 {
		return 0
	}
	return d
}

// junitTime formats seconds as a plain decimal with millisecond precision:
// no exponent, no unit; negative, NaN and infinite durations become 0.000.
func junitTime(d float64) string {
	d = nonNegative(d)
	if math.IsInf(d, 0) {
		d = 0
	}
	return strconv.FormatFloat(d, 'f', 3, 64)
}

// sortedKeys returns m's keys in order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
