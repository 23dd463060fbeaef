// Package interrupt ends a command on a signal the same way whatever it is
// doing: SIGINT, SIGTERM and SIGHUP cancel the command's context with the
// signal as its cause, a measuring command saves what it measured, and work
// that writes nothing (reading an input, rendering into memory) is left
// behind at once (Wait).
package interrupt

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// Signal is the cause of a context cancelled by a signal.
type Signal struct{ Sig syscall.Signal }

func (s Signal) Error() string {
	switch s.Sig {
	case syscall.SIGINT:
		return "interrupted (SIGINT)"
	case syscall.SIGHUP:
		return "hung up (SIGHUP)"
	case syscall.SIGTERM:
		return "stopped (SIGTERM)"
	}
	return "stopped by " + s.Sig.String()
}

// Signals all end a command the same way.
var Signals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// Context returns a context that the first of Signals cancels, with a
// Signal as its cause; stop restores the signals' default.
func Context() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, Signals...)
	go func() {
		select {
		case s := <-ch:
			cancel(Signal{s.(syscall.Signal)})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(nil)
	}
}

// Cause reports whether ctx was cancelled by a signal, and which.
func Cause(ctx context.Context) (Signal, bool) {
	var sig Signal
	ok := errors.As(context.Cause(ctx), &sig)
	return sig, ok
}

// Wait runs f and returns what it returns, or ctx's cause as soon as ctx
// is cancelled; f is then left running, and the program exits. It is for
// work that writes no file: reading inputs (a FIFO with no writer blocks in
// open) and computing or rendering into memory.
func Wait[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, context.Cause(ctx)
	}
}
