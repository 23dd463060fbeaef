package export

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/p2pbench/p2pbench/results"
)

// The JUnit XML elements p2pbench writes: the subset of the dialect that
// Jenkins (its JUnit and xUnit plugins, schema junit-10.xsd) and GitLab
// read.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Time     string       `xml:"time,attr,omitempty"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name       string          `xml:"name,attr"`
		Tests      int             `xml:"tests,attr"`
		Failures   int             `xml:"failures,attr"`
		Errors     int             `xml:"errors,attr"`
		Skipped    int             `xml:"skipped,attr"`
		Time       string          `xml:"time,attr,omitempty"`
		Timestamp  string          `xml:"timestamp,attr,omitempty"`
		Hostname   string          `xml:"hostname,attr,omitempty"`
		Properties *junitProps     `xml:"properties,omitempty"`
		Cases      []junitTestCase `xml:"testcase"`
	}
	junitProps struct {
		Props []junitProp `xml:"property"`
	}
	junitProp struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	junitTestCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      string        `xml:"time,attr"`
		Skipped   *junitMessage `xml:"skipped,omitempty"`
		Failure   *junitMessage `xml:"failure,omitempty"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	junitMessage struct {
		Type    string `xml:"type,attr,omitempty"`
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	}
)

// WriteJUnit writes run's verdict as JUnit XML: a test suite of the
// verdict's checks and one of its judged figures. A FAIL is a failure; a
// WARN is a failure when strict (as p2pbench check --strict fails on it),
// else a passing test case that says WARN in its output; a check that had
// nothing to judge by is skipped. A run without a verdict is an error.
func WriteJUnit(w io.Writer, run *results.Run, strict bool) error {
	v := run.Verdict
	if v == nil {
		return fmt.Errorf("the run has no verdict to write as JUnit XML")
	}
	host := run.Host
	if host == "" {
		host = "unknown host"
	}
	elapsed := ""
	if !run.Start.IsZero() && run.End.After(run.Start) {
		elapsed = strconv.FormatFloat(run.End.Sub(run.Start).Seconds(), 'f', 3, 64)
	}
	stamp := ""
	if !run.Start.IsZero() {
		stamp = run.Start.UTC().Format("2006-01-02T15:04:05")
	}
	what := "p2pbench"
	if run.Simulated {
		what += " (SIMULATED)"
	}
	checks := junitSuite{Name: what + " checks", Hostname: host, Timestamp: stamp, Time: elapsed, Properties: properties(run)}
	for _, c := range v.Checks {
		tc := junitTestCase{Name: c.Title, Classname: "p2pbench.check." + c.Name, Time: "0"}
		detail := make([]string, 0, len(c.Items))
		for _, it := range c.Items {
			detail = append(detail, it.Status.Label()+": "+it.Subject+": "+it.Message)
		}
		judge(&checks, &tc, c.Status, c.Summary, strings.Join(detail, "\n"), strict)
		checks.Cases = append(checks.Cases, tc)
	}
	figures := junitSuite{Name: what + " figures", Hostname: host, Timestamp: stamp}
	names := make(map[string]string, len(run.Figures))
	for i := range run.Figures {
		names[run.Figures[i].Key()] = results.FigureName(&run.Figures[i])
	}
	for _, fv := range v.Figures {
		name := names[fv.Key]
		if name == "" {
			name = fv.Key
		}
		test, _, _ := strings.Cut(fv.Key, "|")
		tc := junitTestCase{Name: name, Classname: "p2pbench.figure." + test, Time: "0"}
		judge(&figures, &tc, fv.Status, fv.Reason, "", strict)
		figures.Cases = append(figures.Cases, tc)
	}
	all := junitSuites{Name: what + ": " + host, Time: elapsed, Suites: []junitSuite{checks}}
	if len(figures.Cases) > 0 {
		all.Suites = append(all.Suites, figures)
	}
	for _, s := range all.Suites {
		all.Tests += s.Tests
		all.Failures += s.Failures
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// judge sets a test case's outcome from a status and counts it in s.
func judge(s *junitSuite, tc *junitTestCase, st results.Status, summary, detail string, strict bool) {
	s.Tests++
	out := st.Label() + ": " + summary
	if detail != "" {
		out += "\n" + detail
	}
	switch {
	case st == results.StatusFail || (st == results.StatusWarn && strict):
		s.Failures++
		tc.Failure = &junitMessage{Type: st.Label(), Message: summary, Text: detail}
	case st == results.StatusNotJudged:
		s.Skipped++
		tc.Skipped = &junitMessage{Message: summary}
	default:
		tc.SystemOut = out
	}
}

// properties are the run's identity, for the checks' suite.
func properties(run *results.Run) *junitProps {
	p := &junitProps{}
	add := func(name, value string) {
		if value != "" {
			p.Props = append(p.Props, junitProp{Name: name, Value: value})
		}
	}
	add("verdict", run.Verdict.Status.Label())
	add("expectations", run.Verdict.Expectations.Name)
	add("tool", strings.TrimSpace(run.Tool.Name+" "+run.Tool.Version))
	add("simulated", strconv.FormatBool(run.Simulated))
	add("gpus", run.GPUSummary())
	add("driver", run.Environment.DriverRelease)
	add("cuda", run.Environment.CUDAVersion)
	if s := run.Environment.System; s != nil {
		add("system", strings.TrimSpace(s.Vendor+" "+s.Product))
		add("system_serial", s.Serial)
	}
	for _, d := range run.Environment.Devices {
		add(fmt.Sprintf("gpu%d_serial", d.Index), d.Serial)
	}
	return p
}
