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
	var suites junitSuites
	for i := range r.Cases {
		s := suites.suite(r.Cases[i].Scenario)
		s.cases = append(s.cases, i)
		s.addCase(&r.Cases[i])
	}
	for i := range r.Locks {
		s := suites.suite(r.Locks[i].Scenario)
		s.locks = append(s.locks, i)
		s.addLock(&r.Locks[i])
	}
	jw, err := newJUnitWriter(w, r, &suites)
	if err != nil {
		return err
	}
	for _, s := range suites.list {
		if err := jw.startSuite(r, s); err != nil {
			return err
		}
		for _, i := range s.cases {
			if err := jw.testCase(&r.Cases[i]); err != nil {
				return err
			}
		}
		for _, i := range s.locks {
			if err := jw.testLock(&r.Locks[i]); err != nil {
				return err
			}
		}
		if err := jw.endSuite(); err != nil {
			return err
		}
	}
	return jw.finish()
}

// junitSuites gathers the suites of a JUnit report, one per scenario in
// order of first appearance, case by case and lock by lock.
type junitSuites struct {
	list  []*suiteStats
	index map[string]*suiteStats
}

// suite returns the suite of scenario name, added at the end if new.
func (ss *junitSuites) suite(name string) *suiteStats {
	s, ok := ss.index[name]
	if !ok {
		if ss.index == nil {
			ss.index = map[string]*suiteStats{}
		}
		s = &suiteStats{name: name, seeds: map[string]string{}, tols: map[string]string{}}
		ss.index[name] = s
		ss.list = append(ss.list, s)
	}
	return s
}

// suiteStats is what a <testsuite> element's attributes and properties
// need, gathered case by case: its counts, its time (the sum of its
// cases' and then its locks' durations, in their order) and its cases'
// seeds and tolerances (the last case's wins). cases and locks are
// WriteJUnit's indexes of them; withCases says it has a case.
type suiteStats struct {
	name         string
	withCases    bool
	n            junitSuite // the counts; no name, time or cases
	time         float64
	seeds, tols  map[string]string
	cases, locks []int
}

// count counts a test case of status st.
func (s *suiteStats) count(st Status) {
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

// addCase counts case c and notes its seed and tolerances.
func (s *suiteStats) addCase(c *Case) {
	s.withCases = true
	s.time += nonNegative(c.Duration)
	s.count(c.Status)
	s.seeds["seed."+c.Function+"/b"+itoa(c.Batch)] = strconv.FormatUint(c.Seed, 10)
	for _, o := range c.Outputs {
		if o.Tolerance != nil {
			text := fmt.Sprintf("rtol=%g atol=%g", o.Tolerance.RTol, o.Tolerance.ATol)
			if o.Tolerance.NoAbsRel {
				text = ""
			}
			if o.Tolerance.ULP != nil {
				text = strings.TrimSpace(text + fmt.Sprintf(" ulp=%d", *o.Tolerance.ULP))
			}
			s.tols["tolerance."+c.Function+"."+o.Name] = text
		}
	}
}

// addLock counts lock l.
func (s *suiteStats) addLock(l *Lock) {
	s.time += nonNegative(l.Duration)
	s.count(l.Status)
}

// junitWriter writes a JUnit document element by element: the root's
// counts first (from the suites, gathered beforehand), then each suite
// with its testcases as they come, so that only one testcase is encoded
// at a time.
type junitWriter struct {
	bw    *bufio.Writer
	enc   *xml.Encoder
	start xml.StartElement
}

// newJUnitWriter writes the XML header and the <testsuites> element of
// run r (its duration) whose suites are ss.
func newJUnitWriter(w io.Writer, r *Report, ss *junitSuites) (*junitWriter, error) {
	tests, failures, errs := 0, 0, 0
	for _, s := range ss.list {
		tests += s.n.Tests
		failures += s.n.Failures
		errs += s.n.Errors
	}
	jw := &junitWriter{bw: bufio.NewWriterSize(w, 64<<10)}
	jw.bw.WriteString(xml.Header)
	jw.enc = xml.NewEncoder(jw.bw)
	jw.enc.Indent("", "  ")
	jw.start = xml.StartElement{Name: xml.Name{Local: "testsuites"}, Attr: []xml.Attr{
		{Name: xml.Name{Local: "name"}, Value: "rxeq"},
		{Name: xml.Name{Local: "tests"}, Value: strconv.Itoa(tests)},
		{Name: xml.Name{Local: "failures"}, Value: strconv.Itoa(failures)},
		{Name: xml.Name{Local: "errors"}, Value: strconv.Itoa(errs)},
		{Name: xml.Name{Local: "time"}, Value: junitTime(r.Duration)},
	}}
	if err := jw.enc.EncodeToken(jw.start); err != nil {
		return nil, fmt.Errorf("reports: writing JUnit: %w", err)
	}
	return jw, nil
}

// startSuite opens the <testsuite> of s, with its properties (r's and
// s's).
func (jw *junitWriter) startSuite(r *Report, s *suiteStats) error {
	attr := func(name, value string) xml.Attr { return xml.Attr{Name: xml.Name{Local: name}, Value: value} }
	start := xml.StartElement{Name: xml.Name{Local: "testsuite"}, Attr: []xml.Attr{
		attr("name", s.name), attr("tests", strconv.Itoa(s.n.Tests)), attr("failures", strconv.Itoa(s.n.Failures)),
		attr("errors", strconv.Itoa(s.n.Errors)), attr("skipped", strconv.Itoa(s.n.Skipped)), attr("time", junitTime(s.time)),
	}}
	if err := jw.enc.EncodeToken(start); err != nil {
		return fmt.Errorf("reports: writing JUnit: %w", err)
	}
	props := struct {
		List []junitProperty `xml:"property"`
	}{properties(r, s.seeds, s.tols)}
	if err := jw.enc.EncodeElement(&props, xml.StartElement{Name: xml.Name{Local: "properties"}}); err != nil {
		return fmt.Errorf("reports: writing JUnit: %w", err)
	}
	return nil
}

// testCase writes the <testcase> of case c.
func (jw *junitWriter) testCase(c *Case) error {
	failType := "mismatch"
	if c.Blame != "" {
		failType = "mismatch:" + c.Blame
	}
	return jw.element(caseXML(c.Name(), c.Scenario, c.Duration, c.Status, failType, caseText(c)))
}

// testLock writes the <testcase> of lock l.
func (jw *junitWriter) testLock(l *Lock) error {
	return jw.element(caseXML(l.Name(), l.Scenario, l.Duration, l.Status, "lock", l.Message))
}

func (jw *junitWriter) element(jc junitCase) error {
	if err := jw.enc.EncodeElement(&jc, xml.StartElement{Name: xml.Name{Local: "testcase"}}); err != nil {
		return fmt.Errorf("reports: writing JUnit: %w", err)
	}
	return nil
}

// endSuite closes the open <testsuite>.
func (jw *junitWriter) endSuite() error {
	if err := jw.enc.EncodeToken(xml.EndElement{Name: xml.Name{Local: "testsuite"}}); err != nil {
		return fmt.Errorf("reports: writing JUnit: %w", err)
	}
	return nil
}

// finish closes the document and flushes it.
func (jw *junitWriter) finish() error {
	if err := jw.enc.EncodeToken(jw.start.End()); err != nil {
		return fmt.Errorf("reports: writing JUnit: %w", err)
	}
	if err := jw.enc.Flush(); err != nil {
		return fmt.Errorf("reports: writing JUnit: %w", err)
	}
	jw.bw.WriteString("\n")
	if err := jw.bw.Flush(); err != nil {
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

// properties lists the run's and a scenario's reproduction facts; seeds
// and tols are the scenario's cases' (suiteStats).
func properties(r *Report, seeds, tols map[string]string) []junitProperty {
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
	for _, m := range []map[string]string{seeds, tols} {
		for _, k := range sortedKeys(m) {
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
