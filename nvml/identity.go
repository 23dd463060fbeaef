package nvml

import (
	"errors"
	"fmt"
)

// Identity is what names one GPU board for an asset or procurement file:
// the board's serial number, its part number, and the versions of the
// firmware it runs (VBIOS) and of its InfoROM image. A field NVML did not
// give is empty.
type Identity struct {
	Serial          string
	BoardPartNumber string
	VBIOS           string
	InfoROM         string
}

// Identity reads the device's serial (nvmlDeviceGetSerial), board part
// number (nvmlDeviceGetBoardPartNumber), VBIOS version
// (nvmlDeviceGetVbiosVersion) and InfoROM image version
// (nvmlDeviceGetInforomImageVersion). Each reading that fails (a board
// without a serial answers NOT_SUPPORTED) leaves its field empty and adds
// to the returned error; a library without the calls answers an error
// matching ErrUnavailable.
func (d Device) Identity() (Identity, error) {
	var id Identity
	if err := d.usable(); err != nil {
		return id, err
	}
	a := d.n.api
	var errs []error
	for _, r := range []struct {
		call string
		fn   func(dev uintptr, buf *byte, length uint32) Return
		size int // the NVML_DEVICE_*_BUFFER_SIZE of nvml.h
		set  *string
	}{
		{"nvmlDeviceGetSerial", a.nvmlDeviceGetSerial, 30, &id.Serial},
		{"nvmlDeviceGetBoardPartNumber", a.nvmlDeviceGetBoardPartNumber, 80, &id.BoardPartNumber},
		{"nvmlDeviceGetVbiosVersion", a.nvmlDeviceGetVbiosVersion, 32, &id.VBIOS},
		{"nvmlDeviceGetInforomImageVersion", a.nvmlDeviceGetInforomImageVersion, 16, &id.InfoROM},
	} {
		if r.fn == nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.call, ErrUnavailable))
			continue
		}
		buf := make([]byte, r.size)
		if err := d.n.check(r.fn(d.handle, &buf[0], uint32(len(buf))), r.call); err != nil {
			errs = append(errs, err)
			continue
		}
		*r.set = cString(buf)
	}
	if err := errors.Join(errs...); err != nil {
		return id, fmt.Errorf("%s: %w", d.BusID, err)
	}
	return id, nil
}
