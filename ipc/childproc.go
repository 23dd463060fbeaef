package ipc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Failures of a child process of an IPC run; a *childError wraps one.
var (
	// errChildExited: the child ended (crashed, was killed, or closed its
	// channel) while the parent waited for it.
	errChildExited = errors.New("the child process exited")
	// errChannelBroken: the channel to the child broke and the process
	// went on running; it is killed.
	errChannelBroken = errors.New("the channel to the child process broke")
	// errChildHung: the child did not answer in time and was killed.
	errChildHung = errors.New("the child process did not answer in time")
)

// childError is the failure of one child process of an IPC run: which
// child, what the parent had asked of it, and why it is given up on.
type childError struct {
	Rank   int    // the child's rank in the run
	Device int    // the device it owns
	Pid    int    // its process id
	Op     string // the request it failed on
	Err    error
}

func (e *childError) Error() string {
	return fmt.Sprintf("ipc child for device %d (rank %d, pid %d) during %s: %v", e.Device, e.Rank, e.Pid, e.Op, e.Err)
}

func (e *childError) Unwrap() error { return e.Err }

// childProc is one child process as the parent sees it. Its methods are called
// from one goroutine at a time. A child may also be a process of another
// node, reached over a connection only (remoteChild): it has no command, no
// pid of this host, and it "exits" when its connection closes.
type childProc struct {
	rank, dev int
	pid       int
	cmd       *exec.Cmd
	conn      net.Conn
	seq       uint64

	frames   chan message  // replies, from readLoop
	readDone chan struct{} // closed when readLoop ends; readErr says why
	readErr  error
	quit     chan struct{} // closed by close, so readLoop never blocks forever

	exited  chan struct{} // closed once the process is reaped; waitErr is its status
	waitErr error

	stderr *tailBuffer
	// exitGrace is how long a child whose channel broke may take to exit
	// before it is killed.
	exitGrace time.Duration
	trace     func(rank int, op string) // tests only
	// failed is set once the child is given up on; every later call returns it.
	failed error
	hello  helloReply

	// local is the device the child opens, on its own machine (dev, but
	// for a rank of another node); where, for a child of a run across
	// nodes, names its GPU and host; remote marks a child of another node.
	local  int
	where  string
	remote bool
}

// startChild starts argv as the child of the given rank, with its end of a
// fresh socketpair as descriptor 3. Nothing but argv (which holds no handle)
// and the parent's environment goes to it.
func startChild(argv []string, rank, dev int) (*childProc, error) {
	if len(argv) == 0 {
		return nil, errors.New("ipc: no command to start the children with")
	}
	conn, childEnd, err := newChannel()
	if err != nil {
		return nil, fmt.Errorf("ipc: the channel to the child for device %d: %w", dev, err)
	}
	defer childEnd.Close() // the child has its own copy once started
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.ExtraFiles = []*os.File{childEnd} // descriptor 3 == childFD
	cmd.SysProcAttr = childSysProcAttr()
	k := newChildProc(rank, dev, conn)
	k.cmd = cmd
	cmd.Stderr = k.stderr
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("ipc: starting the child for device %d: %w", dev, err)
	}
	k.pid = cmd.Process.Pid
	go k.readLoop()
	go func() {
		k.waitErr = cmd.Wait()
		close(k.exited)
	}()
	return k, nil
}

func newChildProc(rank, dev int, conn net.Conn) *childProc {
	return &childProc{
		rank: rank, dev: dev, local: dev, conn: conn,
		frames:    make(chan message, 4),
		readDone:  make(chan struct{}),
		quit:      make(chan struct{}),
		exited:    make(chan struct{}),
		stderr:    &tailBuffer{max: 4 << 10},
		exitGrace: 2 * time.Second,
	}
}

// remoteChild is the child of the given rank that serves on conn from
// another node, on its device local (where names it). Its connection's end
// is its exit; killing it closes the connection.
func remoteChild(conn net.Conn, rank, dev, local int, where string) *childProc {
	k := newChildProc(rank, dev, conn)
	k.local, k.where, k.remote = local, where, true
	go k.readLoop()
	go func() {
		<-k.readDone
		close(k.exited)
	}()
	return k
}

// describe names the child in the run's notes.
func (k *childProc) describe() string {
	if k.where != "" {
		return fmt.Sprintf("rank %d = %s (pid %d)", k.rank, k.where, k.hello.Pid)
	}
	return fmt.Sprintf("rank %d = device %d (pid %d)", k.rank, k.dev, k.pid)
}

func (k *childProc) readLoop() {
	defer close(k.readDone)
	r := newFrameReader(k.conn)
	defer r.close()
	for {
		m, err := r.read()
		if err != nil {
			k.readErr = err
			return
		}
		select {
		case k.frames <- m:
		case <-k.quit:
			closeFDs(m.files)
			return
		}
	}
}

// call sends one request and waits for its reply: at most timeout, less if
// ctx ends first (the request is then abandoned and its late reply dropped).
// A failed request comes back as a *remoteError; a child that exits, breaks
// the protocol or does not answer in time is killed, marked failed, and
// comes back as a *childError.
func (k *childProc) call(ctx context.Context, op string, req, resp any, timeout time.Duration) error {
	if k.failed != nil {
		return k.failed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	k.seq++
	seq := k.seq
	msg := message{Seq: seq, Op: op, Body: body}
	if d, ok := req.(interface{ descriptors() []int }); ok {
		msg.files = d.descriptors()
	}
	_ = k.conn.SetWriteDeadline(time.Now().Add(timeout))
	if err := writeFrame(k.conn, msg); err != nil {
		return k.giveUp(op, k.goneReason(err))
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case m := <-k.frames:
			if m.Seq == seq {
				return k.reply(op, m, resp)
			}
			closeFDs(m.files) // the late reply to an abandoned request
		case <-k.readDone:
			// A reply read just before the channel closed is still good.
			for {
				select {
				case m := <-k.frames:
					if m.Seq == seq {
						return k.reply(op, m, resp)
					}
					closeFDs(m.files)
				default:
					return k.giveUp(op, k.goneReason(k.readErr))
				}
			}
		case <-timer.C:
			return k.giveUp(op, fmt.Errorf("%w: no reply within %v; killed", errChildHung, timeout))
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (k *childProc) reply(op string, m message, resp any) error {
	if r, ok := resp.(interface{ keep([]int) }); ok && m.Err == "" && m.Op == op {
		r.keep(m.files)
	} else {
		closeFDs(m.files)
	}
	if m.Op != op {
		return k.giveUp(op, fmt.Errorf("protocol error: the reply to %s says %q", op, m.Op))
	}
	if k.trace != nil {
		k.trace(k.rank, op)
	}
	if err := fromFields(m.Err, m.CUDA); err != nil {
		return err
	}
	if resp != nil && len(m.Body) > 0 {
		if err := json.Unmarshal(m.Body, resp); err != nil {
			return k.giveUp(op, fmt.Errorf("protocol error: the reply to %s: %v", op, err))
		}
	}
	return nil
}

// goneReason explains a channel that broke with cause: the exit status once
// the process is reaped, and the end of what it wrote to stderr; a process
// still running exitGrace later is killed, and the reason says so.
func (k *childProc) goneReason(cause error) error {
	select {
	case <-k.exited:
	case <-time.After(k.exitGrace):
		k.kill()
		return fmt.Errorf("%w (%v) while the process was still running; it was killed", errChannelBroken, cause)
	}
	status := "exit status 0"
	switch {
	case k.remote:
		status = "its connection closed"
	case k.waitErr != nil:
		status = k.waitErr.Error()
	}
	err := fmt.Errorf("%w (%s)", errChildExited, status)
	if errors.Is(cause, errBadFrame) {
		err = fmt.Errorf("%w (%s) after breaking the protocol (%v)", errChildExited, status, cause)
	}
	if tail := k.stderr.lastLines(3); tail != "" {
		err = fmt.Errorf("%w; its last output: %q", err, tail)
	}
	return err
}

// giveUp marks the child failed with why, kills it, and returns the error
// every later call gets.
func (k *childProc) giveUp(op string, why error) error {
	if k.failed == nil {
		k.failed = &childError{Rank: k.rank, Device: k.dev, Pid: k.pid, Op: op, Err: why}
		k.kill()
	}
	return k.failed
}

// alive reports whether the child is still being worked with.
func (k *childProc) alive() bool { return k.failed == nil }

// kill ends the child's process group unless the child is already reaped
// (its group id could then belong to another process); a child on another
// node loses its connection, which ends its serving.
func (k *childProc) kill() {
	select {
	case <-k.exited:
	default:
		switch {
		case k.remote:
			k.close()
		case k.pid > 0: // never -0: that is the parent's own group
			_ = killGroup(k.pid)
		}
	}
}

// reap waits for the child to exit, killing it once timeout has passed, and
// closes the channel.
func (k *childProc) reap(timeout time.Duration) {
	select {
	case <-k.exited:
	case <-time.After(timeout):
		k.kill()
		<-k.exited
	}
	k.close()
}

func (k *childProc) close() {
	select {
	case <-k.quit:
	default:
		close(k.quit)
		k.conn.Close()
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	b   []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

// lastLines returns up to n of the last non-empty lines, joined by " | ".
func (t *tailBuffer) lastLines(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	lines := strings.Split(string(t.b), "\n")
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			out = append([]string{l}, out...)
		}
	}
	return strings.Join(out, " | ")
}
