package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/ingest"
	"github.com/p2pbench/p2pbench/internal/cmdline"
	"github.com/p2pbench/p2pbench/internal/interrupt"
	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/internal/units"
	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/results"
)

func importCommand() *cli.Command {
	var formats []string
	for _, f := range ingest.Formats() {
		formats = append(formats, fmt.Sprintf("   %-18s %s", f[0], f[1]))
	}
	return &cli.Command{
		Name:      "import",
		Usage:     "convert other tools' results (nvbandwidth, nccl-tests) into p2pbench results files",
		ArgsUsage: "FILE...",
		Description: "Each input becomes one results file marked as imported: what the tool printed, one\n" +
			"value per figure (no samples, so compare cannot test significance: it says so), with\n" +
			"what the input does not tell listed in the file. Formats (--format, default auto):\n" +
			strings.Join(formats, "\n"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "auto", Usage: "input format (see above)"},
			&cli.StringFlag{Name: "buffer-size", Usage: "the buffer nvbandwidth copied (its -b), when not its default"},
			&cli.StringFlag{Name: "collective", Usage: "the nccl-tests collective of output that does not name it: " + strings.Join(results.NCCLCollectives(), ", ")},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "results `FILE` (one input only)"},
			&cli.StringFlag{Name: "dir", Value: ".", Usage: "directory `DIR` for INPUT.p2pbench.json files"},
		},
		Action: importAction,
	}
}

func importAction(c *cli.Context) error {
	inputs, err := cmdline.Positional(c)
	if err != nil {
		return err
	}
	if len(inputs) == 0 {
		return cmdline.Usage(fmt.Errorf("import needs at least one file"))
	}
	opt, err := importOptions(c)
	if err != nil {
		return err
	}
	outs, err := ingest.Outputs(inputs, c.String("output"), c.String("dir"))
	if err != nil {
		return optionError(err)
	}
	// Convert everything before writing anything: one bad input writes no file.
	runs := make([]*results.Run, len(inputs))
	for i, in := range inputs {
		if runs[i], err = importOne(c, in, opt); err != nil {
			return err
		}
	}
	for i, run := range runs {
		if err := outfile.Write(outs[i], run.Encode); err != nil {
			return err
		}
		fmt.Fprintf(c.App.Writer, "%s: %s (%s): %d figures of %d tests → %s\n", inputs[i], run.Imported.Format,
			strings.TrimSpace(run.Tool.Name+" "+run.Tool.Version), len(run.Figures), len(run.Tests()), outs[i])
		for _, n := range report.BoundedNotes(run.Notes) {
			fmt.Fprintf(c.App.Writer, "  note: %s\n", n)
		}
	}
	return nil
}

// importOptions reads the flags of import.
func importOptions(c *cli.Context) (ingest.Options, error) {
	opt := ingest.Options{Importer: "p2pbench " + version, Collective: c.String("collective")}
	var err error
	if opt.Format, err = ingest.ParseFormat(c.String("format")); err != nil {
		return opt, cmdline.Usage(err)
	}
	if s := c.String("buffer-size"); s != "" {
		if opt.BufferSize, err = units.ParseSize(s); err != nil {
			return opt, cmdline.Usage(fmt.Errorf("--buffer-size: %w", err))
		}
	}
	if err := opt.Validate(); err != nil {
		return opt, cmdline.Usage(err)
	}
	if c.IsSet("output") && c.IsSet("dir") {
		return opt, cmdline.Usage(fmt.Errorf("-o and --dir exclude each other: -o names the one results file, --dir where each input's goes"))
	}
	return opt, nil
}

// importOne converts the input in: an option the input cannot take is a
// usage error, and an input of no figure is no success (exit status 4).
func importOne(c *cli.Context, in string, opt ingest.Options) (*results.Run, error) {
	run, err := interrupt.Wait(c.Context, func() (*results.Run, error) { return ingest.Import(in, opt) })
	if err != nil {
		return nil, optionError(err)
	}
	if len(run.Figures) == 0 {
		return nil, failedFigures(fmt.Errorf("%s: %s holds no figure to import (no test case measured anything); nothing written", in, run.Imported.Format))
	}
	return run, nil
}

// optionError is err, a bad command line where an option of the import is
// at fault (ingest.Error.Option).
func optionError(err error) error {
	if ie := (*ingest.Error)(nil); errors.As(err, &ie) && ie.Option {
		return cmdline.Usage(err)
	}
	return err
}
