package cmdline

import (
	"flag"
	"reflect"

	"github.com/urfave/cli/v2"
)

// sharedBool is a boolean flag that urfave/cli keeps in a package variable
// and adds to every App and command it parses: its help and version flags.
// The library's BoolFlag.Apply writes into the flag (the default it keeps
// for the help text); sharedBool applies a copy, so command lines parsed at
// once in one process (the tests run them in parallel) write nothing they
// share. Everything else, the help text included, is the BoolFlag's.
type sharedBool struct{ *cli.BoolFlag }

// Apply registers the flag on set through a copy of the definition.
func (f sharedBool) Apply(set *flag.FlagSet) error {
	c := *f.BoolFlag
	return c.Apply(set)
}

// GetDefaultText is the BoolFlag's, and nothing where it hides its
// default: urfave/cli reads DisableDefaultText only from a *cli.BoolFlag.
func (f sharedBool) GetDefaultText() string {
	if f.DisableDefaultText {
		return ""
	}
	return f.BoolFlag.GetDefaultText()
}

// ShareHelpAndVersion makes urfave/cli's help and version flags safe to
// parse from several goroutines at once. Call it once, before any App runs.
func ShareHelpAndVersion() {
	for _, p := range []*cli.Flag{&cli.HelpFlag, &cli.VersionFlag} {
		if b, ok := (*p).(*cli.BoolFlag); ok {
			*p = sharedBool{b}
		}
	}
}

// Own returns a copy of each of flags: urfave/cli writes into a flag's
// definition as it parses (the default it keeps for the help text), and a
// program whose flags are package variables, shared by its commands, gives
// each App its own so that command lines parsed at once share nothing. A
// copy has the definition's fields (names, usage, default); nothing of a
// parse, which only the copy sees.
func Own(flags []cli.Flag) []cli.Flag {
	own := make([]cli.Flag, len(flags))
	for i, f := range flags {
		own[i] = f
		if v := reflect.ValueOf(f); v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Kind() == reflect.Struct {
			c := reflect.New(v.Elem().Type())
			c.Elem().Set(v.Elem())
			own[i] = c.Interface().(cli.Flag)
		}
	}
	return own
}
