package nvml

import (
	"encoding/binary"
	"fmt"
)

// NVML field ids of the NVLink throughput counters (nvml.h), per link (the
// link index is the scope), in KiB since the driver loaded.
const (
	fieldNvLinkThroughputDataTx = 138 // payload sent
	fieldNvLinkThroughputDataRx = 139 // payload received
	fieldNvLinkThroughputRawTx  = 140 // everything sent: payload, headers, requests, responses
	fieldNvLinkThroughputRawRx  = 141 // everything received
)

// Traffic is what a device's NVLink counters say it has sent and received,
// summed over its links, in bytes. Data counts payload only; raw counts every
// byte the links carried (packet headers, read requests, write responses and
// the payload). The counters run from the driver's start: take the
// difference of two readings (Sub).
type Traffic struct {
	TxData, RxData, TxRaw, RxRaw uint64
	// Links is how many links answered.
	Links int
}

// Sub returns t − before, the traffic between two readings.
func (t Traffic) Sub(before Traffic) Traffic {
	return Traffic{TxData: t.TxData - before.TxData, RxData: t.RxData - before.RxData,
		TxRaw: t.TxRaw - before.TxRaw, RxRaw: t.RxRaw - before.RxRaw, Links: t.Links}
}

// allLinks is the scope of a throughput field that asks for its sum over
// every link of the device (nvml.h: a scopeId of UINT_MAX).
const allLinks = ^uint32(0)

// Traffic reads the NVLink throughput counters of the device in one
// nvmlDeviceGetFieldValues call. The first reading asks every link for its
// four counters: links the device lacks answer an error and are left out,
// and an error comes back when no link gives all four (no NVLink, or a
// driver without these fields). Later readings ask for the four sums over
// every link at once, where the driver has them: a sixth of the time of
// every link's counters, and the same sums (docs/methods.md, "On the
// wire"). The counters are the device's: traffic of other processes counts
// too.
func (d Device) Traffic() (Traffic, error) {
	if err := d.usable(); err != nil {
		return Traffic{}, err
	}
	a := d.n.api
	if a.nvmlDeviceGetFieldValues == nil {
		return Traffic{}, fmt.Errorf("%s: NVLink counters: nvmlDeviceGetFieldValues is not in this NVML: %w", d.BusID, ErrNotSupported)
	}
	if v, ok := d.n.totals.Load(d.handle); ok {
		if links, ok := v.(int); ok {
			if t, ok := d.totals(links); ok {
				return t, nil
			}
			d.n.totals.Store(d.handle, false)
		}
	}
	t, err := d.linkTraffic()
	if err != nil {
		return t, err
	}
	if _, seen := d.n.totals.Load(d.handle); !seen {
		d.n.totals.Store(d.handle, t.Links)
	}
	return t, nil
}

// totals reads the four counters summed over every link, or says the
// driver has no such sums (any of them not answered).
func (d Device) totals(links int) (Traffic, bool) {
	fields := [4]uint32{fieldNvLinkThroughputDataTx, fieldNvLinkThroughputDataRx, fieldNvLinkThroughputRawTx, fieldNvLinkThroughputRawRx}
	var fv [4]fieldValue
	for k, f := range fields {
		fv[k] = fieldValue{FieldID: f, ScopeID: allLinks}
	}
	if d.n.api.nvmlDeviceGetFieldValues(d.handle, int32(len(fv)), &fv[0]) != Success {
		return Traffic{}, false
	}
	var v [4]uint64
	for k := range fv {
		x, r := fv[k].counter()
		if r != Success {
			return Traffic{}, false
		}
		v[k] = x * 1024
	}
	return Traffic{TxData: v[0], RxData: v[1], TxRaw: v[2], RxRaw: v[3], Links: links}, true
}

// linkTraffic reads the four counters of every link and sums them.
func (d Device) linkTraffic() (Traffic, error) {
	a := d.n.api
	fields := [4]uint32{fieldNvLinkThroughputDataTx, fieldNvLinkThroughputDataRx, fieldNvLinkThroughputRawTx, fieldNvLinkThroughputRawRx}
	var fv [4 * MaxLinks]fieldValue
	for l := range MaxLinks {
		for k, f := range fields {
			fv[4*l+k] = fieldValue{FieldID: f, ScopeID: uint32(l)}
		}
	}
	if err := d.n.check(a.nvmlDeviceGetFieldValues(d.handle, int32(len(fv)), &fv[0]), "nvmlDeviceGetFieldValues"); err != nil {
		return Traffic{}, fmt.Errorf("%s: NVLink counters: %w", d.BusID, err)
	}
	var t Traffic
	var last Return = Success
	for l := range MaxLinks {
		var v [4]uint64
		ok := true
		for k := range fields {
			x, r := fv[4*l+k].counter()
			if r != Success {
				ok, last = false, r
				break
			}
			v[k] = x
		}
		if !ok {
			continue
		}
		t.TxData += v[0] * 1024
		t.RxData += v[1] * 1024
		t.TxRaw += v[2] * 1024
		t.RxRaw += v[3] * 1024
		t.Links++
	}
	if t.Links == 0 {
		if last == Success {
			last = ErrorNotSupported
		}
		return Traffic{}, fmt.Errorf("%s: NVLink counters: %w", d.BusID, d.n.check(last, "nvmlDeviceGetFieldValues"))
	}
	return t, nil
}

// counter reads a counter field: unsigned, or signed and not negative (a
// negative count, or a value of another type, reads as not supported).
func (f *fieldValue) counter() (uint64, Return) {
	if f.Return != Success {
		return 0, f.Return
	}
	switch f.ValueType {
	case valueTypeUnsignedInt:
		return uint64(binary.NativeEndian.Uint32(f.Value[:])), Success
	case valueTypeUnsignedLong, valueTypeUnsignedLongLong:
		return binary.NativeEndian.Uint64(f.Value[:]), Success
	case valueTypeSignedLongLong:
		if x := int64(binary.NativeEndian.Uint64(f.Value[:])); x >= 0 {
			return uint64(x), Success
		}
	case valueTypeSignedInt:
		if x := int32(binary.NativeEndian.Uint32(f.Value[:])); x >= 0 {
			return uint64(x), Success
		}
	}
	return 0, ErrorNotSupported
}
