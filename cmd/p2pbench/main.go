// Command p2pbench measures GPU-to-GPU (P2P) links: topology and driver
// attributes, copy-engine and SM bandwidth, latency, atomics and IPC, into a
// versioned results file that it can show, plot, report on and compare.
//
// This package is the command line only: it reads flags into the option
// structs of the packages that do the work, checks them before any work,
// and wires those packages together. Every command writes to the writers of
// its cli.App, so that run, which main calls, is also what the tests call.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/internal/cmdline"
	"github.com/p2pbench/p2pbench/internal/cpuprofile"
	"github.com/p2pbench/p2pbench/internal/interrupt"
	"github.com/p2pbench/p2pbench/internal/termsafe"
	"github.com/p2pbench/p2pbench/results"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// run may parse command lines from several goroutines at once (the tests
// do): urfave/cli's help and version flags are package variables.
func init() { cmdline.ShareHelpAndVersion() }

func main() {
	stop, err := cpuprofile.Start(os.Getenv("P2PBENCH_CPUPROFILE"), os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "p2pbench: P2PBENCH_CPUPROFILE: %v\n", err)
		os.Exit(exitUsage)
	}
	code := run(os.Args, os.Stdout, os.Stderr)
	if err := stop(); err != nil {
		fmt.Fprintf(os.Stderr, "p2pbench: P2PBENCH_CPUPROFILE: %v\n", err)
	}
	os.Exit(code)
}

// run runs the command line args with its output on stdout and its errors
// on stderr, and returns the exit status (see exitStatusHelp). SIGINT,
// SIGTERM and SIGHUP cancel the command's context while it runs.
func run(args []string, stdout, stderr io.Writer) int {
	// Text from results files (host names, params, notes) may hold escape
	// sequences: nothing p2pbench prints may control the terminal.
	stdout, stderr = termsafe.New(stdout), termsafe.New(stderr)
	ctx, stop := interrupt.Context()
	defer stop()
	app := newApp(stdout, stderr)
	cmdline.Record(app, args)
	err := app.RunContext(ctx, args)
	if err == nil {
		return exitOK
	}
	// urfave/cli answers -h followed by an argument with an exit error of
	// its own (status 1 here): it is a bad command line, status 2.
	if topic, ok := strings.CutPrefix(err.Error(), "No help topic for "); ok {
		err = cmdline.Usage(fmt.Errorf("no help topic %s: --help takes no argument (p2pbench --help, p2pbench COMMAND --help)", results.QuoteShort(strings.Trim(topic, "'"))))
	}
	fmt.Fprintf(stderr, "p2pbench: %s\n", cmdline.Clip(err.Error()))
	return exitStatus(ctx, err)
}

// newApp is the command line, its commands in docs/commands.md's order.
func newApp(stdout, stderr io.Writer) *cli.App {
	commands := []*cli.Command{
		topoCommand(),
		measureCommand("bw", "measure bandwidth of every ordered pair: copy engine and SM, read, write, both ways, aggregates"),
		measureCommand("lat", "measure latency: pointer chase, ping-pong, small-copy completion"),
		measureCommand("atomic", "measure atomics over each link and locally: throughput, contention and latency, results checked exactly"),
		ipcCommand(),
		mnnvlCommand(),
		measureCommand("all", "topo + every test into a results directory, with a summary and a verdict"),
		checkCommand(),
		showCommand(),
		plotCommand(),
		reportCommand(),
		compareCommand(),
		fleetCommand(),
		importCommand(),
	}
	commands = append(commands, docsCommands()...)
	commands = append(commands, ipcChildCommand())
	var names []string
	for _, c := range commands {
		// A bad flag value or an unknown flag is one line and exit status
		// 2, never the help page.
		c.OnUsageError = cmdline.FlagError
		// Each App parses into flags of its own (several run at once in
		// the tests).
		c.Flags = cmdline.Own(c.Flags)
		// A flag of one value given twice is refused, never the last one
		// taken without a word (compare reads flags in every group).
		c.Before = func(c *cli.Context) error { return cmdline.OnceEach(c, "compare") }
		if !c.Hidden {
			names = append(names, c.Name)
		}
	}
	return &cli.App{
		Name:        "p2pbench",
		Usage:       "benchmark GPU-to-GPU links: topology, bandwidth, latency, atomics, IPC",
		Description: exitStatusHelp,
		Version:     version,
		Commands:    commands,
		Writer:      stdout,
		ErrWriter:   stderr,
		// Errors are printed once, by run, without usage noise.
		ExitErrHandler:       func(*cli.Context, error) {},
		OnUsageError:         func(_ *cli.Context, err error, _ bool) error { return cmdline.Usage(err) },
		HideHelpCommand:      true,
		EnableBashCompletion: true,
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return cli.ShowAppHelp(c)
			}
			return cmdline.Usage(fmt.Errorf("unknown command %q; the commands are %s (help: p2pbench --help, p2pbench COMMAND --help)", c.Args().First(), strings.Join(names, ", ")))
		},
	}
}
