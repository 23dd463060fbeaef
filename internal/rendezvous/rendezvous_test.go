package rendezvous_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/internal/rendezvous"
)

// freeAddr is a local address with a port nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no TCP: %v", err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

type outcome struct {
	g   *rendezvous.Group
	err error
}

// meet runs the ranks of cfgs at once, each with report "rank N", and
// returns their outcomes by rank. judge is rank 0's.
func meet(t *testing.T, cfgs []rendezvous.Config, judge func([][]byte) error) []outcome {
	t.Helper()
	out := make([]outcome, len(cfgs))
	var wg sync.WaitGroup
	for i, cfg := range cfgs {
		wg.Go(func() {
			g, err := rendezvous.Meet(context.Background(), cfg, []byte(fmt.Sprintf("rank %d", cfg.Rank)), judge)
			out[i] = outcome{g, err}
		})
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, o := range out {
			if o.g != nil {
				o.g.Close()
			}
		}
	})
	return out
}

// The ranks' waits: long where every rank comes (they meet as soon as
// the last arrives: the wait is never reached), short where one never
// comes (the wait is what the test waits for), yet long enough for the
// ranks that come to reach rank 0 on a loaded machine (300 ms was not).
const (
	waitAll     = time.Minute
	waitMissing = 2 * time.Second
)

// ranks configures the ranks present of a launch of size, each waiting
// waitAll, or waitMissing where a rank of the launch is not present.
func ranks(addr string, size int, present ...int) []rendezvous.Config {
	wait := waitAll
	for i, r := range slices.Sorted(slices.Values(present)) {
		if r != i {
			wait = waitMissing
		}
	}
	if len(present) != size {
		wait = waitMissing
	}
	var cfgs []rendezvous.Config
	for _, r := range present {
		cfgs = append(cfgs, rendezvous.Config{Addr: addr, Rank: r, Size: size, Job: "42", Wait: wait})
	}
	return cfgs
}

func TestMeet(t *testing.T) {
	addr := freeAddr(t)
	var seen [][]byte
	out := meet(t, ranks(addr, 4, 3, 1, 0, 2), func(reports [][]byte) error { seen = reports; return nil })
	for _, o := range out {
		if o.err != nil {
			t.Fatal(o.err)
		}
	}
	for r, rep := range seen {
		if string(rep) != fmt.Sprintf("rank %d", r) {
			t.Errorf("report %d = %q", r, rep)
		}
	}
	// Rank 0 (third) talks to rank 3 (first) over the group's connections.
	lead, three := out[2].g, out[0].g
	if lead.Leader != nil || len(lead.Peers) != 4 || lead.Peers[0] != nil || three.Leader == nil || three.Peers != nil {
		t.Fatalf("rank 0's group %+v, rank 3's %+v", lead, three)
	}
	go lead.Peers[3].Write([]byte("hi 3"))
	b := make([]byte, 4)
	if _, err := three.Leader.Read(b); err != nil || string(b) != "hi 3" {
		t.Errorf("rank 3 read %q, %v", b, err)
	}
}

// Every rank that came fails with the same line; rank 0 names who did not.
// Parallel with TestMeetWithoutRankZero: each waits out waitMissing.
func TestMeetFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		cfgs  func(addr string) []rendezvous.Config
		judge func([][]byte) error
		want  string
	}{
		{"a rank never arrives", func(a string) []rendezvous.Config { return ranks(a, 4, 0, 1, 2) }, nil,
			"rank 3 of 4 never arrived at the rendezvous on %s within 2s"},
		{"two never arrive", func(a string) []rendezvous.Config { return ranks(a, 4, 0, 2) }, nil,
			"ranks 1, 3 of 4 never arrived at the rendezvous on %s within 2s"},
		{"the judge says no", func(a string) []rendezvous.Config { return ranks(a, 3, 0, 1, 2) },
			func(r [][]byte) error { return fmt.Errorf("%s is not ready", r[2]) }, "rank 2 is not ready"},
		{"sizes differ", func(a string) []rendezvous.Config {
			c := ranks(a, 2, 0, 1)
			c[1].Size = 3
			return c
		}, nil, "rank 1 says the launch has 3 processes, rank 0 says 2"},
		{"a rank twice", func(a string) []rendezvous.Config { return ranks(a, 3, 0, 1, 1) }, nil, "two processes say they are rank 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr := freeAddr(t)
			want := tc.want
			if strings.Contains(want, "%s") {
				want = fmt.Sprintf(want, addr)
			}
			for r, o := range meet(t, tc.cfgs(addr), tc.judge) {
				var re *rendezvous.Error
				if !errors.As(o.err, &re) || !strings.HasPrefix(o.err.Error(), want) || strings.Contains(o.err.Error(), "\n") {
					t.Errorf("process %d: %v, want one line %q", r, o.err, want)
				}
			}
		})
	}
}

// A process of another job is turned away; the ranks of this one meet.
func TestMeetTurnsAwayOtherJobs(t *testing.T) {
	addr := freeAddr(t)
	cfgs := ranks(addr, 2, 0, 1)
	lead := make(chan outcome, 1)
	go func() {
		g, err := rendezvous.Meet(context.Background(), cfgs[0], nil, nil)
		lead <- outcome{g, err}
	}()
	stray := cfgs[1]
	stray.Job = "43"
	if _, err := rendezvous.Meet(context.Background(), stray, nil, nil); err == nil || !strings.Contains(err.Error(), `job "42", not "43"`) {
		t.Errorf("the process of job 43: %v", err)
	}
	g, err := rendezvous.Meet(context.Background(), cfgs[1], nil, nil)
	if err != nil {
		t.Fatalf("rank 1 of job 42: %v", err)
	}
	g.Close()
	if o := <-lead; o.err != nil {
		t.Errorf("rank 0 of job 42: %v", o.err)
	} else {
		o.g.Close()
	}
}

// Rank 1 alone waits for no rank to arrive, only for rank 0 that never
// listens: its wait can be short (the tests that wait out waitMissing take
// the parallel slots, two on a 2-core machine, one after the other).
func TestMeetWithoutRankZero(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	cfgs := ranks(addr, 2, 1)
	cfgs[0].Wait = 300 * time.Millisecond
	out := meet(t, cfgs, nil)
	if err := out[0].err; err == nil || !strings.HasPrefix(err.Error(), "rank 1 could not reach rank 0 at the rendezvous "+addr+" within 300ms") {
		t.Errorf("rank 1 alone: %v", err)
	}
}

// Connections that say nothing (a port scanner, a TCP health probe, a
// stale rank), made before the ranks, neither hold them up nor break the
// launch: rank 0 hears every hello at once (hostile-input audit N9: twenty
// of them held rank 0 for 10 s each, one after the other, until rank 1
// was told it never arrived). The silent ones are closed once the ranks
// have met.
func TestMeetDespiteSilentConnections(t *testing.T) {
	addr := freeAddr(t)
	cfgs := ranks(addr, 3, 0, 1, 2)
	for i := range cfgs {
		cfgs[i].Wait = 5 * time.Second // below the 10 s a silent connection may take
	}
	lead := make(chan outcome, 1)
	go func() {
		g, err := rendezvous.Meet(context.Background(), cfgs[0], nil, nil)
		lead <- outcome{g, err}
	}()
	var silent []net.Conn
	for len(silent) < 20 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			runtime.Gosched() // rank 0 is not listening yet
			continue
		}
		silent = append(silent, c)
	}
	out := meet(t, cfgs[1:], nil)
	for i, o := range out {
		if o.err != nil {
			t.Errorf("rank %d: %v", i+1, o.err)
		}
	}
	o := <-lead
	if o.err != nil {
		t.Fatalf("rank 0: %v", o.err)
	}
	o.g.Close()
	for i, c := range silent {
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Errorf("silent connection %d: rank 0 wrote to it", i)
		}
		c.Close()
	}
}
