package results

import "fmt"

// PCIeLink is a GPU's PCIe link as NVML reports it: the generation and
// width it ran at when read, and the most the device and the system allow.
// A link may idle at a lower generation and return under load, so a
// current generation below the maximum is no fault; a width below the
// maximum usually is (a link trained on fewer lanes). 0 is unknown.
type PCIeLink struct {
	Gen      int `json:"gen,omitempty"`
	Width    int `json:"width,omitempty"`
	MaxGen   int `json:"max_gen,omitempty"`
	MaxWidth int `json:"max_width,omitempty"`
}

// pcieLaneGBps is one lane's payload bandwidth in one direction, decimal
// GB/s, by PCIe generation: the transfer rate after line coding (8b/10b
// for generations 1 and 2, 128b/130b for 3 to 5, 242 of 256 bytes of a
// FLIT for 6), before packet headers.
var pcieLaneGBps = map[int]float64{1: 0.25, 2: 0.5, 3: 8.0 / 8 * 128 / 130, 4: 16.0 / 8 * 128 / 130, 5: 32.0 / 8 * 128 / 130, 6: 64.0 / 8 * 242 / 256}

// GBps is the link's bandwidth in one direction at the most the device and
// the system allow (max generation × max width, each lane's rate after line
// coding), decimal GB/s; 0 when either is unknown. Host copies and
// peer copies over PCIe are held against it.
func (l PCIeLink) GBps() float64 { return pcieLaneGBps[l.MaxGen] * float64(l.MaxWidth) }

// String says the link for people: "Gen5 x16", or "Gen1 x8 (of Gen4 x16)"
// when it ran below its maximum; "" when nothing is known.
func (l PCIeLink) String() string {
	name := func(gen, width int) string {
		switch {
		case gen > 0 && width > 0:
			return fmt.Sprintf("Gen%d x%d", gen, width)
		case gen > 0:
			return fmt.Sprintf("Gen%d", gen)
		case width > 0:
			return fmt.Sprintf("x%d", width)
		}
		return ""
	}
	now, most := name(l.Gen, l.Width), name(l.MaxGen, l.MaxWidth)
	switch {
	case now == most || most == "":
		return now
	case now == "":
		return "of " + most
	}
	return now + " (of " + most + ")"
}
