//go:build linux

package ipc

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"syscall"
)

// newChannel makes the private channel to one child: a socketpair, both ends
// close-on-exec so that no other child inherits them. The caller passes child
// to exactly one process through exec.Cmd.ExtraFiles and then closes it.
func newChannel() (parent net.Conn, child *os.File, err error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	pf := os.NewFile(uintptr(fds[0]), "ipc-parent")
	defer pf.Close() // net.FileConn works on a duplicate
	parent, err = net.FileConn(pf)
	if err != nil {
		syscall.Close(fds[1])
		return nil, nil, err
	}
	return parent, os.NewFile(uintptr(fds[1]), "ipc-child"), nil
}

// childSysProcAttr puts each child in a process group of its own: a Ctrl-C
// at the terminal reaches only the parent, which stops the children in the
// order the IPC rules need, and killGroup can end a child with anything it
// started. Should the parent die without stopping them (SIGKILL), the kernel
// kills them (Pdeathsig; it follows the thread that started the child, and
// Go ends no thread but one locked by a goroutine, which startChild is not).
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup sends SIGKILL to the process group led by pid.
func killGroup(pid int) error {
	return syscall.Kill(-pid, syscall.SIGKILL)
}

// stopSelf stops the calling process (SIGSTOP), as a test fault, before the
// calling goroutine can do anything more: the signal goes to the calling
// thread (tgkill), which takes it on its way back from the call and stops
// there, the whole process with it. Sent to the process (kill), it is taken
// by a thread the kernel picks, most often the main one, and the caller
// runs on until that thread is scheduled: on a loaded machine, long enough
// to answer a whole bidirectional test's requests after its "stop".
func stopSelf() error {
	runtime.LockOSThread() // the thread signalled is the one the goroutine is on
	defer runtime.UnlockOSThread()
	return syscall.Tgkill(os.Getpid(), syscall.Gettid(), syscall.SIGSTOP)
}
