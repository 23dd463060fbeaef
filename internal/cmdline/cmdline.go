// Package cmdline reads a command line through urfave/cli the way people
// write one: flags after the positional arguments, "--" groups, a flag of
// one value given once, and errors of a bad flag in the flag's words. It
// also holds the one error type of a bad command line (UsageError), which
// the program's exit status maps to 2.
package cmdline

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/results"
)

// UsageError marks a bad command line: a flag, a value, an argument or a
// command.
type UsageError struct{ Err error }

func (u UsageError) Error() string { return u.Err.Error() }
func (u UsageError) Unwrap() error { return u.Err }

// Usage marks err as a bad command line.
func Usage(err error) error { return UsageError{err} }

// IsUsage reports whether err is, or wraps, a bad command line.
func IsUsage(err error) bool { return errors.As(err, new(UsageError)) }

// argsKey is the key of the command line in an App's Metadata.
const argsKey = "args"

// Record keeps the command line args in app, for Args and OnceEach.
func Record(app *cli.App, args []string) {
	if app.Metadata == nil {
		app.Metadata = map[string]any{}
	}
	app.Metadata[argsKey] = args
}

// Args is the command line that Record kept, nil when none.
func Args(c *cli.Context) []string {
	args, _ := c.App.Metadata[argsKey].([]string)
	return args
}

// Positional returns a command's positional arguments, applying the flags
// given after them: urfave/cli stops reading flags at the first argument,
// and `p2pbench report RESULTS.json -o report.pdf` is how people write it.
// "--" ends the flags.
func Positional(c *cli.Context) ([]string, error) {
	groups, err := readArgs(c, false)
	if err != nil {
		return nil, err
	}
	return groups[0], nil
}

// NoArgs refuses positional arguments to a command that takes none.
func NoArgs(c *cli.Context) error {
	if c.NArg() > 0 {
		return Usage(fmt.Errorf("%s takes no arguments (got %s)", c.Command.Name, results.QuoteShort(c.Args().First())))
	}
	return nil
}

// Groups is Positional for a command whose arguments come in groups: each
// "--" starts another (`compare base1.json base2.json -- new1.json`), and
// flags are read anywhere.
func Groups(c *cli.Context) ([][]string, error) { return readArgs(c, true) }

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
			return nil, Usage(fmt.Errorf("flag provided but not defined: %s", a))
		}
		switch {
		case boolFlag[name] && !hasValue:
			value = "true"
		case !hasValue:
			if i+1 >= len(args) {
				return nil, Usage(fmt.Errorf("flag needs an argument: %s", a))
			}
			i++
			value = args[i]
		}
		if err := c.Set(primary[name], value); err != nil {
			return nil, Usage(badValue(c, primary[name], value))
		}
	}
	return groups, nil
}

// OnceEach refuses a flag of one value given more than once (`--simulate
// h200x2 --simulate dgx-h100`): urfave/cli would take the last without a
// word. Repeatable flags (string slices) may repeat. It reads the command
// line that Record kept: the command's arguments up to "--" (in every
// group for a command of Groups, named in grouped).
//
// It also refuses a whole number that is not written in decimal: Go's flag
// package reads --rounds 0x2 as 2.
func OnceEach(c *cli.Context, grouped ...string) error {
	args := Args(c)
	at := slices.Index(args, c.Command.Name)
	if at < 0 {
		return nil
	}
	primary, boolFlag, repeatable := flagIndex(c)
	seen := map[string]string{}
	for i := at + 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if slices.Contains(grouped, c.Command.Name) {
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
			return Usage(badValue(c, p, value))
		}
		if first, ok := seen[p]; ok {
			return Usage(fmt.Errorf("--%s given twice (%s, then %s): give it once", p, results.QuoteShort(first), results.QuoteShort(value)))
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

// FlagError is a command's OnUsageError: urfave/cli's and Go's flag
// package's error of a flag before the arguments ("invalid value "1e3" for
// flag -samples: parse error") in the flag's words, as a bad command line.
func FlagError(c *cli.Context, err error, _ bool) error {
	if m := goFlagError.FindStringSubmatch(err.Error()); m != nil && flagNamed(c, m[2]) != nil {
		return Usage(badValue(c, m[2], m[1]))
	}
	return Usage(err)
}

// goFlagError matches Go's flag package's error of a bad value.
var goFlagError = regexp.MustCompile(`^invalid value "(.*)" for flag -+([A-Za-z0-9-]+): `)

// MaxMessageBytes bounds an error's line: a message quoting an argument or
// a file (a 1 MB number, a 5000-byte process name) is cut, saying how much.
const MaxMessageBytes = 2048

// Clip cuts msg to MaxMessageBytes on a UTF-8 boundary.
func Clip(msg string) string {
	if len(msg) <= MaxMessageBytes {
		return msg
	}
	n := MaxMessageBytes
	for n > 0 && !utf8.RuneStart(msg[n]) {
		n--
	}
	return fmt.Sprintf("%s … [%d bytes of the message cut]", msg[:n], len(msg)-n)
}
