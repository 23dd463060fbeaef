package nvml

import (
	"fmt"
)

// FabricState is an nvmlGpuFabricState_t: how far the GPU's registration
// with the NVLink fabric manager got.
type FabricState uint8

// The registration states of nvml.h.
const (
	FabricNotSupported FabricState = 0
	FabricNotStarted   FabricState = 1
	FabricInProgress   FabricState = 2
	FabricCompleted    FabricState = 3
)

func (s FabricState) String() string {
	switch s {
	case FabricNotSupported:
		return "not supported"
	case FabricNotStarted:
		return "not started"
	case FabricInProgress:
		return "in progress"
	case FabricCompleted:
		return "completed"
	}
	return fmt.Sprintf("state %d", uint8(s))
}

// FabricInfo is the NVLink domain a GPU belongs to: GPUs of one multi-node
// NVLink domain share a cluster UUID and a clique id.
type FabricInfo struct {
	// ClusterUUID is formatted 8-4-4-4-12 hex digits.
	ClusterUUID string
	CliqueID    uint32
	State       FabricState
	// Status is the outcome of a completed registration: nil when it
	// succeeded.
	Status error
}

// The C layouts of nvmlGpuFabricInfo_v2_t (36 bytes, asked for with its
// version in the first field) and nvmlGpuFabricInfo_t (28 bytes).
type (
	fabricInfoV2 struct {
		Version     uint32
		ClusterUUID [16]byte
		Status      Return
		CliqueID    uint32
		State       FabricState
		_           [3]byte
		HealthMask  uint32
	}
	fabricInfoV1 struct {
		ClusterUUID [16]byte
		Status      Return
		CliqueID    uint32
		State       FabricState
		_           [3]byte
	}
)

// fabricInfoV2Version is nvmlGpuFabricInfo_v2: NVML_STRUCT_VERSION(GpuFabricInfo, 2).
const fabricInfoV2Version = 36 | 2<<24

// FabricInfo reads which NVLink domain the device belongs to
// (nvmlDeviceGetGpuFabricInfoV, or nvmlDeviceGetGpuFabricInfo before it):
// NOT_SUPPORTED on a GPU outside any multi-node NVLink fabric; an error
// matching ErrUnavailable from a library without either call.
func (d Device) FabricInfo() (FabricInfo, error) {
	if err := d.usable(); err != nil {
		return FabricInfo{}, err
	}
	a := d.n.api
	var v FabricInfo
	var status Return
	var uuid [16]byte
	switch {
	case a.nvmlDeviceGetGpuFabricInfoV != nil:
		info := fabricInfoV2{Version: fabricInfoV2Version}
		if err := d.n.check(a.nvmlDeviceGetGpuFabricInfoV(d.handle, &info), "nvmlDeviceGetGpuFabricInfoV"); err != nil {
			return v, fmt.Errorf("%s: %w", d.BusID, err)
		}
		uuid, status, v.CliqueID, v.State = info.ClusterUUID, info.Status, info.CliqueID, info.State
	case a.nvmlDeviceGetGpuFabricInfo != nil:
		var info fabricInfoV1
		if err := d.n.check(a.nvmlDeviceGetGpuFabricInfo(d.handle, &info), "nvmlDeviceGetGpuFabricInfo"); err != nil {
			return v, fmt.Errorf("%s: %w", d.BusID, err)
		}
		uuid, status, v.CliqueID, v.State = info.ClusterUUID, info.Status, info.CliqueID, info.State
	default:
		return v, fmt.Errorf("nvmlDeviceGetGpuFabricInfoV: %w", ErrUnavailable)
	}
	v.ClusterUUID = fmt.Sprintf("%x-%x-%x-%x-%x", uuid[0:4], uuid[4:6], uuid[6:8], uuid[8:10], uuid[10:16])
	if v.State == FabricCompleted {
		v.Status = d.n.check(status, "fabric registration")
	}
	return v, nil
}
