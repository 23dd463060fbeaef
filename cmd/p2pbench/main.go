// Command p2pbench measures GPU-to-GPU (P2P) links: topology and driver
// attributes, copy-engine and SM bandwidth, latency, atomics and IPC, into a
// versioned results file that it can plot, report on and compare.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// commands is filled by the init functions of the cmd_*.go files, one file per
// subcommand, so each command's wiring stands on its own.
var commands []*cli.Command

func main() {
	os.Exit(run(os.Args))
}

func run(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app := &cli.App{
		Name:     "p2pbench",
		Usage:    "benchmark GPU-to-GPU links: topology, bandwidth, latency, atomics, IPC",
		Version:  version,
		Commands: commands,
		// Errors are printed once, by run, without usage noise.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, isSub bool) error {
			return usageError{err}
		},
		HideHelpCommand: true,
	}
	if err := app.RunContext(ctx, args); err != nil {
		fmt.Fprintf(os.Stderr, "p2pbench: %v\n", err)
		var ue usageError
		if errors.As(err, &ue) {
			return 2
		}
		var ec cli.ExitCoder
		if errors.As(err, &ec) && ec.ExitCode() != 0 {
			return ec.ExitCode()
		}
		return 1
	}
	return 0
}

// usageError marks bad flags or arguments (exit status 2).
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }
