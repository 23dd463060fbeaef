//go:build !linux

package ipc

import (
	"errors"
	"net"
	"os"
	"syscall"
)

var errIPCUnsupported = errors.New("ipc: the multi-process tests run on Linux only")

func newChannel() (net.Conn, *os.File, error) { return nil, nil, errIPCUnsupported }

func childSysProcAttr() *syscall.SysProcAttr { return nil }

func killGroup(pid int) error { return errIPCUnsupported }

func stopSelf() error { return errIPCUnsupported }
