package ipc

import (
	"errors"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
)

// sameFile reports whether two descriptors are the same open file.
func sameFile(t *testing.T, a, b int) bool {
	t.Helper()
	var sa, sb syscall.Stat_t
	if err := syscall.Fstat(a, &sa); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Fstat(b, &sb); err != nil {
		t.Fatal(err)
	}
	return sa.Dev == sb.Dev && sa.Ino == sb.Ino
}

// Descriptors arrive with the frames that announce them, in order, even
// when a frame carries more than one sendmsg may.
func TestFramesWithDescriptors(t *testing.T) {
	parentEnd, childEnd, err := newChannel()
	if err != nil {
		t.Skipf("no socketpair: %v", err)
	}
	defer parentEnd.Close()
	child, err := net.FileConn(childEnd)
	childEnd.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer child.Close()

	files := make([]*os.File, 3)
	for i := range files {
		if files[i], err = os.CreateTemp(t.TempDir(), "fd"); err != nil {
			t.Fatal(err)
		}
		defer files[i].Close()
	}
	fd := func(i int) int { return int(files[i].Fd()) }
	many := make([]int, fdsPerSend+10)
	for i := range many {
		many[i] = fd(i % 3)
	}
	sent := []message{
		{Seq: 1, Op: opHello},
		{Seq: 2, Op: opHello, Body: []byte(`{"exports":[]}`), files: []int{fd(0), fd(1)}},
		{Seq: 3, Op: opMap, files: many},
		{Seq: 4, Op: opUnmap, files: []int{fd(2)}},
	}
	// The writer ends before the test closes its end: the last frame can
	// be read whole while its write has yet to return.
	var writer sync.WaitGroup
	defer writer.Wait()
	writer.Go(func() {
		for _, m := range sent {
			if err := writeFrame(parentEnd, m); err != nil {
				t.Errorf("writeFrame %d: %v", m.Seq, err)
			}
		}
	})
	r := newFrameReader(child)
	defer r.close()
	for _, want := range sent {
		got, err := r.read()
		if err != nil {
			t.Fatalf("frame %d: %v", want.Seq, err)
		}
		if got.Seq != want.Seq || got.FDs != len(want.files) || len(got.files) != len(want.files) {
			t.Fatalf("frame %d came as %d with %d of %d descriptors", want.Seq, got.Seq, len(got.files), got.FDs)
		}
		for i, f := range got.files {
			if !sameFile(t, f, want.files[i]) {
				t.Errorf("frame %d: descriptor %d is another file", want.Seq, i)
			}
		}
		closeFDs(got.files)
	}
}

// A frame that announces descriptors that never came is broken.
func TestFrameMissingDescriptors(t *testing.T) {
	parentEnd, childEnd, err := newChannel()
	if err != nil {
		t.Skipf("no socketpair: %v", err)
	}
	defer parentEnd.Close()
	child, err := net.FileConn(childEnd)
	childEnd.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer child.Close()
	go func() {
		b := []byte(`{"seq":2,"op":"map","fds":2}`)
		parentEnd.Write(append([]byte{0, 0, 0, byte(len(b))}, b...))
	}()
	r := newFrameReader(child)
	defer r.close()
	if _, err := r.read(); !errors.Is(err, errBadFrame) {
		t.Errorf("a frame announcing descriptors that never came: %v, want errBadFrame", err)
	}
}
