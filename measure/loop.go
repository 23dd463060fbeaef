package measure

import (
	"context"
	"fmt"
	"time"
)

// Step is one step of a run's rounds: a name for progress and traces, and
// the work.
type Step struct {
	Name string
	Run  func(ctx context.Context)
}

// Loop is the round loop of a run, in one process (bench) and across
// processes (ipc) alike: the steps that run once, then every round's steps
// round after round, so each figure's samples are spread over the run, with
// what a process keeps for its life renewed before every round but the
// first (the replicate design: Renewal, DefaultRenewal).
type Loop struct {
	Rounds int
	// SetRound is told the round about to run (from 0), before its renewal.
	SetRound func(round int)
	// Renew renews what the run's renewal names, before rounds 1 and on.
	Renew func(round int)
	// BeforeStep runs before every step (a fresh start for the NVLink
	// counter windows, say).
	BeforeStep func()
	// AfterStep runs after every step (the watch for other processes and
	// throttling); an error ends the loop.
	AfterStep func() error
	// Progress is told each step as it starts, and the end.
	Progress func(done, total int, step string)
	// Trace, when set, is told how long each step, renewal and the
	// AfterSteps together took.
	Trace func(step string, took time.Duration)
}

// Run runs once, then each in every round. each is asked for a round's
// steps when the round starts (after SetRound), and once before anything
// runs, for the progress's total (the steps may follow what once found).
func (l Loop) Run(ctx context.Context, once []Step, each func() []Step) error {
	rounds := max(1, l.Rounds)
	total := len(once) + rounds*len(each())
	done := 0
	var after time.Duration
	run := func(steps []Step, suffix string) error {
		for _, st := range steps {
			if err := ctx.Err(); err != nil {
				return err
			}
			if l.Progress != nil {
				l.Progress(done, total, st.Name+suffix)
			}
			if l.BeforeStep != nil {
				l.BeforeStep()
			}
			t0 := time.Now()
			st.Run(ctx)
			l.trace(st.Name+suffix, time.Since(t0))
			done++
			if l.AfterStep != nil {
				t1 := time.Now()
				err := l.AfterStep()
				after += time.Since(t1)
				if err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := run(once, ""); err != nil {
		return err
	}
	for round := range rounds {
		if l.SetRound != nil {
			l.SetRound(round)
		}
		if round > 0 && l.Renew != nil {
			t0 := time.Now()
			l.Renew(round)
			l.trace("renewing", time.Since(t0))
		}
		steps := each()
		if round == 0 {
			total = len(once) + rounds*len(steps)
		}
		suffix := ""
		if rounds > 1 {
			suffix = fmt.Sprintf(" (round %d of %d)", round+1, rounds)
		}
		if err := run(steps, suffix); err != nil {
			return err
		}
	}
	if l.AfterStep != nil {
		l.trace(fmt.Sprintf("watching the GPUs between the %d steps (other processes, throttling)", done), after)
	}
	if l.Progress != nil {
		l.Progress(total, total, "done")
	}
	return ctx.Err()
}

func (l Loop) trace(step string, took time.Duration) {
	if l.Trace != nil {
		l.Trace(step, took)
	}
}
