// Package session is one measuring run of p2pbench, from the machine's
// opening to its results file: the driver and NVML (or a simulated
// machine) and the devices chosen (Open), the environment, topology and
// health discovered and the run's expectations held to the machine before
// anything is measured (Start), the results file claimed (Prepare) and
// saved as the run goes, the tests in this process (bench) and across
// processes or nodes (ipc) (Measure), and at the end the state and health
// after, the verdict, and the last save, or a rescue elsewhere (Finish).
// The children of the tests across processes run Serve.
//
// The command line (cmd/p2pbench) reads the flags into Options, prints
// what a run gives back and turns its errors into exit statuses (Error's
// kinds); a run says nothing but its notes and warnings on Options.Log. It
// wires bench, ipc, gpu and verdict; the readers (compare, plot, report)
// never import it (tools/house).
package session
