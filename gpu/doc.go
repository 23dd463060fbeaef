// Package gpu is what measuring needs of a machine, as interfaces at the
// consumer, with the adapters to the real bindings:
//
//   - Driver and Context (driver.go): the CUDA driver API calls p2pbench
//     makes, device-level and in one device's primary context (VMM memory
//     included). CUDADriver (cuda.go) adapts package cuda to them;
//     DeviceRecord is a device in the form a results file records it.
//   - Monitor (monitor.go): what NVML adds to the driver API (the driver
//     release, NVLinks, clocks, temperature and power, link counters, the
//     machine's health, the processes on its GPUs, their PCIe links and the
//     multi-node NVLink domain they belong to). OpenNVML (nvml.go) adapts
//     package nvml to it.
//
// The simulated machines of gpu/sim implement the same interfaces:
// *sim.Driver is a Driver, and (*sim.Driver).Monitor its Monitor.
//
// gpu imports cuda, nvml and results (for the shapes a Monitor returns);
// the measuring packages (measure, bench, ipc) import it.
package gpu
