package ipc

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// FaultEnv names the environment variable that makes children fail on
// purpose, for the tests of the process machinery only: a comma-separated
// list of rank:request:action, where action is crash (exit at once, status
// 3), hang (stop answering) or stop (SIGSTOP itself). For example
// "1:fill:crash" crashes rank 1's child when it is first asked to fill.
const FaultEnv = "P2PBENCH_IPC_TEST_FAULT"

// FaultReadyEnv names a file (a FIFO, for the tests) to which a child writes
// "rank op action" just before it carries out a FaultEnv fault: the tests'
// signal that the fault is reached, in place of a wait.
const FaultReadyEnv = "P2PBENCH_IPC_TEST_FAULT_READY"

type fault struct {
	rank   int
	op     string
	action string
}

func parseFaults(s string) ([]fault, error) {
	var out []fault
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		f := strings.Split(part, ":")
		if len(f) != 3 {
			return nil, fmt.Errorf("%s: %q is not rank:request:action", FaultEnv, part)
		}
		rank, err := strconv.Atoi(f[0])
		if err != nil || rank < 0 {
			return nil, fmt.Errorf("%s: %q: bad rank", FaultEnv, part)
		}
		switch f[2] {
		case "crash", "hang", "stop":
		default:
			return nil, fmt.Errorf("%s: %q: the action is crash, hang or stop", FaultEnv, part)
		}
		out = append(out, fault{rank: rank, op: f[1], action: f[2]})
	}
	return out, nil
}

// injectFault carries out the first test fault set for rank and op.
func (c *server) injectFault(rank int, op string) {
	for i, f := range c.faults {
		if f.rank != rank || f.op != op {
			continue
		}
		c.faults = slices.Delete(c.faults, i, i+1)
		fmt.Fprintf(os.Stderr, "ipc-child rank %d: test fault: %s at %s\n", rank, f.action, op)
		if p := os.Getenv(FaultReadyEnv); p != "" {
			if w, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0); err == nil {
				fmt.Fprintf(w, "%d %s %s\n", rank, op, f.action)
				w.Close()
			}
		}
		switch f.action {
		case "crash":
			os.Exit(3)
		case "hang":
			for {
				time.Sleep(time.Hour)
			}
		case "stop":
			_ = stopSelf()
		}
		return
	}
}
