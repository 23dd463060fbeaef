package gpu

import (
	"errors"

	"github.com/p2pbench/p2pbench/results"
)

// ErrNoCounters is the answer of a Monitor without NVLink counters.
var ErrNoCounters = errors.New("no NVLink counters")

// ErrNoFabric is the answer of a Monitor that knows of no NVLink fabric.
var ErrNoFabric = errors.New("no GPU fabric")

// Fabric is the multi-node NVLink domain a GPU belongs to, as NVML's GPU
// fabric info gives it: the GPUs of one domain share ClusterUUID and
// CliqueID.
type Fabric struct {
	ClusterUUID string `json:"cluster_uuid"`
	CliqueID    uint32 `json:"clique_id"`
	// Unregistered says why the GPU is not registered with the fabric
	// manager ("registration in progress", "registration failed: ..."); ""
	// when it is.
	Unregistered string `json:"unregistered,omitempty"`
}

// Monitor is the optional source of what the driver API does not tell:
// NVLink details, clocks, temperature and power, the machine's health, the
// processes on its GPUs and their PCIe links (NVML on real machines, the machine description
// on simulated ones). A nil Monitor means none.
type Monitor interface {
	// DriverRelease is the driver's release string, e.g. "580.159.04".
	DriverRelease() (string, error)
	// Links lists the NVLinks of a device, identified by index and PCI bus id.
	// RemoteDev in each link is left for the caller to resolve (-1).
	Links(dev int, busID string) ([]results.Link, error)
	// State reads clocks, temperature and power of a device.
	State(dev int, busID string) (results.DeviceState, error)
	// Traffic reads the NVLink throughput counters of a device, summed over
	// its links (bytes since the driver started: callers take differences).
	Traffic(dev int, busID string) (results.LinkCounts, error)
	// Health reads a device's NVLinks (state, speed, error counters, and
	// LinkErrorTotals' totals), ECC counts, row remapping and throttle
	// reasons, with the time the reading began. What cannot be read is
	// named in Health.Unavailable; the error is for a device that cannot be
	// read at all.
	Health(dev int, busID string) (results.Health, error)
	// LinkErrorTotals reads a device's NVLink error counters summed over
	// its links by the driver (the GPU-total fields DCGM's health watch
	// reads) and its data-link totals: a cheap reading, taken between
	// tests. A total the driver did not give is absent and named in
	// Unavailable (results.LinkTotalMissing); the error is for a reading
	// that gave nothing (a device without NVLinks answers ErrNoCounters).
	LinkErrorTotals(dev int, busID string) (results.LinkTotals, error)
	// Throttle reads why a device's clocks are below their maximum now: a
	// cheap reading, taken between tests.
	Throttle(dev int, busID string) ([]results.ThrottleReason, error)
	// Processes lists the compute processes on a device, this one included
	// when it holds a context there: Device, PID, Name (where it can be
	// read) and UsedBytes of each.
	Processes(dev int, busID string) ([]results.Process, error)
	// PCIe reads a device's PCIe link: generation and width now and the
	// most the device and system allow. What NVML did not give is 0; the
	// error is for a reading that gave nothing.
	PCIe(dev int, busID string) (results.PCIeLink, error)
	// PCIePath says where the PCIe paths of devices a and b meet, as
	// nvidia-smi topo -m names it: PIX (one switch), PXB (several
	// switches), PHB (one host bridge), NODE (one NUMA node), SYS (across
	// them), internal (one board).
	PCIePath(a, b int, busA, busB string) (string, error)
	// Fabric reads which multi-node NVLink domain a device belongs to; an
	// error for a GPU in none, or where it cannot be read.
	Fabric(dev int, busID string) (Fabric, error)
	// Identity reads the board's serial, part number, VBIOS and InfoROM
	// versions into a copy of dev: what it could read, with an error
	// naming what it could not.
	Identity(dev results.Device) (results.Device, error)
	Close() error
}
