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

// Traffic reads the NVLink throughput counters of every link in one
// nvmlDeviceGetFieldValues call. Links the device lacks answer an error and
// are left out; an error comes back when no link gives all four counters
// (no NVLink, or a driver without these fields). The counters are the
// device's: traffic of other processes counts too.
func (d Device) Traffic() (Traffic, error) {
	if err := d.usable(); err != nil {
		return Traffic{}, err
	}
	a := d.n.api
	if a.nvmlDeviceGetFieldValues == nil {
		return Traffic{}, fmt.Errorf("%s: NVLink counters: nvmlDeviceGetFieldValues is not in this NVML: %w", d.BusID, ErrNotSupported)
	}
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

// counter reads an unsigned counter field.
func (f *fieldValue) counter() (uint64, Return) {
	if f.Return != Success {
		return 0, f.Return
	}
	switch f.ValueType {
	case valueTypeUnsignedInt:
		return uint64(binary.NativeEndian.Uint32(f.Value[:])), Success
	case valueTypeUnsignedLong, valueTypeUnsignedLongLong:
		return binary.NativeEndian.Uint64(f.Value[:]), Success
	}
	return 0, ErrorNotSupported
}
