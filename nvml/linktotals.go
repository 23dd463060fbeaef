package nvml

import "fmt"

// The GPU-total NVLink error fields of nvmlDeviceGetFieldValues (nvml.h):
// each counter summed over the device's links by the driver. DCGM's health
// watch reads the first four (its DCGM_FI_DEV_NVLINK_*_ERROR_TOTAL fields
// map to them), not the per-link counters of
// nvmlDeviceGetNvLinkErrorCounter; DCGM 4.5.3 and later also fail a GPU
// before Blackwell whose data-link totals (the last three) are above 0.
const (
	fieldNvLinkCRCFlitTotal  = 38  // NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL
	fieldNvLinkCRCDataTotal  = 45  // NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL
	fieldNvLinkReplayTotal   = 52  // NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL
	fieldNvLinkRecoveryTotal = 59  // NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL
	fieldNvLinkECCDataTotal  = 160 // NVML_FI_DEV_NVLINK_ECC_DATA_ERROR_COUNT_TOTAL
	fieldNvLinkDLReplay      = 161 // NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY
	fieldNvLinkDLRecovery    = 162 // NVML_FI_DEV_NVLINK_ERROR_DL_RECOVERY
	fieldNvLinkDLCRC         = 163 // NVML_FI_DEV_NVLINK_ERROR_DL_CRC
)

// TotalField is one GPU-total field: its name in nvml.h and id.
type TotalField struct {
	Name string
	ID   uint32
}

// LinkTotalFields are the totals of the link error counters, by counter
// (LinkErrorCounter's values).
var LinkTotalFields = map[LinkErrorCounter]TotalField{
	LinkReplay:   {"NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", fieldNvLinkReplayTotal},
	LinkRecovery: {"NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", fieldNvLinkRecoveryTotal},
	LinkCRCFlit:  {"NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", fieldNvLinkCRCFlitTotal},
	LinkCRCData:  {"NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", fieldNvLinkCRCDataTotal},
	LinkECCData:  {"NVML_FI_DEV_NVLINK_ECC_DATA_ERROR_COUNT_TOTAL", fieldNvLinkECCDataTotal},
}

// DLCounter names a data-link total (NVML_FI_DEV_NVLINK_ERROR_DL_*).
type DLCounter int

// The data-link totals.
const (
	DLReplay DLCounter = iota
	DLRecovery
	DLCRC
)

// DLFields are the data-link totals' fields, by DLCounter.
var DLFields = []TotalField{
	DLReplay:   {"NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY", fieldNvLinkDLReplay},
	DLRecovery: {"NVML_FI_DEV_NVLINK_ERROR_DL_RECOVERY", fieldNvLinkDLRecovery},
	DLCRC:      {"NVML_FI_DEV_NVLINK_ERROR_DL_CRC", fieldNvLinkDLCRC},
}

// LinkTotals is one reading of a device's GPU-total NVLink error fields.
// A field the driver did not give is absent from its map and in Missing
// with NVML's error for it.
type LinkTotals struct {
	Counters map[LinkErrorCounter]uint64
	DL       map[DLCounter]uint64
	Missing  map[TotalField]error
}

// LinkErrorTotals reads the device's GPU-total NVLink error fields (the
// totals of LinkTotalFields and DLFields) in one nvmlDeviceGetFieldValues
// call with scope 0, as DCGM reads them on GPUs before Blackwell. A field
// the driver does not support is in Missing; the error is for a call that
// gave nothing (no nvmlDeviceGetFieldValues, a device NVML refuses).
// Some drivers answer the totals as unsupported on H100s whose per-link
// counters count (NVIDIA/DCGM issue 173): DCGM then sees nothing there.
func (d Device) LinkErrorTotals() (LinkTotals, error) {
	if err := d.usable(); err != nil {
		return LinkTotals{}, err
	}
	a := d.n.api
	if a.nvmlDeviceGetFieldValues == nil {
		return LinkTotals{}, fmt.Errorf("%s: NVLink error totals: nvmlDeviceGetFieldValues is not in this NVML: %w", d.BusID, ErrUnavailable)
	}
	var fields []TotalField
	var counters []LinkErrorCounter
	for _, c := range LinkErrorCounters {
		fields, counters = append(fields, LinkTotalFields[c]), append(counters, c)
	}
	fields = append(fields, DLFields...)
	fv := make([]fieldValue, len(fields))
	for i, f := range fields {
		fv[i] = fieldValue{FieldID: f.ID}
	}
	if err := d.n.check(a.nvmlDeviceGetFieldValues(d.handle, int32(len(fv)), &fv[0]), "nvmlDeviceGetFieldValues"); err != nil {
		return LinkTotals{}, fmt.Errorf("%s: NVLink error totals: %w", d.BusID, err)
	}
	t := LinkTotals{Counters: map[LinkErrorCounter]uint64{}, DL: map[DLCounter]uint64{}, Missing: map[TotalField]error{}}
	for i, f := range fields {
		v, r := fv[i].counter()
		switch {
		case r != Success:
			t.Missing[f] = d.n.check(r, "nvmlDeviceGetFieldValues")
		case i < len(counters):
			t.Counters[counters[i]] = v
		default:
			t.DL[DLCounter(i-len(counters))] = v
		}
	}
	return t, nil
}
