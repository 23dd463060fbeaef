package sysinfo

import (
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// rootOnly refuses the files a non-root user cannot read.
type rootOnly struct {
	fs.FS
	paths []string
}

func (r rootOnly) Open(name string) (fs.File, error) {
	if slices.Contains(r.paths, name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return r.FS.Open(name)
}

func machine() fstest.MapFS {
	f := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	return fstest.MapFS{
		"sys/class/dmi/id/sys_vendor":     f("Supermicro\n"),
		"sys/class/dmi/id/product_name":   f("SYS-821GE-TNHR\n"),
		"sys/class/dmi/id/product_serial": f("S123456X4B01234\n"),
		"proc/sys/kernel/osrelease":       f("6.8.0-49-generic\n"),
		"proc/cpuinfo": f("processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n\nprocessor\t: 1\n" +
			"model name\t: Intel(R) Xeon(R) Platinum 8480+\n"),
		"etc/os-release": f("NAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\nPRETTY_NAME=\"Ubuntu 22.04.5 LTS\"\n"),
	}
}

func TestRead(t *testing.T) {
	s := Read(machine())
	if s.Vendor != "Supermicro" || s.Product != "SYS-821GE-TNHR" || s.Serial != "S123456X4B01234" ||
		s.CPU != "Intel(R) Xeon(R) Platinum 8480+" || s.CPUs != 2 || s.Kernel != "6.8.0-49-generic" ||
		s.OS != "Ubuntu 22.04.5 LTS" || len(s.Unreadable) != 0 {
		t.Errorf("got %+v", s)
	}
}

func TestReadSaysWhatItCannot(t *testing.T) {
	m := machine()
	m["sys/class/dmi/id/product_name"] = &fstest.MapFile{Data: []byte("To Be Filled By O.E.M.\n")}
	delete(m, "sys/class/dmi/id/sys_vendor")
	delete(m, "etc/os-release")
	m["etc/os-release"] = &fstest.MapFile{Data: []byte("NAME=Debian\nVERSION_ID='12'\n")}
	s := Read(rootOnly{m, []string{"sys/class/dmi/id/product_serial"}})
	if s.Vendor != "" || s.Product != "" || s.Serial != "" || s.OS != "Debian 12" {
		t.Errorf("got %+v", s)
	}
	got := strings.Join(s.Unreadable, "\n")
	for _, want := range []string{"vendor: ", "product: /sys/class/dmi/id/product_name holds no value", "serial: /sys/class/dmi/id/product_serial is readable by root only"} {
		if !strings.Contains(got, want) {
			t.Errorf("unreadable %q lacks %q", got, want)
		}
	}
	if len(s.Unreadable) != 3 {
		t.Errorf("unreadable: %q, want 3 entries", s.Unreadable)
	}
}
