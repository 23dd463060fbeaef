package cmdline

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/urfave/cli/v2"
)

// runApp runs args through an App of two commands, "r" (positional
// arguments) and "c" (groups), each with the usual flags, and returns what
// the action read.
func runApp(t *testing.T, args ...string) (groups [][]string, flags map[string]any, err error) {
	t.Helper()
	flagsOf := func() []cli.Flag {
		return []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}},
			&cli.IntFlag{Name: "n"},
			&cli.BoolFlag{Name: "b"},
			&cli.StringSliceFlag{Name: "each"},
		}
	}
	read := func(c *cli.Context) {
		flags = map[string]any{"output": c.String("output"), "n": c.Int("n"), "b": c.Bool("b"), "each": c.StringSlice("each")}
	}
	app := &cli.App{
		Name:           "p",
		ExitErrHandler: func(*cli.Context, error) {},
		Commands: []*cli.Command{
			{Name: "r", Flags: flagsOf(), Action: func(c *cli.Context) error {
				g, err := Positional(c)
				groups = [][]string{g}
				read(c)
				return err
			}},
			{Name: "n", Flags: flagsOf(), Action: NoArgs},
			{Name: "c", Flags: flagsOf(), Action: func(c *cli.Context) error {
				var err error
				groups, err = Groups(c)
				read(c)
				return err
			}},
		},
	}
	for _, c := range app.Commands {
		c.OnUsageError = FlagError
		c.Before = func(c *cli.Context) error { return OnceEach(c, "c") }
	}
	Record(app, args)
	err = app.Run(args)
	return groups, flags, err
}

func TestPositionalReadsFlagsAfterArguments(t *testing.T) {
	groups, flags, err := runApp(t, "p", "r", "in.json", "-o", "out.pdf", "--b", "--n=3", "--", "-x")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(groups[0], " "); got != "in.json -x" {
		t.Errorf("arguments %q, want in.json -x (\"--\" ends the flags)", got)
	}
	if flags["output"] != "out.pdf" || flags["b"] != true || flags["n"] != 3 {
		t.Errorf("flags %v", flags)
	}
}

func TestGroupsSplitAtDoubleDash(t *testing.T) {
	groups, flags, err := runApp(t, "p", "c", "a", "b", "--", "c", "--n", "2", "--", "d")
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 3 || strings.Join(groups[0], ",") != "a,b" || strings.Join(groups[1], ",") != "c" || strings.Join(groups[2], ",") != "d" {
		t.Errorf("groups %q", groups)
	}
	if flags["n"] != 2 {
		t.Errorf("--n in the second group read as %v", flags["n"])
	}
}

func TestBadCommandLinesAreUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"p", "r", "--n", "1", "--n", "2"}, `--n given twice ("1", then "2")`},
		{[]string{"p", "r", "x", "-o", "a", "-o", "b"}, `--output given twice`},
		{[]string{"p", "c", "x", "--", "y", "--n=1", "--", "--n=2"}, `--n given twice`},
		{[]string{"p", "r", "--n", "0x2"}, `--n "0x2": want a whole number`},
		{[]string{"p", "r", "--n", "1e3"}, `--n "1e3": want a whole number`},
		{[]string{"p", "r", "x", "--n", "many"}, `--n "many": want a whole number`},
		{[]string{"p", "r", "x", "--nope"}, "flag provided but not defined: --nope"},
		{[]string{"p", "r", "x", "-o"}, "flag needs an argument: -o"},
		{[]string{"p", "n", "--b", "extra"}, `n takes no arguments (got "extra")`},
	} {
		_, _, err := runApp(t, c.args...)
		if err == nil || !IsUsage(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v (usage %v), want a usage error saying %q", c.args, err, IsUsage(err), c.want)
		}
	}
	if _, flags, err := runApp(t, "p", "r", "--each", "a", "--each", "b"); err != nil || len(flags["each"].([]string)) != 2 {
		t.Errorf("a repeatable flag given twice: %v, %v", err, flags["each"])
	}
	if _, _, err := runApp(t, "p", "n", "--b"); err != nil {
		t.Errorf("no arguments: %v", err)
	}
	if IsUsage(errors.New("plain")) {
		t.Error("a plain error counted as a usage error")
	}
}

func TestClip(t *testing.T) {
	if m := Clip("short"); m != "short" {
		t.Errorf("Clip changed a short message: %q", m)
	}
	m := Clip(strings.Repeat("é", 5000))
	if len(m) > MaxMessageBytes+100 || !utf8.ValidString(m) || !strings.Contains(m, "bytes of the message cut") {
		t.Errorf("Clip: %d bytes, valid UTF-8 %v, %q…", len(m), utf8.ValidString(m), m[len(m)-60:])
	}
}
