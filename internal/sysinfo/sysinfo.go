// Package sysinfo reads what names the machine p2pbench runs on, for the
// results' environment (results.System): the system's vendor, product and
// serial number from DMI (/sys/class/dmi/id), the CPU's model name and
// count (/proc/cpuinfo), the kernel release (/proc/sys/kernel/osrelease)
// and the operating system (/etc/os-release). Linux only, as p2pbench is;
// it reads through an fs.FS so tests give it a made-up machine. Nothing it
// cannot read stops it: each such field is named, with the reason, in
// System.Unreadable.
package sysinfo

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"strconv"
	"strings"

	"github.com/p2pbench/p2pbench/results"
)

// Read reads the system's identity from root, the file system's root
// (os.DirFS("/") on a real machine).
func Read(root fs.FS) results.System {
	var s results.System
	field := func(name, path string, set *string) {
		b, err := fs.ReadFile(root, path)
		v := strings.TrimSpace(string(b))
		switch {
		case errors.Is(err, fs.ErrPermission):
			s.Unreadable = append(s.Unreadable, name+": /"+path+" is readable by root only (run as root to record it)")
		case errors.Is(err, fs.ErrNotExist):
			s.Unreadable = append(s.Unreadable, name+": /"+path+" does not exist")
		case err != nil:
			s.Unreadable = append(s.Unreadable, name+": "+err.Error())
		case v == "" || placeholder(v):
			s.Unreadable = append(s.Unreadable, name+": /"+path+" holds no value (\""+v+"\")")
		default:
			*set = v
		}
	}
	field("vendor", "sys/class/dmi/id/sys_vendor", &s.Vendor)
	field("product", "sys/class/dmi/id/product_name", &s.Product)
	field("serial", "sys/class/dmi/id/product_serial", &s.Serial)
	field("kernel", "proc/sys/kernel/osrelease", &s.Kernel)
	if b, err := fs.ReadFile(root, "proc/cpuinfo"); err != nil {
		s.Unreadable = append(s.Unreadable, "cpu: "+err.Error())
	} else {
		s.CPU, s.CPUs = cpu(b)
	}
	if b, err := fs.ReadFile(root, "etc/os-release"); err != nil {
		s.Unreadable = append(s.Unreadable, "os: "+err.Error())
	} else {
		s.OS = osRelease(b)
	}
	return s
}

// placeholder says whether a DMI value is the firmware's filler rather
// than a name: what vendors leave in fields they did not set.
func placeholder(v string) bool {
	switch strings.ToLower(v) {
	case "to be filled by o.e.m.", "default string", "not specified", "system serial number", "none", "0", "123456789":
		return true
	}
	return false
}

// cpu returns the first model name of /proc/cpuinfo ("model name" on x86,
// "Model" or "CPU part" elsewhere) and the number of processors listed.
func cpu(b []byte) (model string, n int) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "processor":
			n++
		case "model name", "Model":
			if model == "" {
				model = v
			}
		}
	}
	return model, n
}

// osRelease returns PRETTY_NAME of an os-release file, unquoted, or NAME
// and VERSION_ID without it.
func osRelease(b []byte) string {
	vals := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		if u, err := strconv.Unquote(v); err == nil {
			v = u
		} else {
			v = strings.Trim(v, `'"`)
		}
		vals[k] = v
	}
	if p := vals["PRETTY_NAME"]; p != "" {
		return p
	}
	return strings.TrimSpace(vals["NAME"] + " " + vals["VERSION_ID"])
}
