package results

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseTests(t *testing.T) {
	all, err := ParseTests("all", CommandBW)
	if err != nil || len(all) != len(SelectNames(CommandBW)) {
		t.Fatalf("all = %v, %v", all, err)
	}
	if _, err := ParseTests("ce_read,bogus", CommandBW); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("unknown test accepted: %v", err)
	}
	if _, err := ParseTests("lat_chase", CommandBW); err == nil {
		t.Error("a latency test was accepted by bw")
	}
	got, _ := ParseTests("sm_write, ce_read,sm_write", "")
	if !slices.Equal(got, []Test{SMWrite, CERead}) {
		t.Errorf("got %v, want the list's order, each once", got)
	}
	got, _ = ParseTests("lat_copy", CommandLat)
	if !slices.Equal(got, []Test{LatCopyDevice, LatCopyHost, LatCopyB2B}) {
		t.Errorf("lat_copy selects %v", got)
	}
}

// TestShapes keeps the catalogue's shapes whole, since the engine, the plan
// and the estimate run a test as its shape says: every bandwidth copy test
// has one, an SM test is shaped for the SM copy kernel (a test named SM but
// shaped for the copy engine would run as a copy-engine copy under an SM
// name), and the shape agrees with the entry's other flags.
func TestShapes(t *testing.T) {
	ends := []Ends{EndsPair, EndsLocal, EndsHostToDevice, EndsDeviceToHost, EndsHostBothWays, EndsIntoOne, EndsOutOfOne, EndsAllPairs}
	for _, info := range Catalogue() {
		sh := info.Shape
		if info.SameProcess != "" {
			if sh != (Shape{}) {
				t.Errorf("%s: a test across processes copies in its twin's shape; it has one of its own", info.Name)
			}
			sh = info.SameProcess.Info().Shape
		}
		if info.Command == CommandBW && !sh.IsCopy() {
			t.Errorf("%s: a bandwidth test without a shape (engine, ends)", info.Name)
		}
		if !sh.IsCopy() {
			if sh != (Shape{}) {
				t.Errorf("%s: a shape without an engine: %+v", info.Name, sh)
			}
			continue
		}
		namedSM := strings.Contains(" "+info.Short+" ", " SM ")
		if isSM := sh.Engine == EngineSM; namedSM != isSM {
			t.Errorf("%s (%q): named SM %v, shaped for engine %s", info.Name, info.Short, namedSM, sh.Engine)
		}
		if sh.Kernel != "" && sh.Engine != EngineSM {
			t.Errorf("%s: kernel %q on engine %s: only SM tests name their kernel", info.Name, sh.Kernel, sh.Engine)
		}
		if !slices.Contains([]Engine{EngineCopy, EngineSM, EngineStaged}, sh.Engine) {
			t.Errorf("%s: engine %q is not one a copy test runs on", info.Name, sh.Engine)
		}
		if !slices.Contains(ends, sh.Ends) {
			t.Errorf("%s: unknown ends %q", info.Name, sh.Ends)
		}
		if !slices.Contains([]Direction{"", DirRead, DirWrite}, sh.Direction) || (info.BothWays && sh.Direction != "") {
			t.Errorf("%s: direction %q (both ways: %v)", info.Name, sh.Direction, info.BothWays)
		}
		if (sh.Ends == EndsHostBothWays) != (info.BothWays && sh.Ends != EndsPair) {
			t.Errorf("%s: ends %s, both ways %v", info.Name, sh.Ends, info.BothWays)
		}
		if between := slices.Contains([]Ends{EndsPair, EndsIntoOne, EndsOutOfOne, EndsAllPairs}, sh.Ends); info.SameProcess == "" && between != info.NeedsPair {
			t.Errorf("%s: ends %s, needs a pair %v", info.Name, sh.Ends, info.NeedsPair)
		}
		if sh.NeedsPeer && sh.Ends != EndsPair {
			t.Errorf("%s: needs peer access but copies between %s", info.Name, sh.Ends)
		}
		if sh.AllDevices && !slices.Contains([]Ends{EndsHostToDevice, EndsDeviceToHost, EndsHostBothWays}, sh.Ends) {
			t.Errorf("%s: every device at once is a host test's shape, not %s's", info.Name, sh.Ends)
		}
		if info.Command == CommandBW && info.Matrix != (sh.Ends == EndsPair) {
			t.Errorf("%s: a matrix test %v, ends %s", info.Name, info.Matrix, sh.Ends)
		}
	}
	// One pair test of the run's kernel for each engine and direction with
	// peer access, which the plan takes to stand for a group of one pair.
	for _, e := range []Engine{EngineCopy, EngineSM} {
		for _, d := range []Direction{DirRead, DirWrite, ""} {
			var n []Test
			for _, info := range Catalogue() {
				if sh := info.Shape; info.Command == CommandBW && sh.Ends == EndsPair && sh.NeedsPeer && sh.Kernel == "" && sh.Engine == e && sh.Direction == d {
					n = append(n, info.Name)
				}
			}
			if got, ok := PairTest(e, d); len(n) != 1 || !ok || got != n[0] {
				t.Errorf("pair tests of engine %s, direction %q: %v; PairTest gives %s", e, d, n, got)
			}
		}
	}
}

// TestUnheldPullsConvention: ce_read's convention names the size below which
// its pulls are queued as issued, as UnheldPullBelow sets it.
func TestUnheldPullsConvention(t *testing.T) {
	c := (&Run{}).Convention(CERead)
	if want := "below " + FormatBytes(UnheldPullBelow) + " (queue=" + QueueUnheld; !strings.Contains(c, want) {
		t.Errorf("ce_read's convention lacks %q: %s", want, c)
	}
}

// TestConventionsStateTheMethod: the numbers the conventions give of the
// timing method are its constants' (package measure times by them), for
// every test whose convention describes that part of the method, and no
// other number stands where they go (issue 39: "20 ms" where the method
// used 10).
func TestConventionsStateTheMethod(t *testing.T) {
	words := map[string][]string{
		cvSteady:       {fmt.Sprintf("(at least %d)", MinSteadyReps)},
		cvPlainWindow:  {"where the window holds " + ms(PlainWindow) + " of copies or more"},
		cvFewSamples:   {"copies take " + ms(LongSample) + " or more", fmt.Sprintf("takes 1/%d of the samples asked", FewSamplesDivisor)},
		cvWindow:       {fmt.Sprintf("after up to %d untimed ones where a copy takes under %s", MaxWarmup, ms(NoWarmupFrom))},
		cvInKernelReps: {"SM copies of " + FormatBytes(InKernelRepsFrom) + " and more (in_kernel_reps = true"},
		cvPingSample:   {fmt.Sprintf("the mean of %d round trips", PingRoundTrips)},
		cvPingSlots:    {fmt.Sprintf("each of %d flag slots", PingFlagSlots)},
	}
	n := map[string]int{}
	for _, info := range Catalogue() {
		c := (&Run{}).Convention(info.Name)
		for id, ws := range words {
			if !slices.Contains(info.Conventions, id) {
				continue
			}
			n[id]++
			for _, w := range ws {
				if !strings.Contains(c, w) {
					t.Errorf("%s: the convention lacks %q: %s", info.Name, w, c)
				}
			}
		}
	}
	if n[cvSteady] < 10 || n[cvWindow] < 2 || n[cvInKernelReps] < 5 || n[cvPingSlots] != 2 {
		t.Errorf("tests with each part of the method: %v", n)
	}
}

// TestConventionsOneSentenceEach: every convention is one clause (no "; "
// outside brackets, no full stop within), with the day it took effect, a
// day of p2pbench's history; every test of the catalogue names some, every
// convention is named by a test or replaced by one that is, and SCHEMA.md
// lists them as the table says them.
func TestConventionsOneSentenceEach(t *testing.T) {
	named := map[string]bool{}
	for _, info := range Catalogue() {
		if len(info.Conventions) == 0 || info.Convention != "" {
			t.Errorf("%s: conventions %q, words %q: want references only", info.Name, info.Conventions, info.Convention)
		}
		for _, id := range info.Conventions {
			named[id] = true
		}
	}
	var rows strings.Builder
	for _, c := range conventions {
		if d, err := time.Parse(time.DateOnly, c.Since); err != nil || d.Before(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("%s: since %q, want a day of p2pbench's history", c.ID, c.Since)
		}
		depth := 0
		for i, r := range c.Text {
			switch {
			case r == '(' || r == '[':
				depth++
			case r == ')' || r == ']':
				depth--
			case depth == 0 && (strings.HasPrefix(c.Text[i:], "; ") || strings.HasPrefix(c.Text[i:], ". ")):
				t.Errorf("%s: more than one clause: %s", c.ID, c.Text)
			}
		}
		if by := replacedBy[c.ID]; named[c.ID] == (by != "") || by != "" && !named[by] {
			t.Errorf("%s: named by a test %v, replaced by %q: want a convention some test names, or one replaced by such a one and named by none", c.ID, named[c.ID], by)
		}
		fmt.Fprintf(&rows, "| `%s` | %s | %s |\n", c.ID, c.Since, c.Text)
	}
	doc, err := os.ReadFile("SCHEMA.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), rows.String()) {
		t.Errorf("SCHEMA.md does not list the conventions as the table says them; its rows are:\n%s", rows.String())
	}
}

// A file whose conventions say the plain window was 20 ms, where its own
// host copies show its build timed by 10 ms, is read with the words
// corrected and saying so; a file whose host copies fit the 20 ms rule
// keeps them (issue 39).
func TestOldPlainWindowWords(t *testing.T) {
	run, err := Read("../testdata/reference/h200x2/2026-11-26-ag/all1.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(run.Catalogue[CERead].Convention, oldPlainWindowWords) {
		t.Fatal("the reference's recorded words changed: pick a file of the builds that said 20 ms")
	}
	c := run.Convention(CERead)
	if strings.Contains(c, oldPlainWindowWords) || !strings.Contains(c, "where the window holds 10 ms of copies or more (this file's words said 20 ms") {
		t.Errorf("the convention of a 10 ms build is not corrected: %s", c)
	}
	// The same words with host copies of four 512 MiB copies a window
	// (38 ms), as the 20 ms rule timed them: left as they are.
	for i := range run.Figures {
		if f := &run.Figures[i]; (f.Test == H2D || f.Test == D2H) && f.Params["short_reps_per_sample"] == "" {
			f.Params["reps_per_sample"] = "4"
		}
	}
	if c := run.Convention(CERead); !strings.Contains(c, oldPlainWindowWords) || strings.Contains(c, "this file's words said") {
		t.Errorf("the convention of a 20 ms build is changed: %s", c)
	}
}
