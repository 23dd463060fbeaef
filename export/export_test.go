package export_test

import (
	"bytes"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/p2pbench/p2pbench/export"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
	"github.com/p2pbench/p2pbench/verdict"
)

// judged is a synthetic 4-GPU run with the problems a report should find,
// judged by the expectation table, its GPUs given serials.
func judged(t *testing.T, faults bool) *results.Run {
	t.Helper()
	run := resultstest.New(resultstest.Options{GPUs: 4, Faults: faults, NoSweep: true})
	for i := range run.Environment.Devices {
		run.Environment.Devices[i].Serial = "16549230000" + string(rune('0'+i))
	}
	v, err := verdict.Judge(run, verdict.Model(run))
	if err != nil {
		t.Fatal(err)
	}
	run.Verdict = v
	return run
}

// The JUnit document as CI systems read it.
type suites struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   *int   `xml:"errors,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Cases    []struct {
			Name      string    `xml:"name,attr"`
			Classname string    `xml:"classname,attr"`
			Failure   *struct{} `xml:"failure"`
			Skipped   *struct{} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestJUnit(t *testing.T) {
	for _, faults := range []bool{false, true} {
		for _, strict := range []bool{false, true} {
			run := judged(t, faults)
			var b bytes.Buffer
			if err := export.WriteJUnit(&b, run, strict); err != nil {
				t.Fatal(err)
			}
			var s suites
			if err := xml.Unmarshal(b.Bytes(), &s); err != nil {
				t.Fatalf("not XML: %v", err)
			}
			// One test case per check and per judged figure.
			if len(s.Suites) != 2 || len(s.Suites[0].Cases) != len(run.Verdict.Checks) || len(s.Suites[1].Cases) != len(run.Verdict.Figures) {
				t.Fatalf("faults %v: %d suites, want the checks' and the figures'", faults, len(s.Suites))
			}
			want := 0
			for _, c := range run.Verdict.Checks {
				if c.Status == results.StatusFail || (strict && c.Status == results.StatusWarn) {
					want++
				}
			}
			for _, fv := range run.Verdict.Figures {
				if fv.Status == results.StatusFail || (strict && fv.Status == results.StatusWarn) {
					want++
				}
			}
			failures, tests := 0, 0
			for _, su := range s.Suites {
				n := 0
				for _, c := range su.Cases {
					if c.Name == "" || c.Classname == "" {
						t.Errorf("a test case without a name or class: %+v", c)
					}
					if c.Failure != nil {
						n++
					}
				}
				if su.Name == "" || su.Errors == nil || su.Tests != len(su.Cases) || su.Failures != n {
					t.Errorf("suite %q: tests %d, failures %d, errors %v; has %d cases, %d failing", su.Name, su.Tests, su.Failures, su.Errors, len(su.Cases), n)
				}
				failures, tests = failures+n, tests+su.Tests
			}
			if failures != want || s.Failures != want || s.Tests != tests {
				t.Errorf("faults %v strict %v: %d failures (%d said), want %d", faults, strict, failures, s.Failures, want)
			}
			if faults && want == 0 {
				t.Error("a run with faults fails nothing")
			}
			if !faults && !strict && want != 0 {
				t.Errorf("a healthy run fails %d", want)
			}
			if !strings.Contains(b.String(), `name="gpu0_serial" value="165492300000"`) {
				t.Error("the GPUs' serials are not among the properties")
			}
			validate(t, b.Bytes())
		}
	}
	if err := export.WriteJUnit(new(bytes.Buffer), resultstest.New(resultstest.Options{GPUs: 2}), false); err == nil {
		t.Error("a run without a verdict wrote JUnit")
	}
}

// validate checks a JUnit document against the schema Jenkins' xUnit
// plugin reads (junit-10.xsd), with xmllint (Debian's libxml2-utils), when
// P2PBENCH_JUNIT_XSD names the schema file; .ci/run sets it where it has
// one.
func validate(t *testing.T, doc []byte) {
	t.Helper()
	xsd := os.Getenv("P2PBENCH_JUNIT_XSD")
	if xsd == "" {
		t.Log("P2PBENCH_JUNIT_XSD unset: JUnit not validated against junit-10.xsd")
		return
	}
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Fatalf("P2PBENCH_JUNIT_XSD is set but xmllint is missing (apt-get install libxml2-utils)")
	}
	f := filepath.Join(t.TempDir(), "junit.xml")
	if err := os.WriteFile(f, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(xmllint, "--noout", "--schema", xsd, f).CombinedOutput(); err != nil {
		t.Errorf("the JUnit XML does not validate against %s: %v\n%s", xsd, err, out)
	}
}

func TestPrometheus(t *testing.T) {
	run := judged(t, true)
	var b bytes.Buffer
	if err := export.WritePrometheus(&b, run); err != nil {
		t.Fatal(err)
	}
	// The linter promtool check metrics runs.
	problems, err := promlint.New(bytes.NewReader(b.Bytes())).Lint()
	if err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v\n%s", err, problems, b.String())
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for name := range fams {
		if !strings.HasPrefix(name, "p2pbench_") || !model.LegacyValidation.IsValidMetricName(name) {
			t.Errorf("metric %s", name)
		}
	}
	v := fams["p2pbench_verdict"]
	on := ""
	for _, m := range v.GetMetric() {
		if m.GetGauge().GetValue() == 1 {
			for _, l := range m.GetLabel() {
				if l.GetName() == "status" {
					on += l.GetValue()
				}
			}
		}
	}
	if on != string(run.Verdict.Status) {
		t.Errorf("the verdict metric says %q, the run %q", on, run.Verdict.Status)
	}
	bw := fams["p2pbench_headline_bandwidth_bytes_per_second"]
	if len(bw.GetMetric()) == 0 {
		t.Fatal("no headline figures")
	}
	for _, m := range bw.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if !strings.HasPrefix(labels["src_serial"], "16549230000") || !strings.HasPrefix(labels["dst_serial"], "16549230000") {
			t.Errorf("a headline figure not labelled by the GPUs' serials: %v", labels)
		}
		if g := m.GetGauge().GetValue(); g < 1e9 {
			t.Errorf("%v: %g bytes a second", labels, g)
		}
	}
	promtool(t, b.Bytes())
}

// promtool runs Prometheus' own checker (Debian's prometheus package) on
// the metrics, where it is installed; .ci/run installs it.
func promtool(t *testing.T, metrics []byte) {
	t.Helper()
	tool, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("promtool not installed: checked by promlint only")
		return
	}
	cmd := exec.Command(tool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(metrics)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// A 72-GPU machine's headline figures are written by GPU, not by pair: its
// series stay near a thousand (audit N26: 21,613 series for one node), the
// lowest of each GPU's figures as its value, and the output lints.
func TestPrometheusOfManyGPUs(t *testing.T) {
	run := resultstest.New(resultstest.Default(72))
	v, err := verdict.Judge(run, verdict.Model(run))
	if err != nil {
		t.Fatal(err)
	}
	run.Verdict = v
	var b bytes.Buffer
	if err := export.WritePrometheus(&b, run); err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	series := 0
	for _, f := range fams {
		series += len(f.GetMetric())
	}
	if series > 2000 {
		t.Errorf("%d series for one node, want at most 2000", series)
	}
	if _, ok := fams["p2pbench_headline_bandwidth_bytes_per_second"]; ok {
		t.Error("figures by pair on 72 GPUs")
	}
	low := fams["p2pbench_headline_bandwidth_min_bytes_per_second"]
	if n := len(low.GetMetric()); n < 72 {
		t.Errorf("%d lowest figures, want one per GPU and figure at least", n)
	}
	if problems, err := promlint.New(bytes.NewReader(b.Bytes())).Lint(); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", err, problems)
	}
	promtool(t, b.Bytes())
	t.Logf("%d series", series)
}
