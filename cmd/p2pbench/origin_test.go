package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A real 2× H200 run whose verdict an earlier build wrote: FAIL on CRC-data
// errors at a rate over the run, which the build of DCGM's minute warns of.
const failedByAnEarlierBuild = "../../testdata/reference/h200x2/2026-11-26-ag/all1.json.gz"

// pageOne is what a Markdown report of in says before its first table.
func pageOne(t *testing.T, in string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "r.md")
	if _, stderr, status := p2pbench(t, "report", in, "-o", out); status != exitOK {
		t.Fatalf("report %s: %d %s", in, status, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page, _, _ := strings.Cut(string(b), "\n|")
	return page
}

// TestReportOfAnotherBuildsVerdict: a report gives this build's answer. A
// file whose verdict by the expectation table another build wrote is
// judged again, page 1 saying what the file's own said and that an earlier
// build wrote it; a verdict by a spec the report does not have is shown as
// it is, page 1 naming its build and the command that gives this build's;
// a verdict of this build gets no such line; check -o names its build.
func TestReportOfAnotherBuildsVerdict(t *testing.T) {
	t.Parallel()
	if v := readResults(t, failedByAnEarlierBuild).Verdict; v == nil || v.Build != "" || v.Status.Label() != "FAIL" {
		t.Fatalf("the reference run is no longer an earlier build's FAIL: %+v", v)
	}
	page := pageOne(t, failedByAnEarlierBuild)
	for _, want := range []string{
		"## Verdict: **WARN**",
		"Judged again by this build (" + version + "): the file's own verdict, written by an earlier build, said FAIL.",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page 1 of the earlier build's FAIL lacks %q:\n%s", want, page)
		}
	}

	// The sample's verdict is this build's, by a spec: nothing to say.
	in, _ := sampleRun(t)
	if page := pageOne(t, in); strings.Contains(page, "build") {
		t.Errorf("page 1 of this build's verdict names a build:\n%s", page)
	}
	judged := filepath.Join(t.TempDir(), "judged.json")
	if _, stderr, status := p2pbench(t, "check", in, "-o", judged); status != exitOK {
		t.Fatalf("check: %d %s", status, stderr)
	}
	if b := readResults(t, judged).Verdict.Build; b != version {
		t.Errorf("check -o wrote its verdict's build as %q, want %q", b, version)
	}

	// The same verdict by another build: shown as it is, its build named.
	run := readResults(t, in)
	run.Verdict.Build = "0123abc"
	other := writeRun(t, t.TempDir(), "other.json", run)
	page = pageOne(t, other)
	want := "This verdict was written by build 0123abc, not this one (" + version + "): p2pbench check " + other +
		" --expect " + run.Verdict.Expectations.File + " -o judged.json, then a report of judged.json, gives this build's."
	if !strings.Contains(page, want) {
		t.Errorf("page 1 of another build's verdict by a spec lacks %q:\n%s", want, page)
	}
	if strings.Contains(page, "Judged again by") {
		t.Errorf("a verdict by a spec the report does not have was judged again:\n%s", page)
	}
}
