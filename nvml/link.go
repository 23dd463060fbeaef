package nvml

import (
	"encoding/binary"
	"fmt"
)

// MaxLinks is NVML_NVLINK_MAX_LINKS: the link indexes Links asks about.
const MaxLinks = 18

// Where a Link's speed came from, best first.
const (
	// SpeedFromNVMLLink is NVML's speed of that link (the field
	// NVML_FI_DEV_NVLINK_GET_SPEED with the link as scope), the figure
	// nvidia-smi nvlink -s prints. It is the link's data rate: 26.562 GB/s
	// for an NVLink 4 link on the 2× H200 machine, a little above the 25
	// GB/s of payload that SpeedFromVersion gives.
	SpeedFromNVMLLink = "nvml_field_nvlink_get_speed"
	// SpeedFromNVMLCommon is NVML's one speed for all active links of the
	// device (NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON), for drivers that lack
	// the per-link field. The 580 driver answers NOT_SUPPORTED for it on H200.
	SpeedFromNVMLCommon = "nvml_field_nvlink_speed_mbps_common"
	// SpeedFromVersion is the payload rate of the link's NVLink version,
	// from versionSpeedGBps, when NVML gives no speed of its own.
	SpeedFromVersion = "nvlink_version_table"
)

// versionSpeedGBps is the payload bandwidth of one link in one direction,
// in decimal GB/s, by NVLink version: NVLink 1 (P100) carries 20; NVLink 2
// (V100), 3 (A100) and 4 (H100, H200) carry 25, with fewer lanes per link
// as the signalling rate rose; NVLink 5 (B200) carries 50.
var versionSpeedGBps = map[int]float64{1: 20, 2: 25, 3: 25, 4: 25, 5: 50}

// nvlinkMajor decodes nvmlDeviceGetNvLinkVersion, which returns an
// nvmlNvlinkVersion_t (NVML_NVLINK_VERSION_1_0 = 1, 2_0 = 2, 2_2 = 3,
// 3_0 = 4, 3_1 = 5, 4_0 = 6, 5_0 = 7, 6_0 = 8): the 580 driver answers 6 on
// H200. It returns the major version, 0 for a value it does not know.
func nvlinkMajor(v uint32) int {
	switch v {
	case 1:
		return 1
	case 2, 3:
		return 2
	case 4, 5:
		return 3
	case 6:
		return 4
	case 7:
		return 5
	case 8:
		return 6
	}
	return 0
}

// Link is one NVLink of a device.
type Link struct {
	Index  int  `json:"index"`
	Active bool `json:"active"`
	// RemoteBusID is the PCI bus id of the device at the other end, as
	// NVML gives it ("00000000:2A:00.0"); compare with busid.Normalize.
	// Where NVML cannot tell (on the 2× H200 virtual machine it reports
	// every link's remote end as an NVSwitch at FFFFFFFF:FF:FF.0), this is
	// what NVML says all the same; it then matches no device.
	RemoteBusID string `json:"remote_bus_id,omitempty"`
	// Version is the NVLink major version (4 on Hopper), 0 when unknown.
	Version int `json:"version,omitempty"`
	// SpeedGBps is the link's speed in one direction, decimal GB/s; 0 for
	// an inactive link or when no source knows it.
	SpeedGBps float64 `json:"speed_gbps,omitempty"`
	// SpeedSource says where SpeedGBps came from: one of the SpeedFrom
	// constants.
	SpeedSource string `json:"speed_source,omitempty"`
}

// nvmlPciInfo_t, passed by pointer: 68 bytes, 4-byte aligned.
type pciInfo struct {
	BusIDLegacy    [16]byte
	Domain         uint32
	Bus            uint32
	Device         uint32
	PCIDeviceID    uint32
	PCISubSystemID uint32
	BusID          [32]byte
}

// nvmlFieldValue_t, passed by pointer: 40 bytes, 8-byte aligned. Value is
// the union nvmlValue_t, read according to ValueType.
type fieldValue struct {
	FieldID     uint32
	ScopeID     uint32
	Timestamp   int64
	LatencyUsec int64
	ValueType   uint32
	Return      Return
	Value       [8]byte
}

// NVML field ids and value types used here.
const (
	fieldNvLinkSpeedMbpsCommon = 90  // all active links, no scope
	fieldNvLinkGetSpeed        = 164 // MBps of the link in scopeId
	valueTypeUnsignedInt       = 1
	valueTypeUnsignedLong      = 2
	valueTypeUnsignedLongLong  = 3
	valueTypeSignedLongLong    = 4
	valueTypeSignedInt         = 5
)

// Links reports every NVLink of the device: for each link index NVML knows,
// whether it is up, and for active links the remote device, the NVLink
// version and the speed. Indexes the device does not have (NVML answers
// NOT_SUPPORTED or INVALID_ARGUMENT) are left out, so a GPU without NVLink
// has none.
func (d Device) Links() ([]Link, error) {
	if err := d.usable(); err != nil {
		return nil, err
	}
	a := d.n.api
	perLink, common := d.speedsGBps()
	var links []Link
	for i := range uint32(MaxLinks) {
		var state int32
		r := a.nvmlDeviceGetNvLinkState(d.handle, i, &state)
		if r == ErrorNotSupported || r == ErrorInvalidArgument {
			continue
		}
		if err := d.n.check(r, "nvmlDeviceGetNvLinkState"); err != nil {
			return links, fmt.Errorf("%s link %d: %w", d.BusID, i, err)
		}
		l := Link{Index: int(i), Active: state == 1} // NVML_FEATURE_ENABLED
		if !l.Active {
			links = append(links, l)
			continue
		}
		var pci pciInfo
		if err := d.n.check(a.nvmlDeviceGetNvLinkRemotePciInfo(d.handle, i, &pci), "nvmlDeviceGetNvLinkRemotePciInfo"); err != nil {
			return links, fmt.Errorf("%s link %d: %w", d.BusID, i, err)
		}
		l.RemoteBusID = cString(pci.BusID[:])
		var v uint32
		if err := d.n.check(a.nvmlDeviceGetNvLinkVersion(d.handle, i, &v), "nvmlDeviceGetNvLinkVersion"); err != nil {
			return links, fmt.Errorf("%s link %d: %w", d.BusID, i, err)
		}
		l.Version = nvlinkMajor(v)
		switch {
		case perLink[i] > 0:
			l.SpeedGBps, l.SpeedSource = perLink[i], SpeedFromNVMLLink
		case common > 0:
			l.SpeedGBps, l.SpeedSource = common, SpeedFromNVMLCommon
		case versionSpeedGBps[l.Version] > 0:
			l.SpeedGBps, l.SpeedSource = versionSpeedGBps[l.Version], SpeedFromVersion
		}
		links = append(links, l)
	}
	return links, nil
}

// speedsGBps asks NVML, in one nvmlDeviceGetFieldValues call, for the speed
// of each link and for the common speed of the active links, in GB/s. A
// speed NVML does not give is 0.
func (d Device) speedsGBps() (perLink [MaxLinks]float64, common float64) {
	a := d.n.api
	if a.nvmlDeviceGetFieldValues == nil {
		return perLink, 0
	}
	var fv [MaxLinks + 1]fieldValue
	for i := range MaxLinks {
		fv[i] = fieldValue{FieldID: fieldNvLinkGetSpeed, ScopeID: uint32(i)}
	}
	fv[MaxLinks] = fieldValue{FieldID: fieldNvLinkSpeedMbpsCommon}
	if a.nvmlDeviceGetFieldValues(d.handle, int32(len(fv)), &fv[0]) != Success {
		return perLink, 0
	}
	for i := range MaxLinks {
		perLink[i] = fv[i].gbps()
	}
	return perLink, fv[MaxLinks].gbps()
}

// gbps reads a speed field in MBps as GB/s; 0 when it holds none.
func (f *fieldValue) gbps() float64 {
	if f.Return != Success {
		return 0
	}
	var mbps uint64
	switch f.ValueType {
	case valueTypeUnsignedInt:
		mbps = uint64(binary.NativeEndian.Uint32(f.Value[:]))
	case valueTypeUnsignedLong, valueTypeUnsignedLongLong:
		mbps = binary.NativeEndian.Uint64(f.Value[:])
	default:
		return 0
	}
	return float64(mbps) / 1000 // NVML's MBps are 10^6 bytes per second
}

// PayloadGBps is the payload bandwidth of one link of NVLink version v in one
// direction (decimal GB/s), 0 for an unknown version. Theoretical limits are
// computed from it, not from the signalling rate NVML reports.
func PayloadGBps(version int) float64 { return versionSpeedGBps[version] }
