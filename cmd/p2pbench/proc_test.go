package main

import (
	"errors"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The tests' waits on other processes: each on a signal from the kernel (a
// child's stop, a process's end) or from the process itself (a FIFO), none
// by polling.

// reportStopsEnv, set for this test binary run as p2pbench (asMain), names
// a FIFO to which it writes the pid of the first of its children to stop:
// a stop of a process that is not the test's own child has no other signal.
const reportStopsEnv = "P2PBENCH_TEST_REPORT_STOPS"

// reportStops is the asMain side of reportStopsEnv.
func reportStops(fifo string) {
	stops, _ := childStops()
	go func() {
		pid := <-stops
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.WriteString(strconv.Itoa(pid))
			w.Close()
		}
	}()
}

// childStops reports the pid of the first child of this process to be
// stopped. SIGCHLD, which the kernel sends on a child's stop too, wakes it
// to ask waitid; WNOWAIT leaves the stop to whatever waits on the child.
// stop ends the watch.
func childStops() (stopped <-chan int, stop func()) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGCHLD)
	out := make(chan int, 1)
	done := make(chan struct{})
	go func() {
		defer signal.Stop(sig)
		for {
			if pid := stoppedChild(); pid > 0 {
				out <- pid
				return
			}
			select {
			case <-sig:
			case <-done:
				return
			}
		}
	}()
	return out, sync.OnceFunc(func() { close(done) })
}

// childSiginfo is siginfo_t as waitid fills it for a child; unix.Siginfo
// keeps the pid in its padding.
type childSiginfo struct {
	Signo, Errno, Code int32
	_                  [ptrSize - 4]byte // the union is pointer-aligned
	Pid                int32
	UID                uint32
	Status             int32
	_                  [128 - 12 - (ptrSize - 4) - 12]byte
}

const ptrSize = unsafe.Sizeof(uintptr(0))

// The two are one size, so that waitid writes within childSiginfo.
var _ [unsafe.Sizeof(unix.Siginfo{}) - unsafe.Sizeof(childSiginfo{})]byte
var _ [unsafe.Sizeof(childSiginfo{}) - unsafe.Sizeof(unix.Siginfo{})]byte

// stoppedChild returns the pid of a stopped child of this process, or 0.
func stoppedChild() int {
	var info childSiginfo
	err := unix.Waitid(unix.P_ALL, 0, (*unix.Siginfo)(unsafe.Pointer(&info)), unix.WSTOPPED|unix.WNOHANG|unix.WNOWAIT, nil)
	if err != nil {
		return 0 // ECHILD: no child yet
	}
	return int(info.Pid)
}

// readFIFO returns what a process writes to the FIFO at path, once it
// closes it, or fails after timeout.
func readFIFO(t *testing.T, path string, timeout time.Duration) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		b, _ := os.ReadFile(path) // opens once a writer does, reads until it closes
		got <- string(b)
	}()
	select {
	case s := <-got:
		return strings.TrimSpace(s)
	case <-time.After(timeout):
		// Open it for writing, so the reader's open returns.
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		t.Fatalf("nothing was written to %s in %v", path, timeout)
		return ""
	}
}

// waitGone waits until every process of pids has ended (a zombie has),
// children of this process or not, and returns those still running after
// timeout: a pidfd turns readable when its process ends.
func waitGone(t *testing.T, pids []int, timeout time.Duration) (left []int) {
	t.Helper()
	var fds []unix.PollFd
	var open []int // the pid of each of fds
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		if errors.Is(err, unix.ESRCH) {
			continue // gone and reaped
		}
		if err != nil {
			t.Fatalf("pidfd_open %d: %v", pid, err)
		}
		defer unix.Close(fd)
		fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
		open = append(open, pid)
	}
	deadline := time.Now().Add(timeout)
	for waiting := len(fds); waiting > 0; {
		ms := time.Until(deadline).Milliseconds()
		if ms <= 0 {
			break
		}
		if _, err := unix.Poll(fds, int(ms)); err != nil && !errors.Is(err, unix.EINTR) {
			t.Fatalf("poll: %v", err)
		}
		for i := range fds {
			if fds[i].Fd >= 0 && fds[i].Revents != 0 {
				fds[i].Fd = -1 // poll skips it from now on
				waiting--
			}
		}
	}
	for i := range fds {
		if fds[i].Fd >= 0 {
			left = append(left, open[i])
		}
	}
	return left
}
