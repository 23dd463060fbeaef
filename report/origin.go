package report

import (
	"fmt"
	"regexp"
	"unicode/utf8"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/verdict"
)

// Origin is where the verdict a report shows comes from, for a file whose
// verdict another build wrote: the rules change from build to build (the
// NVLink CRC rate over DCGM's minute replaced a rate over the run, which
// failed healthy machines), so a report says which build's answer it
// gives.
type Origin struct {
	// Build is the build making the report (p2pbench's version).
	Build string
	// File is the results file as given, for the command that judges it
	// again.
	File string
	// Was is the file's own verdict where the report's run holds this
	// build's in its place (judged again by the same expectation table);
	// nil where the run's verdict is the file's.
	Was *results.Verdict
}

// SayOrigin adds to page 1, beneath the machine's facts, one line on
// where run's verdict comes from when it is not this build's own judgement
// of the file: judged again, what the file's own said and which build
// wrote it; not judged again (a spec or baseline the report does not
// have), which build wrote it and the command that gives this build's.
// A verdict of this build, or a document without a verdict page, gets
// nothing.
func (d *Document) SayOrigin(run *results.Run, o Origin) {
	line := originLine(run.Verdict, o)
	if line == "" {
		return
	}
	for i, b := range d.blocks {
		if b.kind != verdictBlock {
			continue
		}
		if i+1 < len(d.blocks) && d.blocks[i+1].kind == paraBlock && d.blocks[i+1].small {
			d.blocks[i+1].text += "\n" + line
		} else {
			d.blocks = append(d.blocks[:i+1], append([]block{{kind: paraBlock, text: line, small: true}}, d.blocks[i+1:]...)...)
		}
		return
	}
}

// originLine is SayOrigin's line, "" where v is this build's.
func originLine(v *results.Verdict, o Origin) string {
	if v == nil {
		return ""
	}
	if was := o.Was; was != nil {
		too := ""
		if was.Status == v.Status {
			too = " too"
		}
		return fmt.Sprintf("Judged again by this build (%s): the file's own verdict, written by %s, said %s%s.",
			o.Build, BuildName(was.Build), was.Status.Label(), too)
	}
	if v.Build == o.Build {
		return ""
	}
	again := ""
	switch v.Expectations.Kind {
	case results.ExpectSpec:
		again = " --expect " + shellWord(v.Expectations.File, "SPEC")
	case results.ExpectBaseline:
		again = " --baseline " + shellWord(v.Expectations.File, "BASELINE")
	}
	return fmt.Sprintf("This verdict was written by %s, not this one (%s): p2pbench check %s%s -o judged.json, then a report of judged.json, gives this build's.",
		BuildName(v.Build), o.Build, shellWord(o.File, "FILE"), again)
}

// BuildName names the build that wrote a verdict: "build 825f14f", or an
// earlier build where the file names none (builds before verdicts
// recorded theirs).
func BuildName(build string) string {
	if build == "" {
		return "an earlier build"
	}
	return "build " + build
}

// plainWord is a word a shell reads as it is; unquotable what single
// quotes cannot carry or no command line should (a control character).
var (
	plainWord  = regexp.MustCompile(`^[A-Za-z0-9._/+=:@%-]{1,200}$`)
	unquotable = regexp.MustCompile(`[\x00-\x1f\x7f']`)
)

// shellWord is s for a command line to copy: as it is where a shell reads
// it so, else single-quoted; placeholder where s is empty or holds what
// no command line should carry (a control character, from a file).
func shellWord(s, placeholder string) string {
	switch {
	case plainWord.MatchString(s):
		return s
	case s == "" || len(s) > 200 || !utf8.ValidString(s) || unquotable.MatchString(s):
		return placeholder
	}
	return "'" + s + "'"
}

// Judged is the report of run (the whole report with full), read from the
// file o.File. A run without a verdict, or with another build's verdict by
// the expectation table, is judged by this build (o.Build) for the report,
// the file left as it is.
func Judged(run *results.Run, o Origin, full bool) (*Document, error) {
	switch v := run.Verdict; {
	case v == nil:
		// A run measured before verdicts existed (or by bw, lat, atomic):
		// judged by the model for the report.
		if err := verdict.Record(run, nil, o.Build); err != nil {
			return nil, err
		}
	case v.Build != o.Build && v.Expectations.Kind == results.ExpectModel:
		// Another build's verdict by the expectation table: this build
		// judges the run again by its own table, so that the report gives
		// its answer (an earlier build's rules may have been wrong), and
		// page 1 says what the file's own said. A spec or baseline the
		// report does not have: page 1 says how to judge it again.
		o.Was = v
		if err := verdict.Record(run, nil, o.Build); err != nil {
			return nil, err
		}
	}
	doc := Report(run)
	if full {
		doc = Full(run)
	}
	doc.SayOrigin(run, o)
	return doc, nil
}
