package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
)

// positionalArgs returns a command's positional arguments, applying the
// flags given after them: urfave/cli stops reading flags at the first
// argument, and `p2pbench report RESULTS.json -o report.pdf` is how people
// write it. "--" ends the flags.
func positionalArgs(c *cli.Context) ([]string, error) {
	groups, err := readArgs(c, false)
	if err != nil {
		return nil, err
	}
	return groups[0], nil
}

// positionalGroups is positionalArgs for compare: each "--" starts another
// group of arguments (`compare base1.json base2.json -- new1.json`), and
// flags are read anywhere.
func positionalGroups(c *cli.Context) ([][]string, error) { return readArgs(c, true) }

// readArgs applies the flags among a command's arguments and returns the
// rest, in groups that "--" separates (grouped), or in one group after
// which "--" leaves the rest as they are.
func readArgs(c *cli.Context, grouped bool) ([][]string, error) {
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
	groups := [][]string{nil}
	args := c.Args().Slice()
	for i := 0; i < len(args); i++ {
		a, last := args[i], len(groups)-1
		switch {
		case a == "--" && grouped:
			groups = append(groups, nil)
			continue
		case a == "--":
			groups[last] = append(groups[last], args[i+1:]...)
			return groups, nil
		case len(a) < 2 || a[0] != '-':
			groups[last] = append(groups[last], a)
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
	return groups, nil
}

// resultsStem is a results file's path without its extension (".json", or
// ".json.gz" of a compressed file), to name what is made of it beside it.
func resultsStem(path string) string {
	path = strings.TrimSuffix(path, ".gz")
	return strings.TrimSuffix(path, filepath.Ext(path))
}
