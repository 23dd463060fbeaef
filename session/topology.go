package session

import (
	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/results"
)

// Topology is a run of the topology alone on o.Target's machine: its
// environment, topology and state, and with check the driver conformance
// cases (bench.Conformance; a case that stops them is noted).
func Topology(o Options, check bool) (*results.Run, error) {
	m, err := Open(o.Target)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	run := m.Record(o.Version, o.Args)
	if err := m.Discover(run); err != nil {
		return nil, err
	}
	if check {
		cases, err := bench.Conformance(m.Driver, m.Devices)
		run.Topology.Conformance = cases
		if err != nil {
			run.Notes = append(run.Notes, "conformance check stopped: "+err.Error())
		}
	}
	run.End = run.Start
	run.Complete = true
	run.Environment.StateEnd = bench.ReadStates(m.Monitor, run.Environment.Devices)
	return run, nil
}

// Plan is the plan of the tests opt asks for on t's machine (--dry-run):
// it reads the topology (no context is created) and measures nothing.
func Plan(t Target, opt bench.Options) (*bench.Preview, error) {
	m, err := Open(t)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	env, topo, err := bench.Discover(m.Driver, m.Monitor, m.Devices)
	if err != nil {
		return nil, err
	}
	opt.Devices = m.Devices
	return bench.NewPreview(opt, env, topo), nil
}
