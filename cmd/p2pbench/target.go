package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/internal/cmdline"
	"github.com/p2pbench/p2pbench/internal/units"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/session"
)

// Flags of every command that opens the GPUs.
var (
	devicesFlag  = &cli.StringFlag{Name: "devices", Aliases: []string{"d"}, Usage: "devices to use, e.g. 0,2 or 0-3 (default: all)"}
	simulateFlag = &cli.StringFlag{Name: "simulate", Usage: "run on a simulated machine instead of the GPUs: " + strings.Join(sim.Machines(), ", ") + " (every figure is labelled SIMULATED)"}
	jsonFlag     = &cli.BoolFlag{Name: "json", Usage: "print the results as JSON instead of tables"}
	healthFlag   = &cli.StringSliceFlag{Name: "simulate-health", Usage: "with --simulate, inject a health condition `SPEC` (repeatable): " + strings.Join(sim.HealthSpecs, ", ")}
	seedFlag     = &cli.Int64Flag{Name: "simulate-seed", Value: 1, Usage: "with --simulate, the seed of the simulated machine's noise: runs with different seeds differ as runs of separate processes on a real machine do"}
)

// targetOf reads --devices, --simulate and --simulate-health into the
// machine a command asks for; it opens nothing.
func targetOf(c *cli.Context) (session.Target, error) {
	devices, err := units.ParseDeviceList(c.String("devices"))
	if err != nil {
		return session.Target{}, cmdline.Usage(err)
	}
	t := session.Target{Devices: devices, Sim: c.String("simulate"), Seed: c.Int64("simulate-seed")}
	if t.Sim != "" && !slices.Contains(sim.Machines(), t.Sim) {
		return t, cmdline.Usage(fmt.Errorf("unknown simulated machine %s; the machines are: %s", results.QuoteShort(t.Sim), strings.Join(sim.Machines(), ", ")))
	}
	if c.IsSet("simulate-seed") && t.Sim == "" {
		return t, cmdline.Usage(errors.New("--simulate-seed needs --simulate"))
	}
	for _, spec := range c.StringSlice("simulate-health") {
		if t.Sim == "" {
			return t, cmdline.Usage(fmt.Errorf("--simulate-health %s needs --simulate", spec))
		}
		o, err := sim.ParseHealth(spec)
		if err != nil {
			return t, cmdline.Usage(fmt.Errorf("--simulate-health: %w", err))
		}
		t.Health = append(t.Health, o)
	}
	return t, nil
}
