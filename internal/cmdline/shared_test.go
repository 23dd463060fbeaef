package cmdline

import (
	"flag"
	"io"
	"testing"

	"github.com/urfave/cli/v2"
)

// A parse through Own's copies leaves the definitions as they were: here a
// flag read from the environment, which urfave/cli writes into the flag it
// parses with.
func TestOwnLeavesTheDefinitions(t *testing.T) {
	t.Setenv("P2PBENCH_TEST_OWN", "from-env")
	def := &cli.StringFlag{Name: "x", Value: "default", EnvVars: []string{"P2PBENCH_TEST_OWN"}}
	flags := []cli.Flag{def}
	var got string
	app := &cli.App{Writer: io.Discard, ErrWriter: io.Discard, Commands: []*cli.Command{{
		Name:   "c",
		Flags:  Own(flags),
		Action: func(c *cli.Context) error { got = c.String("x"); return nil },
	}}}
	if err := app.Run([]string{"p", "c"}); err != nil {
		t.Fatal(err)
	}
	if got != "from-env" {
		t.Errorf("the parse read %q, want the environment's", got)
	}
	if def.Value != "default" || def.IsSet() {
		t.Errorf("the definition was written by the parse: value %q, set %v", def.Value, def.IsSet())
	}
	if own := Own(flags); own[0] == flags[0] || own[0].String() != def.String() {
		t.Errorf("Own gave %v (%s), want a copy of %v (%s)", own[0], own[0].String(), def, def.String())
	}
}

// sharedBool applies a copy, and its help text is the BoolFlag's, with
// and without its default.
func TestSharedBool(t *testing.T) {
	t.Setenv("P2PBENCH_TEST_SHARED", "true")
	for _, hide := range []bool{true, false} {
		def := &cli.BoolFlag{Name: "help", Aliases: []string{"h"}, Usage: "show help", DisableDefaultText: hide, EnvVars: []string{"P2PBENCH_TEST_SHARED"}}
		want := def.String()
		set := flag.NewFlagSet("t", flag.ContinueOnError)
		if err := (sharedBool{def}).Apply(set); err != nil {
			t.Fatal(err)
		}
		if def.Value || def.IsSet() {
			t.Errorf("Apply wrote into the definition: %+v", def)
		}
		if v := set.Lookup("help"); v == nil || v.Value.String() != "true" {
			t.Errorf("the flag set's help: %v", v)
		}
		if got := cli.FlagStringer(sharedBool{def}); got != want {
			t.Errorf("help text %q, want the BoolFlag's %q", got, want)
		}
	}
}
