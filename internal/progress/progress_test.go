package progress

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// The progress bar is drawn on a terminal only, and not on a dumb one
// (issue 19, #22).
func TestProgressBarOnlyOnATerminal(t *testing.T) {
	if p := New(&strings.Builder{}, "xterm"); p.bar != nil {
		t.Error("a bar on a writer that is no terminal")
	}
	tty := pty(t)
	if p := New(tty, "xterm"); p.bar == nil {
		t.Error("no bar on a terminal")
	}
	if p := New(tty, "dumb"); p.bar != nil {
		t.Error("a bar on a dumb terminal")
	}
}

// pty opens the terminal end of a new pseudo-terminal.
func pty(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	var n, unlock uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Skipf("unlocking the pseudo-terminal: %v", e)
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Skipf("naming the pseudo-terminal: %v", e)
	}
	tty, err := os.OpenFile(filepath.Join("/dev/pts", strconv.Itoa(int(n))), os.O_RDWR, 0)
	if err != nil {
		t.Skipf("opening the terminal: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	return tty
}
