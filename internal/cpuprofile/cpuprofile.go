// Package cpuprofile writes a CPU profile of a whole command, for tuning
// the program itself: where the host's time goes between and around the
// GPU's work.
package cpuprofile

import (
	"bytes"
	"io"
	"runtime/pprof"

	"github.com/p2pbench/p2pbench/internal/outfile"
)

// Start profiles the process into path, when path is not empty, and
// returns what ends the profile and writes it. The file is an output like
// any other (internal/outfile): a device, FIFO, directory, path in /proc or
// another user's link is refused before anything runs, and so is a path of
// the command line args (an input it would destroy, an output it would
// replace: -o, or --dir's results.json); the profile is kept in memory and
// written atomically at the end.
func Start(path string, args []string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	if err := outfile.CheckApart(path, outfile.CommandPaths(args)...); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return outfile.Write(path, func(w io.Writer) error { _, err := buf.WriteTo(w); return err })
	}, nil
}
