package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/results"
)

func init() {
	commands = append(commands, &cli.Command{
		Name:  "topo",
		Usage: "show devices, peer access, P2P attributes, atomic capabilities and NVLinks",
		Description: "Reads what the driver (and NVML, when present) says about every selected device and\n" +
			"every ordered pair. --check also runs the documented error cases of the peer-access\n" +
			"calls on the real devices and reports where the driver differs from its documentation.",
		Flags: []cli.Flag{devicesFlag, simulateFlag, jsonFlag,
			&cli.BoolFlag{Name: "check", Usage: "run the driver conformance cases (leaves peer access as found)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "also write the results file `FILE`"},
		},
		Action: topoAction,
	})
}

func topoAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageError{fmt.Errorf("topo takes no arguments (got %q)", c.Args().First())}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := prepareOutput("--output", c.String("output")); err != nil {
		return err
	}
	run := newRun(s)
	env, topo, err := bench.Discover(s.drv, s.mon, s.devices)
	if err != nil {
		return err
	}
	run.Environment, run.Topology = env, topo
	if c.Bool("check") {
		cases, err := bench.Conformance(s.drv, s.devices)
		run.Topology.Conformance = cases
		if err != nil {
			run.Notes = append(run.Notes, "conformance check stopped: "+err.Error())
		}
	}
	run.End = run.Start
	run.Complete = true
	run.Environment.StateEnd = bench.ReadStates(s.mon, run.Environment.Devices)
	if out := c.String("output"); out != "" {
		if err := results.Write(out, run); err != nil {
			return err
		}
	}
	if c.Bool("json") {
		return run.Encode(os.Stdout)
	}
	printTopology(os.Stdout, run)
	return nil
}

// printTopology writes the human-readable form of topo.
func printTopology(w io.Writer, run *results.Run) {
	fmt.Fprint(w, simLabel(run))
	env := run.Environment
	fmt.Fprintf(w, "Driver: %s (CUDA %s, cuDriverGetVersion %d)", orDash(env.DriverRelease), env.CUDAVersion, env.DriverVersion)
	if env.Library != "" {
		fmt.Fprintf(w, ", library %s", env.Library)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DEV\tNAME\tUUID\tPCI BUS\tCC\tSMs\tMEMORY\tCOPY ENGINES\tUVA")
	for _, d := range env.Devices {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%s\t%d\t%s\n", d.Index, d.Name, d.UUID, d.PCIBusID, d.ComputeCapability,
			d.SMCount, results.FormatBytes(d.MemoryBytes), d.AsyncEngines, yesNo(d.UnifiedAddressing))
	}
	tw.Flush()
	t := run.Topology
	if t == nil || len(t.Devices) < 2 {
		fmt.Fprintln(w, "\nOne device selected: no pairs.")
		printConformance(w, t)
		return
	}
	pair := map[[2]int]results.Pair{}
	for _, p := range t.Pairs {
		pair[[2]int{p.Src, p.Dst}] = p
	}
	matrix := func(title string, cell func(p results.Pair) string) {
		fmt.Fprintf(w, "\n%s (row = accessing device, column = peer)\n", title)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "\t")
		for _, d := range t.Devices {
			fmt.Fprintf(tw, "%d\t", d)
		}
		fmt.Fprintln(tw)
		for _, a := range t.Devices {
			fmt.Fprintf(tw, "%d\t", a)
			for _, b := range t.Devices {
				if a == b {
					fmt.Fprint(tw, "-\t")
					continue
				}
				fmt.Fprintf(tw, "%s\t", cell(pair[[2]int{a, b}]))
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	matrix("Peer access (cuDeviceCanAccessPeer)", func(p results.Pair) string { return yesNo(p.CanAccessPeer) })
	for _, a := range cuda.P2PAttributes {
		name := a.Name
		matrix(fmt.Sprintf("P2P attribute %s (cuDeviceGetP2PAttribute %d)", name, a.Attr), func(p results.Pair) string {
			if v, ok := p.Attributes[name]; ok {
				return fmt.Sprint(v)
			}
			if e, ok := p.AttributeErrors[name]; ok {
				return "ERR: " + shortErr(e)
			}
			return "?"
		})
	}
	if hasLinks(t) {
		matrix("NVLinks (active links src→dst, theoretical GB/s each way)", func(p results.Pair) string {
			if p.NVLinks == 0 {
				return "none"
			}
			return fmt.Sprintf("NV%d %.0f", p.NVLinks, p.LinkGBps)
		})
	}
	fmt.Fprintln(w, "\nAtomic capabilities (cuDeviceGetP2PAtomicCapabilities), per ordered pair and operation:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PAIR\tOPERATION\tMASK\tCAPABILITIES")
	for _, p := range t.Pairs {
		if p.AtomicCapsError != "" {
			fmt.Fprintf(tw, "%d→%d\t(all)\t-\t%s\n", p.Src, p.Dst, p.AtomicCapsError)
			continue
		}
		ops := make([]string, 0, len(p.AtomicCaps))
		for _, o := range cuda.AtomicOperations {
			if _, ok := p.AtomicCaps[o.Name]; ok {
				ops = append(ops, o.Name)
			}
		}
		same := len(ops) > 1
		for _, o := range ops {
			same = same && p.AtomicCaps[o] == p.AtomicCaps[ops[0]]
		}
		if same {
			m := p.AtomicCaps[ops[0]]
			names := strings.Join(cuda.AtomicCapabilityNames(m), ", ")
			if names == "" {
				names = "none reported"
			}
			fmt.Fprintf(tw, "%d→%d	all %d operations	0x%02x	%s\n", p.Src, p.Dst, len(ops), m, names)
			continue
		}
		for _, o := range ops {
			m := p.AtomicCaps[o]
			names := strings.Join(cuda.AtomicCapabilityNames(m), ", ")
			if names == "" {
				names = "none reported"
			}
			fmt.Fprintf(tw, "%d→%d\t%s\t0x%02x\t%s\n", p.Src, p.Dst, o, m, names)
		}
	}
	tw.Flush()
	for _, n := range append(append([]string{}, env.Notes...), t.Notes...) {
		fmt.Fprintln(w, "note:", n)
	}
	printConformance(w, t)
}

func printConformance(w io.Writer, t *results.Topology) {
	if t == nil || len(t.Conformance) == 0 {
		return
	}
	fmt.Fprintln(w, "\nDriver conformance (documented vs observed):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CASE\tCALL\tPAIR\tDOCUMENTED\tOBSERVED\t")
	differ := 0
	for _, c := range t.Conformance {
		mark := "ok"
		if !c.Matches {
			mark = "DIFFERS"
			differ++
		}
		fmt.Fprintf(tw, "%s\t%s\t%d→%d\t%s\t%s\t%s\n", c.Name, c.Call, c.Src, c.Dst, c.Documented, c.Observed, mark)
	}
	tw.Flush()
	fmt.Fprintf(w, "%d case(s), %d differ from the documentation.\n", len(t.Conformance), differ)
}

func hasLinks(t *results.Topology) bool {
	for _, p := range t.Pairs {
		if p.NVLinks > 0 {
			return true
		}
	}
	return false
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// shortErr keeps the CUDA error name of a message.
func shortErr(s string) string {
	if i := strings.Index(s, "CUDA_ERROR_"); i >= 0 {
		rest := s[i:]
		if j := strings.IndexAny(rest, ": "); j > 0 {
			return rest[:j]
		}
		return rest
	}
	return s
}
