package measure

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// The loop runs the once steps, then every round's steps round after round,
// renewing before every round but the first, and stops at the first error
// of AfterStep.
func TestLoopRunsRoundsInOrder(t *testing.T) {
	var got []string
	step := func(name string) Step {
		return Step{Name: name, Run: func(context.Context) { got = append(got, name) }}
	}
	round := -1
	var progress []string
	l := Loop{
		Rounds:   3,
		SetRound: func(r int) { round = r; got = append(got, "round") },
		Renew:    func(r int) { got = append(got, "renew") },
		Progress: func(done, total int, s string) {
			if total != 7 {
				t.Errorf("total %d, want 7", total)
			}
			progress = append(progress, s)
		},
	}
	if err := l.Run(context.Background(), []Step{step("tune")}, func() []Step { return []Step{step("a"), step("b")} }); err != nil {
		t.Fatal(err)
	}
	want := "tune round a b round renew a b round renew a b"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("ran %q, want %q", s, want)
	}
	if round != 2 || progress[1] != "a (round 1 of 3)" || progress[len(progress)-1] != "done" {
		t.Errorf("round %d, progress %q", round, progress)
	}

	stop := errors.New("another process")
	n := 0
	l = Loop{Rounds: 2, AfterStep: func() error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	}}
	got = nil
	if err := l.Run(context.Background(), nil, func() []Step { return []Step{step("a"), step("b")} }); !errors.Is(err, stop) {
		t.Errorf("error %v, want the AfterStep's", err)
	}
	if s := strings.Join(got, " "); s != "a b" {
		t.Errorf("ran %q after the error, want a b", s)
	}
}
