package session

import (
	"context"
	"errors"
	"os"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/ipc"
)

// Fabric opens one rank of a run across the nodes of a multi-node NVLink
// domain (o.Fabric, ipc.RunFabric) on its device. A rank other than 0
// serves rank 0 and returns no session. Rank 0 claims the results file
// o.Path and records its own node's environment (the ranks' devices come
// with the run); Measure measures. A failed check before measuring is of
// kind NoGPU: the machine is not ready to measure.
func Fabric(ctx context.Context, o Options) (*Session, error) {
	fo := o.Fabric
	m, err := Open(Target{Devices: []int{fo.Device}})
	if err != nil {
		return nil, err
	}
	fo.Monitor = m.Monitor
	if fo.Rank != 0 {
		defer m.Close()
		return nil, fabricError(ipc.RunFabric(ctx, m.Driver, *fo, nil))
	}
	if fo.Child, err = o.Child(m); err != nil {
		m.Close()
		return nil, err
	}
	return fabricRecord(ctx, o, m)
}

// measureFabric is rank 0's run across the nodes.
func (s *Session) measureFabric() error {
	fo := *s.opt.Fabric
	fo.Progress = s.progress
	s.Run.Verify = fo.Verify
	s.stopNote = "every rank was told to stop"
	err := ipc.RunFabric(s.ctx, s.Machine.Driver, fo, s.Run)
	if errors.Is(err, ipc.ErrPreflight) {
		return fabricError(err)
	}
	// This node's NVML reads none of the other nodes' GPUs: the run's end
	// reads no state or health of it, and Close closes it.
	s.fabricMonitor, s.Machine.Monitor = s.Machine.Monitor, nil
	return err
}

// fabricError gives a failed check before measuring the kind NoGPU.
func fabricError(err error) error {
	if errors.Is(err, ipc.ErrPreflight) {
		return noGPU(err)
	}
	return err
}

// fabricRecord starts rank 0's session on machine m: its results file,
// and the environment of its own node.
func fabricRecord(ctx context.Context, o Options, m *Machine) (*Session, error) {
	s := &Session{ctx: ctx, opt: o, Machine: m}
	if o.Path != "" {
		var err error
		if s.file, err = claimResults(o.Path); err != nil {
			m.Close()
			return nil, err
		}
	}
	s.Run = m.Record(o.Version, o.Args)
	env := &s.Run.Environment
	v, err := m.Driver.DriverVersion()
	if err != nil {
		s.Close()
		return nil, err
	}
	env.DriverVersion, env.CUDAVersion, env.Library = v, cuda.CUDAVersionString(v), m.Driver.Describe()
	if m.Monitor != nil {
		env.DriverRelease, _ = m.Monitor.DriverRelease()
	}
	if s.file != nil {
		s.file.run = s.Run
	}
	return s, nil
}

// Child names, for a child of the tests across processes, the machine it
// opens: the parent's simulated machine with its seed and the file of its
// NVLink counters, or the GPUs.
type Child struct {
	Sim     string
	Seed    int64
	Traffic string
}

// Serve is one child of the tests across processes: it opens the driver
// the parent uses (real or the same simulated machine) and serves the
// parent on descriptor 3 (ipc.Serve).
func Serve(ctx context.Context, c Child) error {
	conn, err := ipc.ChildConn()
	if err != nil {
		return err
	}
	var drv gpu.Driver
	if c.Sim != "" {
		opts := []sim.Option{sim.WithSeed(c.Seed), sim.AsIPCChild()}
		if c.Traffic != "" {
			// The parent's counters; without them this child counts
			// for itself.
			if f, err := os.OpenFile(c.Traffic, os.O_RDWR|os.O_APPEND, 0); err == nil {
				opts = append(opts, sim.WithSharedTraffic(f))
			}
		}
		d, err := sim.New(c.Sim, opts...)
		if err != nil {
			conn.Close()
			return usage(err)
		}
		drv = d
	} else {
		d, err := cuda.Open()
		if err != nil {
			conn.Close()
			return noGPU(err)
		}
		drv = gpu.NewCUDADriver(d)
	}
	defer drv.Close()
	return ipc.Serve(ctx, drv, conn)
}
