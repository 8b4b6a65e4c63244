package reports

import (
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
	root := junitSuites{Name: "rxeq", Time: junitTime(r.Duration)}
	index := map[string]int{}
	suite := func(name string) *junitSuite {
		i, ok := index[name]
		if !ok {
			i = len(root.Suites)
			index[name] = i
			root.Suites = append(root.Suites, junitSuite{Name: name})
		}
		return &root.Suites[i]
	}
	times := map[string]float64{}
	for i := range r.Cases {
		c := &r.Cases[i]
		s := suite(c.Scenario)
		times[c.Scenario] += nonNegative(c.Duration)
		failType := "mismatch"
		if c.Blame != "" {
			failType = "mismatch:" + c.Blame
		}
		s.Cases = append(s.Cases, caseXML(c.Name(), c.Scenario, c.Duration, c.Status, failType, caseText(c)))
	}
	for i := range r.Locks {
		l := &r.Locks[i]
		s := suite(l.Scenario)
		times[l.Scenario] += nonNegative(l.Duration)
		s.Cases = append(s.Cases, caseXML(l.Name(), l.Scenario, l.Duration, l.Status, "lock", l.Message))
	}
	for i := range root.Suites {
		s := &root.Suites[i]
		s.Time = junitTime(times[s.Name])
		s.Properties = properties(r, s.Name)
		for _, c := range s.Cases {
			s.Tests++
			switch {
			case c.Failure != nil:
				s.Failures++
			case c.Error != nil:
				s.Errors++
			case c.Skipped != nil:
				s.Skipped++
			}
		}
		root.Tests += s.Tests
		root.Failures += s.Failures
		root.Errors += s.Errors
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("reports: writing JUnit: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(&root); err != nil {
		return fmt.Errorf("reports: writing JUnit: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
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

// properties lists the run's and a scenario's reproduction facts.
func properties(r *Report, scenario string) []junitProperty {
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
	for _, c := range r.Cases {
		if c.Scenario != scenario {
			continue
		}
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
