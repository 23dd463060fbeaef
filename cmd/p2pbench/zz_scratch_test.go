package main

import (
	"io"
	"os"
	"runtime/pprof"
	"strings"
	"testing"
)

func TestZZProfile(t *testing.T) {
	args := os.Getenv("ZZ_ARGS")
	if args == "" {
		t.Skip()
	}
	f, _ := os.Create(os.Getenv("ZZ_PROF"))
	pprof.StartCPUProfile(f)
	code := run(append([]string{"p2pbench"}, strings.Fields(args)...), io.Discard, os.Stderr)
	pprof.StopCPUProfile()
	f.Close()
	t.Log("exit", code)
}
