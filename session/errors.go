package session

// Kind is what an error of a run is about; the command line gives each its
// exit status.
type Kind int

const (
	// Usage: what was asked cannot be done on this machine or with these
	// inputs (an unknown simulated machine, a spec or baseline that cannot
	// judge the run, a device selection the machine does not allow).
	Usage Kind = iota + 1
	// NoGPU: no driver, no device, a selected device absent, a machine not
	// ready to measure across nodes.
	NoGPU
)

// Error is an error of a run with its kind.
type Error struct {
	Kind Kind
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func usage(err error) error { return &Error{Usage, err} }
func noGPU(err error) error { return &Error{NoGPU, err} }
