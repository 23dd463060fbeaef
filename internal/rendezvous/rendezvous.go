// Package rendezvous lets the processes of one launch (one per GPU, on any
// number of nodes) meet over TCP before they work together, as the training
// launchers' rendezvous does: rank 0 listens on the port of an address every
// rank knows (MASTER_ADDR and MASTER_PORT, or a flag), every other rank
// dials it and says who it is (rank, size, job) with a report of its own
// (rank 0 hears every connection at once: one that says nothing holds up
// no other), and once all have arrived rank 0 judges the reports and tells everyone
// to go on, or why not. Every rank then fails with the same one line: a rank
// that never arrived, a process of another launch size, or the judge's
// verdict. Rank 0 keeps a connection to every rank, each rank one to rank 0;
// what travels on them next is the caller's.
//
// It imports nothing of the project.
package rendezvous

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"
)

// Config says where the ranks meet and who this one is.
type Config struct {
	// Addr is host:port: rank 0 listens on its port (every interface),
	// the others dial it.
	Addr       string
	Rank, Size int
	// Job is the launcher's job id ("" when none): a process of another
	// job is turned away.
	Job string
	// Wait bounds how long the ranks wait for each other.
	Wait time.Duration
}

// Group is a rendezvous every rank reached and rank 0 let go on.
type Group struct {
	// Peers are rank 0's connections to the other ranks, by rank (Peers[0]
	// is nil); nil on the other ranks.
	Peers []net.Conn
	// Leader is a rank's connection to rank 0; nil on rank 0.
	Leader net.Conn
}

// Close closes every connection of the group.
func (g *Group) Close() {
	for _, c := range append(g.Peers, g.Leader) {
		if c != nil {
			c.Close()
		}
	}
}

// Error is the failure of a rendezvous, as every rank reports it.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// Limits of the handshake.
const (
	maxReport = 1 << 20
	maxText   = 4 << 10
	helloWait = 10 * time.Second
)

var magic = [8]byte{'p', '2', 'p', 'r', 'd', 'v', 'z', '1'}

// hello is what a rank tells rank 0.
type hello struct {
	rank, size int
	job        string
	report     []byte
}

// Meet meets the other ranks of cfg. report is this rank's; on rank 0,
// judge reads every rank's, by rank, and returns why the group must not go
// on (nil to go on). The error of a failed rendezvous is an *Error, the same
// line on every rank that arrived.
func Meet(ctx context.Context, cfg Config, report []byte, judge func(reports [][]byte) error) (*Group, error) {
	switch {
	case cfg.Size < 2 || cfg.Rank < 0 || cfg.Rank >= cfg.Size:
		return nil, fmt.Errorf("rendezvous: rank %d of %d processes", cfg.Rank, cfg.Size)
	case len(report) > maxReport:
		return nil, fmt.Errorf("rendezvous: a report of %d bytes (at most %d)", len(report), maxReport)
	case cfg.Wait <= 0:
		return nil, errors.New("rendezvous: no time to wait")
	}
	if cfg.Rank == 0 {
		return lead(ctx, cfg, report, judge)
	}
	return join(ctx, cfg, report)
}

// lead is rank 0's side: accept every rank, judge, answer each.
func lead(ctx context.Context, cfg Config, report []byte, judge func([][]byte) error) (*Group, error) {
	_, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("rendezvous address %q: %w", cfg.Addr, err)
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", net.JoinHostPort("", port))
	if err != nil {
		return nil, &Error{fmt.Sprintf("rank 0 cannot listen for the rendezvous on port %s: %v", port, err)}
	}
	defer ln.Close()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	g := &Group{Peers: make([]net.Conn, cfg.Size)}
	reports := make([][]byte, cfg.Size)
	reports[0] = report
	failure := accept(ctx, ln.(*net.TCPListener), cfg, g.Peers, reports)
	if failure == nil && judge != nil {
		if err := judge(reports); err != nil {
			failure = &Error{err.Error()}
		}
	}
	msg := ""
	if failure != nil {
		msg = failure.Error()
	}
	for _, c := range g.Peers {
		if c == nil {
			continue
		}
		_ = c.SetDeadline(time.Now().Add(helloWait))
		if err := writeAnswer(c, msg); err != nil && failure == nil {
			failure = &Error{fmt.Sprintf("rank 0 could not tell %s to go on: %v", c.RemoteAddr(), err)}
		}
	}
	if failure != nil {
		g.Close()
		return nil, failure
	}
	for _, c := range g.Peers[1:] {
		_ = c.SetDeadline(time.Time{})
	}
	return g, nil
}

// accept takes the other ranks' connections and reports, by rank, until
// all arrived or cfg.Wait has passed; it returns why the group cannot go
// on, or nil. Each connection says hello on a goroutine of its own, so
// that a silent one (a port scanner, a health probe, a stale rank) holds up
// nobody; processes of another job are turned away, and the connections
// still silent when accept returns are closed.
func accept(ctx context.Context, ln *net.TCPListener, cfg Config, peers []net.Conn, reports [][]byte) error {
	deadline := time.Now().Add(cfg.Wait)
	_ = ln.SetDeadline(deadline)
	arrivals := make(chan arrival)
	stopped := make(chan error, 1)
	done := make(chan struct{})
	var mu sync.Mutex
	pending := map[net.Conn]bool{}
	defer func() {
		close(done)
		mu.Lock()
		defer mu.Unlock()
		for c := range pending {
			c.Close()
		}
	}()
	go listen(ln, deadline, arrivals, stopped, done, func(c net.Conn) {
		mu.Lock()
		pending[c] = true
		mu.Unlock()
	})
	for arrived := 1; arrived < cfg.Size; {
		var a arrival
		select {
		case a = <-arrivals:
		case <-stopped:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &Error{missing(cfg, peers)}
		}
		c, h := a.c, a.h
		mu.Lock()
		delete(pending, c)
		mu.Unlock()
		if a.err != nil || h.job != cfg.Job {
			// A stranger, or a process of another launch: not one of ours.
			if a.err == nil {
				_ = writeAnswer(c, fmt.Sprintf("this is the rendezvous of job %q, not %q", cfg.Job, h.job))
			}
			c.Close()
			continue
		}
		if failure := refuse(cfg, peers, c, h); failure != nil {
			_ = writeAnswer(c, failure.Error())
			c.Close()
			return failure
		}
		_ = c.SetDeadline(deadline)
		peers[h.rank], reports[h.rank] = c, h.report
		arrived++
	}
	return nil
}

// arrival is a connection and the hello read from it (or why none was).
type arrival struct {
	c   net.Conn
	h   hello
	err error
}

// listen accepts connections on ln until the deadline or ln's closing
// (then it sends why on stopped), each handed to track and then, with its
// hello, to arrivals on a goroutine of its own; one that arrives after
// done is closed.
func listen(ln *net.TCPListener, deadline time.Time, arrivals chan<- arrival, stopped chan<- error, done <-chan struct{}, track func(net.Conn)) {
	for pause := time.Duration(0); ; {
		c, err := ln.Accept()
		if err != nil {
			// Out of descriptors, say: pause and try again, as net/http's
			// server does; a closed listener or the deadline ends the wait.
			if !errors.Is(err, net.ErrClosed) && !errors.Is(err, os.ErrDeadlineExceeded) && time.Now().Before(deadline) {
				pause = min(max(2*pause, 5*time.Millisecond), time.Second)
				time.Sleep(pause)
				continue
			}
			stopped <- err
			return
		}
		pause = 0
		track(c)
		go func() {
			// A rank says hello as it connects.
			_ = c.SetDeadline(time.Now().Add(min(time.Until(deadline), helloWait)))
			h, err := readHello(c)
			select {
			case arrivals <- arrival{c, h, err}:
			case <-done:
				c.Close()
			}
		}()
	}
}

// refuse says why rank h, arrived on c, cannot join the group of cfg with
// the ranks peers already arrived; nil when it can.
func refuse(cfg Config, peers []net.Conn, c net.Conn, h hello) error {
	switch {
	case h.size != cfg.Size:
		return &Error{fmt.Sprintf("rank %d says the launch has %d processes, rank 0 says %d", h.rank, h.size, cfg.Size)}
	case h.rank < 1 || h.rank >= cfg.Size:
		return &Error{fmt.Sprintf("a process from %s says it is rank %d of %d", c.RemoteAddr(), h.rank, cfg.Size)}
	case peers[h.rank] != nil:
		return &Error{fmt.Sprintf("two processes say they are rank %d (from %s and %s)", h.rank, peers[h.rank].RemoteAddr(), c.RemoteAddr())}
	}
	return nil
}

// missing names the ranks that never arrived.
func missing(cfg Config, peers []net.Conn) string {
	var ranks []string
	for r := 1; r < cfg.Size; r++ {
		if peers[r] == nil {
			ranks = append(ranks, fmt.Sprint(r))
		}
	}
	what := "rank " + ranks[0]
	if len(ranks) > 1 {
		what = "ranks " + strings.Join(ranks, ", ")
	}
	return fmt.Sprintf("%s of %d never arrived at the rendezvous on %s within %v", what, cfg.Size, cfg.Addr, cfg.Wait)
}

// join is the side of every other rank: reach rank 0, say who it is, wait
// for its answer.
func join(ctx context.Context, cfg Config, report []byte) (*Group, error) {
	deadline := time.Now().Add(cfg.Wait)
	var c net.Conn
	for {
		var err error
		c, err = (&net.Dialer{Deadline: deadline}).DialContext(ctx, "tcp", cfg.Addr)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if time.Now().Add(100 * time.Millisecond).After(deadline) {
			return nil, &Error{fmt.Sprintf("rank %d could not reach rank 0 at the rendezvous %s within %v: %v", cfg.Rank, cfg.Addr, cfg.Wait, err)}
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	// Rank 0 answers once the last rank arrived, at most its own wait
	// after it started listening.
	_ = c.SetDeadline(time.Now().Add(2 * cfg.Wait))
	if err := writeHello(c, hello{rank: cfg.Rank, size: cfg.Size, job: cfg.Job, report: report}); err != nil {
		c.Close()
		return nil, &Error{fmt.Sprintf("rank %d could not talk to rank 0 at %s: %v", cfg.Rank, cfg.Addr, err)}
	}
	msg, err := readAnswer(c)
	switch {
	case ctx.Err() != nil:
		c.Close()
		return nil, ctx.Err()
	case err != nil:
		c.Close()
		return nil, &Error{fmt.Sprintf("rank 0 at %s did not say whether to go on: %v", cfg.Addr, err)}
	case msg != "":
		c.Close()
		return nil, &Error{msg}
	}
	_ = c.SetDeadline(time.Time{})
	return &Group{Leader: c}, nil
}

// The handshake: a hello is the magic, rank, size, job and report; an
// answer is a text, empty to go on. Numbers are big-endian uint32, texts
// and reports prefixed by their length.

func writeHello(w io.Writer, h hello) error {
	var b bytes.Buffer
	b.Write(magic[:])
	b.Write(binary.BigEndian.AppendUint32(nil, uint32(h.rank)))
	b.Write(binary.BigEndian.AppendUint32(nil, uint32(h.size)))
	writeBytes(&b, []byte(h.job))
	writeBytes(&b, h.report)
	_, err := w.Write(b.Bytes())
	return err
}

func readHello(r io.Reader) (hello, error) {
	var head [16]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return hello{}, err
	}
	if [8]byte(head[:8]) != magic {
		return hello{}, errors.New("not a rendezvous hello")
	}
	h := hello{rank: int(binary.BigEndian.Uint32(head[8:])), size: int(binary.BigEndian.Uint32(head[12:]))}
	job, err := readBytes(r, maxText)
	if err != nil {
		return hello{}, err
	}
	h.job = string(job)
	h.report, err = readBytes(r, maxReport)
	return h, err
}

func writeAnswer(w io.Writer, msg string) error {
	var b bytes.Buffer
	writeBytes(&b, []byte(msg[:min(len(msg), maxText)]))
	_, err := w.Write(b.Bytes())
	return err
}

func readAnswer(r io.Reader) (string, error) {
	b, err := readBytes(r, maxText)
	return string(b), err
}

func writeBytes(b *bytes.Buffer, p []byte) {
	b.Write(binary.BigEndian.AppendUint32(nil, uint32(len(p))))
	b.Write(p)
}

func readBytes(r io.Reader, limit int) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > uint32(limit) {
		return nil, fmt.Errorf("%d bytes where at most %d may come", size, limit)
	}
	p := make([]byte, size)
	_, err := io.ReadFull(r, p)
	return p, err
}
