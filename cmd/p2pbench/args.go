package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/results"
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
	primary, boolFlag, _ := flagIndex(c)
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
			return nil, usageError{badValue(c, primary[name], value)}
		}
	}
	return groups, nil
}

// onceEach refuses a flag of one value given more than once (`--simulate
// h200x2 --simulate dgx-h100`): urfave/cli would take the last without a
// word. Repeatable flags (--simulate-health) may repeat. It reads the
// command line as run received it: the command's arguments up to "--"
// (compare reads flags in every group).
//
// It also refuses a whole number that is not written in decimal: Go's flag
// package reads --rounds 0x2 as 2.
func onceEach(c *cli.Context) error {
	args, _ := c.App.Metadata[argsKey].([]string)
	at := slices.Index(args, c.Command.Name)
	if at < 0 {
		return nil
	}
	primary, boolFlag, repeatable := flagIndex(c)
	seen := map[string]string{}
	for i := at + 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if c.Command.Name == "compare" {
				continue
			}
			break
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		p := primary[name]
		if p == "" || repeatable[name] {
			continue
		}
		if !boolFlag[name] && !hasValue && i+1 < len(args) {
			i++ // its value, which may look like a flag
			value = args[i]
		}
		if kindOf(flagNamed(c, p)) == "a whole number" && !decimal.MatchString(value) {
			return usageError{badValue(c, p, value)}
		}
		if first, ok := seen[p]; ok {
			return usageError{fmt.Errorf("--%s given twice (%s, then %s): give it once", p, results.QuoteShort(first), results.QuoteShort(value))}
		}
		seen[p] = value
	}
	return nil
}

// flagIndex maps every name of the command's flags to the flag's first name
// (primary: urfave/cli gives each alias a value of its own, and reads the
// first), and says whether it is a bool flag and whether it may repeat.
func flagIndex(c *cli.Context) (primary map[string]string, isBool, repeatable map[string]bool) {
	primary, isBool, repeatable = map[string]string{}, map[string]bool{}, map[string]bool{}
	for _, f := range c.Command.Flags {
		_, b := f.(*cli.BoolFlag)
		_, slice := f.(*cli.StringSliceFlag)
		for _, n := range f.Names() {
			primary[n], isBool[n], repeatable[n] = f.Names()[0], b, slice
		}
	}
	return primary, isBool, repeatable
}

// decimal matches a whole number written in decimal.
var decimal = regexp.MustCompile(`^[+-]?[0-9]+$`)

// flagNamed is the command's flag of that name, nil when none.
func flagNamed(c *cli.Context, name string) cli.Flag {
	for _, f := range c.Command.Flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

// kindOf says what a flag's value is, for messages.
func kindOf(f cli.Flag) string {
	switch f.(type) {
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
		return "a whole number"
	case *cli.Float64Flag:
		return "a number"
	case *cli.DurationFlag:
		return "a duration such as 500ms, 5s or 2m"
	case *cli.BoolFlag:
		return "true or false"
	}
	return "a value"
}

// badValue is the error of a value a flag cannot take, in the flag's words
// (--samples, a whole number), not Go's flag package's (-samples: parse
// error).
func badValue(c *cli.Context, name, value string) error {
	return fmt.Errorf("--%s %s: want %s", name, results.QuoteShort(value), kindOf(flagNamed(c, name)))
}

// flagError rewrites urfave/cli's and Go's flag package's errors of a flag
// before the arguments ("invalid value "1e3" for flag -samples: parse
// error") in the flag's words.
func flagError(c *cli.Context, err error) error {
	if m := goFlagError.FindStringSubmatch(err.Error()); m != nil && flagNamed(c, m[2]) != nil {
		return badValue(c, m[2], m[1])
	}
	return err
}

// goFlagError matches Go's flag package's error of a bad value.
var goFlagError = regexp.MustCompile(`^invalid value "(.*)" for flag -+([A-Za-z0-9-]+): `)
