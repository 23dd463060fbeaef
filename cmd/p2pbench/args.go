package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// positionalArgs returns a command's positional arguments, applying the
// flags given after them: urfave/cli stops reading flags at the first
// argument, and `p2pbench report RESULTS.json -o report.pdf` is how people
// write it. "--" ends the flags.
func positionalArgs(c *cli.Context) ([]string, error) {
	boolFlag := map[string]bool{}
	// primary maps every name of a flag to its first: urfave/cli gives each
	// alias a value of its own, and reads the first.
	primary := map[string]string{}
	for _, f := range c.Command.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			primary[n] = f.Names()[0]
			boolFlag[n] = isBool
		}
	}
	var pos []string
	args := c.Args().Slice()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(pos, args[i+1:]...), nil
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if primary[name] == "" {
			return nil, usageError{fmt.Errorf("flag provided but not defined: %s", a)}
		}
		switch {
		case boolFlag[name] && !hasValue:
			value = "true"
		case !hasValue:
			if i+1 >= len(args) {
				return nil, usageError{fmt.Errorf("flag needs an argument: %s", a)}
			}
			i++
			value = args[i]
		}
		if err := c.Set(primary[name], value); err != nil {
			return nil, usageError{fmt.Errorf("invalid value %q for flag %s: %w", value, a, err)}
		}
	}
	return pos, nil
}
