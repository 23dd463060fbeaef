package ipc

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/measure"
)

// The IPC protocol between the parent of `p2pbench ipc` and its children.
//
// The channel is one end of a socketpair per child, inherited as file
// descriptor 3 and nothing else: no handle is ever put in an argument, the
// environment or a file. Each message is a frame: a 4-byte big-endian length,
// then that many bytes of JSON (a message), with the file descriptors it
// announces (VMM handles) passed alongside (descriptors.go). The parent sends requests; the
// child answers each with one reply carrying the request's sequence number,
// so a reply that arrives after its request was abandoned is recognised and
// dropped. In order:
//
//	hello    parent → child: rank, device, buffers to allocate, settings,
//	         and the kind of handles (legacy or vmm).
//	         child: opens its device, allocates and exports its buffers
//	         (cuIpcGetMemHandle; with VMM handles, cuMemCreate memory
//	         exported as file descriptors, which come with the reply and
//	         which the child then closes) and its start event
//	         (cuIpcGetEventHandle); replies with its pid, whether it is
//	         simulated, and the handles.
//	map      parent → child: every other live rank's handles (with VMM
//	         handles, their descriptors come with the request; the parent
//	         closes its own once every child has them). The child opens
//	         each legacy memory handle twice (cuIpcOpenMemHandle_v2, lazy peer
//	         enable), checks both opens returned the same pointer, closes the
//	         second one; or imports, maps and grants its device access to
//	         each descriptor's memory, and closes the descriptor; then it
//	         opens the start event; one result per peer.
//	fill, poison, check, time, arm, follow, release, collect, chase,
//	pingpong, pingpong_wait
//	         the measurements, any number, in the order the parent plans.
//	renew    parent → child, between two rounds: the child makes afresh
//	         the streams and timing events (and the latch) of each rank it
//	         hosts, as the request names; never the buffers, which the
//	         other processes have mapped.
//	unmap    parent → child: close what was opened of the listed ranks (all
//	         when none are listed): cuIpcCloseMemHandle on every mapping (VMM:
//	         cuMemUnmap, cuMemAddressFree, cuMemRelease), cuEventDestroy on
//	         every opened event. Sent to every child
//	         before any is told to exit, and when a rank dies.
//	exit     parent → child, only once every importer of the child's memory
//	         has acknowledged its unmap or is gone: the child frees its
//	         memory, replies, and exits.
const (
	opHello        = "hello"
	opMap          = "map"
	opFill         = "fill"
	opPoison       = "poison"
	opCheck        = "check"
	opTime         = "time"
	opArm          = "arm"
	opFollow       = "follow"
	opRelease      = "release"
	opCollect      = "collect"
	opChase        = "chase"
	opPingPong     = "pingpong"
	opPingPongWait = "pingpong_wait"
	opRenew        = "renew"
	opUnmap        = "unmap"
	opExit         = "exit"
)

// childFD is the descriptor the child finds its end of the channel on
// (exec.Cmd.ExtraFiles[0]).
const childFD = 3

// maxFrame bounds a frame; a longer length prefix means a broken stream.
const maxFrame = 16 << 20

// message is one frame: a request (Op and Body) or its reply (Op, Seq, and
// either Body or Err).
type message struct {
	Seq  uint64          `json:"seq"`
	Op   string          `json:"op"`
	Body json.RawMessage `json:"body,omitempty"`
	// Err is the failure of a request; CUDA the driver error in it, if any.
	Err  string      `json:"err,omitempty"`
	CUDA *cuda.Error `json:"cuda,omitempty"`
	// FDs counts the file descriptors that travel with the frame
	// (descriptors.go); files are they, in this process.
	FDs   int   `json:"fds,omitempty"`
	files []int `json:"-"`
}

// writeFrame sends one message.
func writeFrame(w io.Writer, m message) error {
	m.FDs = len(m.files)
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if len(b) > maxFrame {
		return fmt.Errorf("ipc: %s message of %d bytes is over the %d-byte limit", m.Op, len(b), maxFrame)
	}
	buf := make([]byte, 4+len(b))
	binary.BigEndian.PutUint32(buf, uint32(len(b)))
	copy(buf[4:], b)
	if len(m.files) > 0 {
		return writeWithDescriptors(w, buf, m.files)
	}
	_, err = w.Write(buf)
	return err
}

// errBadFrame marks a stream that does not hold protocol frames.
var errBadFrame = errors.New("ipc: malformed frame")

// readFrame reads one message. io.EOF means the other side closed the
// channel between frames; a stream cut inside a frame is io.ErrUnexpectedEOF.
func readFrame(r io.Reader) (message, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return message{}, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n == 0 || n > maxFrame {
		return message{}, fmt.Errorf("%w: length %d", errBadFrame, n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return message{}, err
	}
	var m message
	if err := json.Unmarshal(b, &m); err != nil {
		return message{}, fmt.Errorf("%w: %v", errBadFrame, err)
	}
	if m.Op == "" {
		return message{}, fmt.Errorf("%w: no op", errBadFrame)
	}
	return m, nil
}

// Message bodies.

// The names of a rank's exported buffers.
const (
	bufSend    = "send"    // bandwidth source (bufBytes)
	bufRecv    = "recv"    // bandwidth destination (bufBytes)
	bufScratch = "scratch" // pointer-chase chain (largest working set)
	bufSmall   = "small"   // ping-pong flags, status and timestamps (smallBytes)
)

type helloReq struct {
	Rank   int `json:"rank"`
	Device int `json:"device"`
	// Buffers to allocate and export, by name, in bytes.
	Buffers        map[string]uint64 `json:"buffers"`
	LatchTimeoutNs int64             `json:"latch_timeout_ns"`
	// Handles is how the buffers are shared: legacy (when empty), vmm or
	// fabric.
	Handles Handles `json:"handles,omitempty"`
}

// export is one buffer as its owner shares it: a legacy IPC handle, or Span
// bytes of VMM memory, as a fabric handle or a file descriptor that travels
// with the frame (in the order of the exports).
type export struct {
	Name   string             `json:"name"`
	Bytes  uint64             `json:"bytes"`
	Handle cuda.IpcMemHandle  `json:"handle"`
	Span   uint64             `json:"span,omitempty"`
	Fabric *cuda.FabricHandle `json:"fabric,omitempty"`
}

type helloReply struct {
	Pid       int                 `json:"pid"`
	Device    int                 `json:"device"`
	Name      string              `json:"name"`
	Simulated bool                `json:"simulated"`
	Exports   []export            `json:"exports"`
	Event     cuda.IpcEventHandle `json:"event"`
	// files are the descriptors of the exports (VMM), the parent's to close.
	files []int
}

// keep takes the descriptors that came with the reply.
func (h *helloReply) keep(fds []int) { h.files = fds }

// peerHandles is what a child needs to import another rank.
type peerHandles struct {
	Rank    int                 `json:"rank"`
	Device  int                 `json:"device"`
	Exports []export            `json:"exports"`
	Event   cuda.IpcEventHandle `json:"event"`
}

type mapReq struct {
	Peers []peerHandles `json:"peers"`
	// files are the descriptors of the peers' exports (VMM), peer by peer,
	// export by export; they travel with the frame.
	files []int
}

func (m mapReq) descriptors() []int { return m.files }

// mapResult says how one peer was imported.
type mapResult struct {
	Rank int         `json:"rank"`
	Err  string      `json:"err,omitempty"`
	CUDA *cuda.Error `json:"cuda,omitempty"`
	// Mode is "ipc" (cuIpcOpenMemHandle_v2), "vmm" (imported file
	// descriptors), "fabric" (imported fabric handles) or "simulated"
	// (stand-in allocations in the child's own simulated machine).
	Mode string `json:"mode"`
	// Reopened counts the handles opened a second time whose second open
	// returned the first pointer (the reference-counting rule, checked).
	Reopened int `json:"reopened"`
}

type mapReply struct {
	Results []mapResult `json:"results"`
}

// bufRef names a buffer of a rank, as the child that receives it sees it:
// its own, mapped from another process, or (simulated) a stand-in.
type bufRef struct {
	Rank int    `json:"rank"`
	Name string `json:"name"`
}

type dataReq struct {
	Buf   bufRef `json:"buf"`
	Bytes uint64 `json:"bytes"`
	Seed  uint32 `json:"seed"`
}

type checkReply struct {
	// BadWords is 0 when the data matched.
	BadWords     uint64 `json:"bad_words"`
	FirstBadByte uint64 `json:"first_bad_byte"`
}

// flow is one directed copy of a test (bench.flow's wire form), issued by
// Issuer's process.
type flow struct {
	Issuer int    `json:"issuer"`
	Src    bufRef `json:"src"`
	Dst    bufRef `json:"dst"`
	Bytes  uint64 `json:"bytes"`
	// SM selects the SM copy kernel; nil means the copy engine.
	SM *measure.SMConfig `json:"sm,omitempty"`
	// PeerContext (copy engine only) reaches the other rank's buffer
	// through a second mapping, opened in this process's context on that
	// rank's device, and copies with cuMemcpyPeerAsync between the two
	// contexts: the arrangement in which the driver can let the GPU that
	// holds the data drive the copy, as it does within one process.
	PeerContext bool `json:"peer_context,omitempty"`
}

// timeReq asks for samples of a transfer alone, with the timing of Reps
// repetitions after Warmup (a Reps of 0: calibrated by the child, as the
// first round of a figure asks).
type timeReq struct {
	X       flow `json:"flow"`
	Samples int  `json:"samples"`
	// FewSamples, when set, is how many samples to take instead of Samples
	// when the calibrated timing's windows are long (measure.Timing.Few).
	FewSamples int `json:"few_samples,omitempty"`
	Reps       int `json:"reps,omitempty"`
	Warmup     int `json:"warmup,omitempty"`
}

type timeReply struct {
	Reps   int       `json:"reps"`
	Warmup int       `json:"warmup"`
	Few    bool      `json:"few,omitempty"`
	Ms     []float64 `json:"ms"`
}

// sampleReq arms (leader) or queues behind the leader's start event
// (follower) one sample of a transfer that runs at the same time as another
// process's.
type sampleReq struct {
	X      flow `json:"flow"`
	Reps   int  `json:"reps"`
	Warmup int  `json:"warmup"`
	// Leader is the rank whose start event a follower waits on.
	Leader int `json:"leader"`
}

type rankReq struct {
	Rank int `json:"rank"`
}

type msReply struct {
	Ms float64 `json:"ms"`
}

type chaseReq struct {
	Owner  int    `json:"owner"`
	Runner int    `json:"runner"`
	Bytes  uint64 `json:"bytes"`
	Seed   uint32 `json:"seed"`
	// Chunks is the number of timed chunks (samples).
	Chunks int `json:"chunks"`
}

type samplesReply struct {
	Samples []float64 `json:"samples"`
}

type pingPongReq struct {
	Me   int `json:"me"`
	Peer int `json:"peer"`
	// Slot is where both flags sit (measure.FlagOffset).
	Slot      int    `json:"slot"`
	Role      uint32 `json:"role"` // 0 initiator, 1 responder
	Iters     uint32 `json:"iters"`
	Chunk     uint32 `json:"chunk"`
	TimeoutNs uint64 `json:"timeout_ns"`
}

type pingPongReply struct {
	Status uint32   `json:"status"`
	Times  []uint64 `json:"times,omitempty"`
}

// renewReq asks a child to renew what What names (of RenewStreams,
// RenewEvents and RenewModules) on every rank it hosts, before round Round (from 0).
type renewReq struct {
	What  measure.Renewal `json:"what"`
	Round int             `json:"round"`
}

type unmapReq struct {
	// Ranks to close; empty means every imported rank.
	Ranks []int `json:"ranks,omitempty"`
}

type unmapReply struct {
	// Closed counts cuIpcCloseMemHandle calls (or simulated stand-ins freed).
	Closed int `json:"closed"`
}

// remoteError is a request that failed in a child process. It unwraps to the
// CUDA error the child saw, so errors.Is and cuda.NameOf work across the
// process boundary.
type remoteError struct {
	msg  string
	cuda *cuda.Error
}

func (e *remoteError) Error() string { return e.msg }

func (e *remoteError) Unwrap() error {
	if e.cuda == nil {
		return nil
	}
	return e.cuda
}

// errorFields splits an error into what travels in a message.
func errorFields(err error) (string, *cuda.Error) {
	var ce *cuda.Error
	if errors.As(err, &ce) {
		c := *ce
		return err.Error(), &c
	}
	return err.Error(), nil
}

// fromFields is the inverse of errorFields; it returns nil for no error.
func fromFields(msg string, ce *cuda.Error) error {
	if msg == "" {
		return nil
	}
	return &remoteError{msg: msg, cuda: ce}
}
