package reports_test

import (
	"bytes"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/reports"
)

// What the test reads back: an independent, minimal view of JUnit XML.
type (
	xSuites struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Errors   int      `xml:"errors,attr"`
		Time     string   `xml:"time,attr"`
		Suites   []xSuite `xml:"testsuite"`
	}
	xSuite struct {
		Name       string  `xml:"name,attr"`
		Tests      int     `xml:"tests,attr"`
		Failures   int     `xml:"failures,attr"`
		Errors     int     `xml:"errors,attr"`
		Skipped    int     `xml:"skipped,attr"`
		Time       string  `xml:"time,attr"`
		Properties []xProp `xml:"properties>property"`
		Cases      []xCase `xml:"testcase"`
	}
	xProp struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	xCase struct {
		Name      string  `xml:"name,attr"`
		Classname string  `xml:"classname,attr"`
		Time      string  `xml:"time,attr"`
		Failure   *xProbl `xml:"failure"`
		Error     *xProbl `xml:"error"`
		Skipped   *xProbl `xml:"skipped"`
	}
	xProbl struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Body    string `xml:",chardata"`
	}
)

var _ = Describe("JUnit", func() {
	var out []byte
	BeforeEach(func() {
		var buf bytes.Buffer
		Expect(reports.WriteJUnit(&buf, sampleReport())).To(Succeed())
		out = buf.Bytes()
	})

	It("validates against the Jenkins xUnit JUnit schema (xmllint)", func() {
		xmllint, err := exec.LookPath("xmllint")
		if err != nil {
			Skip("xmllint is not installed (apt-get install libxml2-utils); CI installs it")
		}
		path := filepath.Join(GinkgoT().TempDir(), "report.xml")
		Expect(os.WriteFile(path, out, 0o644)).To(Succeed())
		cmd := exec.Command(xmllint, "--noout", "--schema", "testdata/junit-10.xsd", path)
		msg, err := cmd.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(msg))
		Expect(string(msg)).To(ContainSubstring("validates"))
	})

	It("has a suite per scenario, a case per function × batch × executor and one per lock", func() {
		var s xSuites
		Expect(xml.Unmarshal(out, &s)).To(Succeed())
		Expect(s.Tests).To(Equal(6))
		Expect(s.Failures).To(Equal(2))
		Expect(s.Errors).To(Equal(1))
		Expect(s.Time).To(Equal("1.500"))
		Expect(s.Suites).To(HaveLen(2))

		ref := s.Suites[0]
		Expect(ref.Name).To(Equal("reference"))
		Expect([]int{ref.Tests, ref.Failures, ref.Errors, ref.Skipped}).To(Equal([]int{3, 1, 0, 0}))
		Expect(ref.Time).To(Equal("0.126")) // 0.125 + 1e-7 + 0.0005, to the millisecond
		names := []string{}
		for _, c := range ref.Cases {
			names = append(names, c.Name)
			Expect(c.Classname).To(Equal("reference"))
		}
		Expect(names).To(Equal([]string{"score_linear/b16/native", "score_linear/b16/fallback", "score_linear/lock"}))
		Expect(ref.Cases[0].Time).To(Equal("0.125"))
		Expect(ref.Cases[0].Failure).To(BeNil())
		Expect(ref.Cases[1].Time).To(Equal("0.000"))
		f := ref.Cases[1].Failure
		Expect(f).NotTo(BeNil())
		Expect(f.Type).To(Equal("mismatch"))
		Expect(f.Message).To(Equal("probs: 1 / 128 mismatched (0.8%); greatest abs diff 4.1e-05 at [12 3] (allowed 1.0e-05) & <more>"))
		Expect(ref.Properties).To(ContainElements(
			xProp{"seed", "42"}, xProp{"compiler", "cc (Debian 12.2.0-14) 12.2.0"}, xProp{"tool_version", "v0.1.0"},
			xProp{"seed.score_linear/b16", "7"}, xProp{"tolerance.score_linear.probs", "rtol=1e-05 atol=1e-06"}))

		errs := s.Suites[1]
		Expect(errs.Name).To(Equal("errors"))
		Expect([]int{errs.Tests, errs.Failures, errs.Errors, errs.Skipped}).To(Equal([]int{3, 1, 1, 1}))
		Expect(errs.Cases[0].Error.Message).To(Equal("the oracle succeeded but the executor failed"))
		Expect(errs.Cases[0].Error.Body).To(Equal("the oracle succeeded but the executor failed\nsecond line"))
		Expect(errs.Cases[1].Skipped.Message).To(Equal("--batch 1"))
		lock := errs.Cases[2]
		Expect(lock.Name).To(Equal("rem_zero/lock"))
		Expect(lock.Failure.Type).To(Equal("lock"))
		Expect(lock.Failure.Message).To(Equal("source lock failed in function rx_rem_zero: //rx:lock-not `rx_tanh\\(` (e.rx:5:2)"))
		Expect(lock.Failure.Body).To(ContainSubstring(">>   20 | rx_tanh(x);"))
	})

	It("writes every time as a plain decimal (the SUREFIRE_TIME pattern)", func() {
		times := regexp.MustCompile(`time="([^"]*)"`).FindAllStringSubmatch(string(out), -1)
		Expect(times).NotTo(BeEmpty())
		plain := regexp.MustCompile(`^[0-9]+\.[0-9]{3}$`)
		for _, t := range times {
			Expect(t[1]).To(MatchRegexp(plain.String()))
		}
	})

	It("writes an empty run", func() {
		var buf bytes.Buffer
		Expect(reports.WriteJUnit(&buf, &reports.Report{Schema: reports.Schema})).To(Succeed())
		var s xSuites
		Expect(xml.Unmarshal(buf.Bytes(), &s)).To(Succeed())
		Expect(s.Tests).To(BeZero())
	})
})
