package verdict

import (
	"fmt"
	"math"

	"github.com/p2pbench/p2pbench/results"
)

// Thresholds of the clocks and temperature check.
const (
	// ClockChangeFraction: an SM clock that moved more than this between
	// the start and the end of the run moved. (The readings between tests
	// are not held to it: a GPU idles between tests, and its idle clock is
	// no movement; the throttle reasons they read say when clocks were held
	// down.)
	ClockChangeFraction = 0.05
	// TemperatureRiseC: a temperature rise during the run worth a look.
	TemperatureRiseC = 15
)

// clocks is what the run's readings say of each GPU's clocks: which moved
// or were held down, as a cause of noisy figures, and the items of the
// clocks check.
type clocks struct {
	items []results.CheckItem
	// moved are the GPUs whose clocks moved or were held down.
	moved  map[int]string
	judged bool
}

func readClocks(run *results.Run) *clocks {
	c := &clocks{moved: map[int]string{}}
	env := &run.Environment
	c.judged = len(env.DuringRun) > 0 || len(env.StateEnd) > 0
	for _, f := range run.HealthFindings() {
		if f.Check == results.HealthThrottle {
			c.add(f.Device, f.Subject(), f.Message)
		}
	}
	start := map[int]results.DeviceState{}
	for _, s := range env.StateStart {
		start[s.Index] = s
	}
	for _, e := range env.StateEnd {
		s, ok := start[e.Index]
		if !ok {
			continue
		}
		subject := fmt.Sprintf("GPU %d", e.Index)
		if s.SMClockMHz > 0 {
			change := float64(e.SMClockMHz-s.SMClockMHz) / float64(s.SMClockMHz)
			if math.Abs(change) > ClockChangeFraction {
				why := "throttling (power or heat) or a clock policy change during the run: later figures may be lower"
				if change > 0 {
					why = "the GPU was still at idle clocks when the run started: early figures may have been taken before clocks rose (lock clocks or warm up first)"
				}
				c.add(e.Index, subject, fmt.Sprintf("SM clock %d MHz at the start, %d MHz at the end (%+.1f%%, threshold ±%.0f%%): %s",
					s.SMClockMHz, e.SMClockMHz, 100*change, 100*ClockChangeFraction, why))
			}
		}
		if rise := e.TempC - s.TempC; rise > TemperatureRiseC {
			c.items = append(c.items, results.CheckItem{Status: results.StatusWarn, Subject: subject,
				Message: fmt.Sprintf("%d °C at the start, %d °C at the end (+%d °C, threshold %d °C): check cooling before trusting long runs",
					s.TempC, e.TempC, rise, TemperatureRiseC)})
		}
	}
	return c
}

// add warns of GPU dev's clocks.
func (c *clocks) add(dev int, subject, msg string) {
	c.items = append(c.items, results.CheckItem{Status: results.StatusWarn, Subject: subject, Message: msg})
	if c.moved[dev] == "" {
		c.moved[dev] = msg
	}
}

// summary says what a clean clocks check saw.
func (c *clocks) summary(run *results.Run) string {
	if len(run.Environment.DuringRun) == 0 {
		return "clocks and temperatures steady from start to end; throttle reasons not read during the run"
	}
	return "clocks not held down between tests, steady from start to end, temperatures steady"
}
