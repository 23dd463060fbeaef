package nvml

import (
	"errors"
	"fmt"
)

// State is a device's clocks, temperature and power at one moment.
type State struct {
	SMClockMHz  int     `json:"sm_clock_mhz"`
	MemClockMHz int     `json:"mem_clock_mhz"`
	TempC       int     `json:"temperature_c"`
	PowerW      float64 `json:"power_w"`
}

// nvmlClockType_t and nvmlTemperatureSensors_t values.
const (
	clockSM        = 1 // NVML_CLOCK_SM
	clockMem       = 2 // NVML_CLOCK_MEM
	temperatureGPU = 0 // NVML_TEMPERATURE_GPU
)

// State reads the device's current SM and memory clocks
// (nvmlDeviceGetClockInfo), GPU temperature (nvmlDeviceGetTemperature) and
// power draw (nvmlDeviceGetPowerUsage). Each reading that fails leaves its
// field zero and adds to the returned error, so a State is worth keeping
// even with an error: some devices do not report everything.
func (d Device) State() (State, error) {
	var s State
	if err := d.usable(); err != nil {
		return s, err
	}
	a := d.n.api
	var errs []error
	read := func(r Return, call string, set func()) {
		if err := d.n.check(r, call); err != nil {
			errs = append(errs, err)
			return
		}
		set()
	}
	var v uint32
	read(a.nvmlDeviceGetClockInfo(d.handle, clockSM, &v), "nvmlDeviceGetClockInfo", func() { s.SMClockMHz = int(v) })
	read(a.nvmlDeviceGetClockInfo(d.handle, clockMem, &v), "nvmlDeviceGetClockInfo", func() { s.MemClockMHz = int(v) })
	if a.nvmlDeviceGetTemperature != nil {
		read(a.nvmlDeviceGetTemperature(d.handle, temperatureGPU, &v), "nvmlDeviceGetTemperature", func() { s.TempC = int(v) })
	} else {
		errs = append(errs, fmt.Errorf("nvmlDeviceGetTemperature: %w", ErrUnavailable))
	}
	read(a.nvmlDeviceGetPowerUsage(d.handle, &v), "nvmlDeviceGetPowerUsage", func() { s.PowerW = float64(v) / 1000 })
	if err := errors.Join(errs...); err != nil {
		return s, fmt.Errorf("%s: %w", d.BusID, err)
	}
	return s, nil
}
