package interrupt

import (
	"context"
	"errors"
	"syscall"
	"testing"
)

func TestWaitLeavesBlockedWorkOnASignal(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	block := make(chan struct{})
	defer close(block)
	cancel(Signal{syscall.SIGTERM})
	_, err := Wait(ctx, func() (int, error) { <-block; return 1, nil })
	if sig, ok := Cause(ctx); !ok || sig.Sig != syscall.SIGTERM || !errors.As(err, new(Signal)) || err.Error() != "stopped (SIGTERM)" {
		t.Errorf("Wait on a cancelled context: %v (cause %v, %v)", err, sig, ok)
	}
	v, err := Wait(context.Background(), func() (int, error) { return 7, nil })
	if v != 7 || err != nil {
		t.Errorf("Wait: %d, %v", v, err)
	}
	if _, ok := Cause(context.Background()); ok {
		t.Error("a context no signal cancelled has a signal for its cause")
	}
}

func TestContextIsCancelledBySignal(t *testing.T) {
	ctx, stop := Context()
	defer stop()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
	if sig, ok := Cause(ctx); !ok || sig.Sig != syscall.SIGHUP || sig.Error() != "hung up (SIGHUP)" {
		t.Errorf("cause %v, %v", sig, ok)
	}
}
