package results

// LinkTraffic is what the NVLink counters of a figure's two devices (NVML's
// throughput counters, summed over each device's links) counted while the
// figure was measured: from before its calibration to after its last sample,
// warm-up and calibration copies included. The counters belong to the
// devices, so any other traffic on their links in that window counts too.
//
// Data counts payload bytes; raw counts every byte the links carried:
// payload, packet headers, read requests, write responses. Raw over data in
// the direction the data moved is what each payload byte cost on the wire.
type LinkTraffic struct {
	Src LinkCounts `json:"src"`
	Dst LinkCounts `json:"dst"`
}

// LinkCounts is one device's NVLink traffic in a window, in bytes.
type LinkCounts struct {
	TxData uint64 `json:"tx_data_bytes"`
	TxRaw  uint64 `json:"tx_raw_bytes"`
	RxData uint64 `json:"rx_data_bytes"`
	RxRaw  uint64 `json:"rx_raw_bytes"`
}

// WirePerPayload returns, for the direction src → dst, the raw bytes the
// source's links sent per payload byte; ok is false when no payload was
// counted that way.
func (t *LinkTraffic) WirePerPayload() (ratio float64, ok bool) {
	if t == nil || t.Src.TxData == 0 {
		return 0, false
	}
	return float64(t.Src.TxRaw) / float64(t.Src.TxData), true
}

// Wire returns the raw bytes the links carried per payload byte in the
// direction f's data moved (the destination's counters for PartReverse, the
// source's otherwise: a total gets its forward direction's); ok is
// false without link traffic.
func (f *Figure) Wire() (ratio float64, ok bool) {
	if f.Traffic == nil {
		return 0, false
	}
	c := f.Traffic.Src
	if f.Part == PartReverse {
		c = f.Traffic.Dst
	}
	if c.TxData == 0 {
		return 0, false
	}
	return float64(c.TxRaw) / float64(c.TxData), true
}
