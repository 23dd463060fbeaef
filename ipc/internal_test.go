package ipc

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/results"
)

func TestFrames(t *testing.T) {
	var h cuda.IpcMemHandle
	for i := range h {
		h[i] = byte(255 - i)
	}
	body := []byte(`{"exports":[{"name":"send","bytes":4096,"handle":[1,2,3]}]}`)
	for _, m := range []message{
		{Seq: 1, Op: opHello, Body: body},
		{Seq: 1 << 40, Op: opUnmap},
		{Seq: 7, Op: opMap, Err: "boom", CUDA: cuda.NewError(cuda.ErrorTooManyPeers, "cuIpcOpenMemHandle")},
	} {
		var b bytes.Buffer
		if err := writeFrame(&b, m); err != nil {
			t.Fatal(err)
		}
		got, err := readFrame(&b)
		if err != nil {
			t.Fatalf("%s: %v", m.Op, err)
		}
		if got.Seq != m.Seq || got.Op != m.Op || got.Err != m.Err || !bytes.Equal(got.Body, m.Body) ||
			(m.CUDA != nil && (got.CUDA == nil || *got.CUDA != *m.CUDA)) {
			t.Errorf("round trip of %+v gave %+v", m, got)
		}
		if _, err := readFrame(&b); !errors.Is(err, io.EOF) {
			t.Errorf("after the last frame: %v, want io.EOF", err)
		}
	}
}

func TestReadFrameErrors(t *testing.T) {
	frame := func(n uint32, payload string) []byte {
		b := binary.BigEndian.AppendUint32(nil, n)
		return append(b, payload...)
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"empty stream", nil, io.EOF},
		{"cut in the length", []byte{0, 0}, io.ErrUnexpectedEOF},
		{"zero length", frame(0, ""), errBadFrame},
		{"over the limit", frame(maxFrame+1, ""), errBadFrame},
		{"cut in the body", frame(10, `{"op":`), io.ErrUnexpectedEOF},
		{"not JSON", frame(5, "hello"), errBadFrame},
		{"no op", frame(10, `{"seq":12}`), errBadFrame},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := readFrame(bytes.NewReader(tc.in)); !errors.Is(err, tc.want) {
				t.Errorf("readFrame: %v, want %v", err, tc.want)
			}
		})
	}
}

// TestRemoteErrors checks that a CUDA error keeps its identity across the
// process boundary.
func TestRemoteErrors(t *testing.T) {
	for _, tc := range []struct {
		err  error
		is   error
		name string
	}{
		{fmt.Errorf("opening rank 1's send buffer: %w", cuda.NewError(cuda.ErrorTooManyPeers, "cuIpcOpenMemHandle")), cuda.ErrTooManyPeers, "CUDA_ERROR_TOO_MANY_PEERS"},
		{fmt.Errorf("device 0: %w", cuda.NewError(cuda.ErrorMapFailed, "cuIpcOpenMemHandle")), cuda.ErrMapFailed, "CUDA_ERROR_MAP_FAILED"},
		{errors.New("ipc-child: no sample to collect"), nil, ""},
	} {
		msg, ce := errorFields(tc.err)
		got := fromFields(msg, ce)
		if got == nil || got.Error() != tc.err.Error() {
			t.Errorf("%v came back as %v", tc.err, got)
			continue
		}
		if tc.is != nil && !errors.Is(got, tc.is) {
			t.Errorf("%v: errors.Is(%v) is false across the channel", got, tc.is)
		}
		if n := cuda.NameOf(got); n != tc.name {
			t.Errorf("%v: name %q, want %q", got, n, tc.name)
		}
	}
	if fromFields("", nil) != nil {
		t.Error("fromFields of no error is not nil")
	}
}

func TestParseFaults(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []fault
		bad  bool
	}{
		{"", nil, false},
		{"1:fill:crash", []fault{{1, "fill", "crash"}}, false},
		{" 0:hello:hang , 2:arm:stop", []fault{{0, "hello", "hang"}, {2, "arm", "stop"}}, false},
		{"1:fill", nil, true},
		{"x:fill:crash", nil, true},
		{"-1:fill:crash", nil, true},
		{"1:fill:explode", nil, true},
	} {
		got, err := parseFaults(tc.in)
		if (err != nil) != tc.bad || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("parseFaults(%q) = %v, %v; want %v (error: %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

// fakeChild is a parent-side childProc whose child is a goroutine on the other
// end of a socketpair, answering with serve; its process has exited.
func fakeChild(t *testing.T, serve func(conn net.Conn)) *childProc {
	t.Helper()
	k := runningChild(t, serve)
	close(k.exited) // no process: nothing to kill or reap
	return k
}

// runningChild is fakeChild whose process never exits.
func runningChild(t *testing.T, serve func(conn net.Conn)) *childProc {
	t.Helper()
	conn, childEnd, err := newChannel()
	if err != nil {
		t.Fatal(err)
	}
	child, err := net.FileConn(childEnd)
	childEnd.Close()
	if err != nil {
		t.Fatal(err)
	}
	k := &childProc{rank: 1, dev: 1, conn: conn, frames: make(chan message, 4), readDone: make(chan struct{}),
		quit: make(chan struct{}), exited: make(chan struct{}), stderr: &tailBuffer{max: 64}, exitGrace: 20 * time.Millisecond}
	go k.readLoop()
	go func() {
		defer child.Close()
		serve(child)
	}()
	t.Cleanup(k.close)
	return k
}

func TestChildCall(t *testing.T) {
	echo := func(stale bool) func(net.Conn) {
		return func(c net.Conn) {
			for {
				m, err := readFrame(c)
				if err != nil {
					return
				}
				if stale { // a late reply to an abandoned request comes first
					_ = writeFrame(c, message{Seq: m.Seq - 1, Op: m.Op, Body: []byte(`{"ms":-1}`)})
				}
				_ = writeFrame(c, message{Seq: m.Seq, Op: m.Op, Body: []byte(`{"ms":2.5}`)})
			}
		}
	}
	for _, tc := range []struct {
		name    string
		serve   func(net.Conn)
		timeout time.Duration
		wantMs  float64
		wantErr error
	}{
		{"reply", echo(false), time.Second, 2.5, nil},
		{"stale reply dropped", echo(true), time.Second, 2.5, nil},
		{"child exits", func(c net.Conn) { readFrame(c) }, time.Second, 0, errChildExited},
		{"child hangs", func(c net.Conn) { readFrame(c); io.Copy(io.Discard, c) }, 50 * time.Millisecond, 0, errChildHung},
		{"broken protocol", func(c net.Conn) { readFrame(c); c.Write([]byte{0, 0, 0, 0}) }, time.Second, 0, errChildExited},
		{"remote failure", func(c net.Conn) {
			for {
				m, err := readFrame(c)
				if err != nil {
					return
				}
				_ = writeFrame(c, message{Seq: m.Seq, Op: m.Op, Err: "device 1: no", CUDA: cuda.NewError(cuda.ErrorInvalidHandle, "cuIpcOpenEventHandle")})
			}
		}, time.Second, 0, cuda.ErrInvalidHandle},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := fakeChild(t, tc.serve)
			var rep msReply
			for i := 0; i < 2; i++ { // the second call sees the child as the first left it
				err := k.call(context.Background(), opRelease, rankReq{Rank: 1}, &rep, tc.timeout)
				if !errors.Is(err, tc.wantErr) || (err == nil && rep.Ms != tc.wantMs) {
					t.Fatalf("call %d: %v, %v; want %v, %v", i, rep.Ms, err, tc.wantMs, tc.wantErr)
				}
				var ce *childError
				if isChild := errors.As(err, &ce); isChild != (k.failed != nil) {
					t.Errorf("call %d: the child failed=%v but the error is %v", i, k.failed != nil, err)
				}
			}
		})
	}
}

// TestChildGoneReason is issue 19's "exited … but the process still ran;
// killed": the reason says what happened to the process, one thing.
func TestChildGoneReason(t *testing.T) {
	badFrame := func(c net.Conn) { readFrame(c); c.Write([]byte{0, 0, 0, 0}); io.Copy(io.Discard, c) }
	for _, tc := range []struct {
		name       string
		k          *childProc
		want       error
		say, never string
	}{
		{"exited", fakeChild(t, func(c net.Conn) { readFrame(c) }), errChildExited, "the child process exited (exit status 0)", "running"},
		{"exited after a bad frame", fakeChild(t, badFrame), errChildExited, "exited (exit status 0) after breaking the protocol", "running"},
		{"still running", runningChild(t, badFrame), errChannelBroken, "while the process was still running; it was killed", "exited"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.k.call(context.Background(), opRelease, rankReq{Rank: 1}, nil, time.Second)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.say) || strings.Contains(err.Error(), tc.never) {
				t.Errorf("%v; want a %q that says %q and never %q", err, tc.want, tc.say, tc.never)
			}
		})
	}
}

func TestChildCallCancelled(t *testing.T) {
	k := fakeChild(t, func(c net.Conn) { readFrame(c); io.Copy(io.Discard, c) })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	err := k.call(ctx, opTime, struct{}{}, nil, time.Minute)
	if !errors.Is(err, context.Canceled) || !k.alive() {
		t.Errorf("cancelled call: %v (alive %v), want context.Canceled and the child still worked with", err, k.alive())
	}
}

func TestTailBuffer(t *testing.T) {
	tb := &tailBuffer{max: 32}
	fmt.Fprintf(tb, "first line\n%s\nsecond\n\nthird\n", strings.Repeat("x", 40))
	if got := tb.lastLines(2); got != "second | third" {
		t.Errorf("lastLines(2) = %q", got)
	}
	if len(tb.b) > 32 {
		t.Errorf("kept %d bytes, want at most 32", len(tb.b))
	}
}

// TestFabricOptionsValidate: each option a run across nodes cannot take is
// refused in one line naming it, before anything loads.
func TestFabricOptionsValidate(t *testing.T) {
	ok := FabricOptions{Rank: 1, Ranks: 4, Rendezvous: "node0:29500", Wait: time.Minute}
	ok.Timeout = time.Minute
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid options refused: %v", err)
	}
	bothWays, err := results.ParseTests("ipc_sm_bidir", results.CommandIPC)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		change func(*FabricOptions)
		want   string
	}{
		{func(o *FabricOptions) { o.Device = 1024 }, "--device 1024: device indices go from 0 to 1023"},
		{func(o *FabricOptions) { o.Ranks = 1 }, "mnnvl needs the number of processes"},
		{func(o *FabricOptions) { o.Ranks = 1025 }, "the launcher says 1025 processes: at most 1024"},
		{func(o *FabricOptions) { o.Rank = 4 }, "rank 4 of 4 processes: ranks go from 0 to 3"},
		{func(o *FabricOptions) { o.Rendezvous = "node0" }, `the rendezvous address "node0" is not HOST:PORT`},
		{func(o *FabricOptions) { o.Rendezvous = "node0:0" }, `port "0" is not a number from 1 to 65535`},
		{func(o *FabricOptions) { o.Wait = 0 }, "--rendezvous-wait and --child-timeout must be positive"},
		{func(o *FabricOptions) { o.Tests = bothWays }, "--tests: ipc_sm_bidir runs both directions at once"},
	} {
		o := ok
		tc.change(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}
