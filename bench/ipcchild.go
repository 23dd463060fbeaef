package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/results"
)

// ipcLazyEnablePeerAccess is CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS, the one flag
// cuIpcOpenMemHandle_v2 accepts.
const ipcLazyEnablePeerAccess = 1

// ErrIPCParentGone is returned by ServeIPCChild when the parent closed the
// channel without telling the child to exit (it crashed or was killed).
var ErrIPCParentGone = errors.New("ipc-child: the parent closed the channel")

// IPCChildConn returns the channel a child of `p2pbench ipc` inherits from
// its parent: its end of a socketpair, as descriptor 3.
func IPCChildConn() (net.Conn, error) {
	f := os.NewFile(ipcChildFD, "ipc")
	if f == nil {
		return nil, errors.New("ipc-child: no descriptor 3: this command is started by `p2pbench ipc`, not by hand")
	}
	defer f.Close() // FileConn works on a duplicate
	c, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("ipc-child: descriptor 3 is not the channel of a `p2pbench ipc` parent (this command is not run by hand): %w", err)
	}
	return c, nil
}

// ServeIPCChild is the child side of `p2pbench ipc`: it answers the parent's
// requests on conn, driving its device through drv, until the parent says
// exit (it returns nil), the channel closes (ErrIPCParentGone), or ctx ends.
// The protocol is described in ipcproto.go.
func ServeIPCChild(ctx context.Context, drv gpu.Driver, conn net.Conn) error {
	fault, err := parseIPCFaults(os.Getenv(IPCFaultEnv))
	if err != nil {
		return err
	}
	c := &ipcChild{
		drv: drv, sim: drv.Simulated(), rank: -1, faults: fault,
		hosted: map[int]*hostedRank{}, imports: map[int]*importedRank{},
		pending: map[int]*queuedSample{}, pings: map[int]pingPongReq{},
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	defer conn.Close()
	r := bufio.NewReader(conn)
	for {
		m, err := readFrame(r)
		if err != nil {
			c.abandon()
			switch {
			case ctx.Err() != nil:
				return ctx.Err()
			case errors.Is(err, io.EOF):
				return ErrIPCParentGone
			}
			return fmt.Errorf("ipc-child: reading from the parent: %w", err)
		}
		body, herr := c.handle(ctx, m)
		reply := ipcMsg{Seq: m.Seq, Op: m.Op, Body: body}
		if herr != nil {
			reply.Body = nil
			reply.Err, reply.CUDA = errorFields(herr)
		}
		if err := writeFrame(conn, reply); err != nil {
			c.abandon()
			return fmt.Errorf("ipc-child: writing to the parent: %w", err)
		}
		if m.Op == opExit && herr == nil {
			return nil
		}
	}
}

// ipcChild is the state of one child process.
type ipcChild struct {
	drv    gpu.Driver
	sim    bool
	rank   int
	opt    Options
	faults []ipcFault

	// hosted are the ranks whose work this process issues: its own and, on a
	// simulated driver, stand-ins for its peers.
	hosted map[int]*hostedRank
	// imports are other ranks' buffers and start events as opened here.
	imports map[int]*importedRank
	// pending are the samples queued by arm or follow, by issuing rank.
	pending map[int]*queuedSample
	// pings are the ping-pong kernels launched, by rank.
	pings map[int]pingPongReq
}

// hostedRank is a rank whose memory and streams live in this process.
type hostedRank struct {
	rank    int
	eng     *Engine
	dv      *device
	bufs    map[string]cuda.DevicePtr
	sizes   map[string]uint64
	start   cuda.Event // interprocess: what followers of this rank's samples wait on
	standIn bool
}

// importedRank is another rank's memory and start event, opened here.
type importedRank struct {
	rank, dev int
	bufs      map[string]cuda.DevicePtr
	sizes     map[string]uint64
	start     cuda.Event
	// handles are the rank's memory handles, for opening again elsewhere.
	handles map[string]cuda.IpcMemHandle
	// onPeer are the rank's buffers opened in this process's context on
	// the rank's own device (peerCtx), for PeerContext copies; opened on
	// first use, each once, closed with the rest.
	peerCtx gpu.Context
	onPeer  map[string]cuda.DevicePtr
}

// queuedSample is one sample enqueued by arm (latched) or follow.
type queuedSample struct {
	h          *hostedRank
	start, end cuda.Event
	reps       int
	latched    bool
}

func (c *ipcChild) own() *hostedRank { return c.hosted[c.rank] }

func decodeBody[T any](m ipcMsg) (T, error) {
	var v T
	if len(m.Body) == 0 {
		return v, fmt.Errorf("ipc-child: %s request without a body", m.Op)
	}
	if err := json.Unmarshal(m.Body, &v); err != nil {
		return v, fmt.Errorf("ipc-child: %s request: %w", m.Op, err)
	}
	return v, nil
}

func encodeBody(v any, err error) (json.RawMessage, error) {
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// handle runs one request and returns its reply body.
func (c *ipcChild) handle(ctx context.Context, m ipcMsg) (json.RawMessage, error) {
	if m.Op == opHello {
		req, err := decodeBody[helloReq](m)
		if err != nil {
			return nil, err
		}
		c.injectFault(req.Rank, m.Op)
		return encodeBody(c.hello(req))
	}
	c.injectFault(c.rank, m.Op)
	if c.own() == nil {
		return nil, fmt.Errorf("ipc-child: %s before hello", m.Op)
	}
	switch m.Op {
	case opMap:
		req, err := decodeBody[mapReq](m)
		if err != nil {
			return nil, err
		}
		return encodeBody(c.mapPeers(req), nil)
	case opFill, opPoison, opCheck:
		req, err := decodeBody[dataReq](m)
		if err != nil {
			return nil, err
		}
		return encodeBody(c.data(m.Op, req))
	case opTime:
		req, err := decodeBody[timeReq](m)
		if err != nil {
			return nil, err
		}
		return encodeBody(c.time(ctx, req))
	case opArm, opFollow:
		req, err := decodeBody[sampleReq](m)
		if err != nil {
			return nil, err
		}
		return encodeBody(struct{}{}, c.queue(req, m.Op == opArm))
	case opRelease, opCollect:
		req, err := decodeBody[rankReq](m)
		if err != nil {
			return nil, err
		}
		ms, err := c.finish(req.Rank, m.Op == opRelease)
		return encodeBody(msReply{Ms: ms}, err)
	case opChase:
		req, err := decodeBody[chaseReq](m)
		if err != nil {
			return nil, err
		}
		s, err := c.chase(req)
		return encodeBody(samplesReply{Samples: s}, err)
	case opPingPong:
		req, err := decodeBody[pingPongReq](m)
		if err != nil {
			return nil, err
		}
		return encodeBody(struct{}{}, c.pingPong(req))
	case opPingPongWait:
		req, err := decodeBody[rankReq](m)
		if err != nil {
			return nil, err
		}
		return encodeBody(c.pingPongWait(req.Rank))
	case opUnmap:
		req, err := decodeBody[unmapReq](m)
		if err != nil {
			return nil, err
		}
		n, err := c.unmap(req.Ranks)
		return encodeBody(unmapReply{Closed: n}, err)
	case opExit:
		return encodeBody(struct{}{}, c.exit())
	}
	return nil, fmt.Errorf("ipc-child: unknown request %q", m.Op)
}

// hello opens the device, allocates and exports the buffers and the start
// event.
func (c *ipcChild) hello(req helloReq) (helloReply, error) {
	if c.own() != nil {
		return helloReply{}, errors.New("ipc-child: a second hello")
	}
	c.rank = req.Rank
	c.opt = Options{Devices: []int{req.Device}, Verify: req.Verify, LatchTimeout: time.Duration(req.LatchTimeoutNs)}
	c.opt.setDefaults()
	info, err := c.drv.DeviceInfo(req.Device)
	if err != nil {
		return helloReply{}, fmt.Errorf("device %d: %w", req.Device, err)
	}
	if !info.UnifiedAddressing {
		return helloReply{}, fmt.Errorf("device %d: CUDA IPC needs unified addressing, which this device does not have", req.Device)
	}
	h, err := c.host(req.Rank, req.Device, req.Buffers)
	if err != nil {
		return helloReply{}, err
	}
	c.hosted[req.Rank] = h
	exports, ev, err := h.export()
	if err != nil {
		return helloReply{}, err
	}
	return helloReply{Pid: os.Getpid(), Device: req.Device, Name: info.Name, Simulated: c.sim, Exports: exports, Event: ev}, nil
}

// host opens dev for rank in an engine of its own and allocates its buffers.
func (c *ipcChild) host(rank, dev int, sizes map[string]uint64) (*hostedRank, error) {
	opt := c.opt
	opt.Devices = []int{dev}
	eng := NewEngine(c.drv, opt)
	eng.run = &results.Run{}
	if sizes[bufSend] != sizes[bufRecv] {
		return nil, fmt.Errorf("ipc-child: send and receive buffers of %d and %d bytes", sizes[bufSend], sizes[bufRecv])
	}
	if n := sizes[bufSmall]; n > smallBytes {
		return nil, fmt.Errorf("ipc-child: a small buffer of %d bytes (at most %d)", n, smallBytes)
	}
	dv, err := eng.openDevice(dev, sizes[bufSend])
	if dv != nil {
		eng.devs[dev], eng.order = dv, []int{dev}
	}
	if err != nil {
		_ = eng.teardown()
		return nil, err
	}
	h := &hostedRank{rank: rank, eng: eng, dv: dv, bufs: map[string]cuda.DevicePtr{}, sizes: map[string]uint64{}}
	if dv.bufBytes > 0 {
		h.bufs[bufSend], h.bufs[bufRecv] = dv.send, dv.recv
		h.sizes[bufSend], h.sizes[bufRecv] = dv.bufBytes, dv.bufBytes
	}
	if n := sizes[bufScratch]; n > 0 {
		p, err := dv.scratchBuf(n)
		if err != nil {
			_ = eng.teardown()
			return nil, err
		}
		h.bufs[bufScratch], h.sizes[bufScratch] = p, n
	}
	if sizes[bufSmall] > 0 {
		p, err := dv.smallBuf()
		if err != nil {
			_ = eng.teardown()
			return nil, err
		}
		h.bufs[bufSmall], h.sizes[bufSmall] = p, smallBytes
	}
	if h.start, err = dv.ctx.EventCreateInterprocess(); err != nil {
		_ = eng.teardown()
		return nil, fmt.Errorf("device %d: creating the interprocess start event: %w", dev, err)
	}
	return h, nil
}

// export returns the IPC handles of h's buffers and start event.
func (h *hostedRank) export() ([]ipcExport, cuda.IpcEventHandle, error) {
	var out []ipcExport
	var ev cuda.IpcEventHandle
	names := make([]string, 0, len(h.bufs))
	for n := range h.bufs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		hd, err := h.dv.ctx.IpcGetMemHandle(h.bufs[n])
		if err != nil {
			return nil, ev, fmt.Errorf("device %d: exporting the %s buffer: %w", h.dv.idx, n, err)
		}
		out = append(out, ipcExport{Name: n, Bytes: h.sizes[n], Handle: hd})
	}
	ev, err := h.dv.ctx.IpcGetEventHandle(h.start)
	if err != nil {
		return nil, ev, fmt.Errorf("device %d: exporting the start event: %w", h.dv.idx, err)
	}
	return out, ev, nil
}

// release frees what h holds. For the child's own rank it is called only
// once every importer has closed its mappings (the parent's exit).
func (h *hostedRank) release() error {
	var errs []error
	if h.start != 0 {
		if err := h.dv.ctx.EventDestroy(h.start); err != nil {
			errs = append(errs, fmt.Errorf("device %d: destroying the start event: %w", h.dv.idx, err))
		}
		h.start = 0
	}
	errs = append(errs, h.eng.teardown())
	return errors.Join(errs...)
}

// mapPeers imports every listed peer; each gets its own result.
func (c *ipcChild) mapPeers(req mapReq) mapReply {
	var out mapReply
	for _, p := range req.Peers {
		res := mapResult{Rank: p.Rank, Mode: "ipc"}
		err := c.mapPeer(p, &res)
		if err != nil {
			res.Err, res.CUDA = errorFields(err)
		}
		out.Results = append(out.Results, res)
	}
	return out
}

func (c *ipcChild) mapPeer(p ipcPeer, res *mapResult) error {
	if p.Rank == c.rank || c.imports[p.Rank] != nil || c.hosted[p.Rank] != nil {
		return fmt.Errorf("ipc-child: rank %d mapped twice", p.Rank)
	}
	exports, event := p.Exports, p.Event
	if c.sim {
		// A simulated driver is a model inside one process: the peer's
		// handles name memory of the peer's own model, which this one cannot
		// reach. So this child hosts a stand-in of the peer on the peer's
		// device and imports the stand-in's handles, through the same IPC
		// calls and rules as on real GPUs.
		res.Mode = "simulated"
		st, err := c.standIn(p)
		if err != nil {
			return err
		}
		if exports, event, err = st.export(); err != nil {
			_ = st.release()
			return err
		}
		c.hosted[p.Rank] = st
	}
	imp, reopened, err := c.importRank(p, exports, event)
	res.Reopened = reopened
	if err != nil {
		if st := c.hosted[p.Rank]; st != nil && st.standIn {
			_ = st.release()
			delete(c.hosted, p.Rank)
		}
		return err
	}
	c.imports[p.Rank] = imp
	return nil
}

// standIn hosts a simulated peer in this process.
func (c *ipcChild) standIn(p ipcPeer) (*hostedRank, error) {
	sizes := map[string]uint64{}
	for _, x := range p.Exports {
		sizes[x.Name] = x.Bytes
	}
	st, err := c.host(p.Rank, p.Device, sizes)
	if err != nil {
		return nil, fmt.Errorf("hosting a simulated stand-in of rank %d: %w", p.Rank, err)
	}
	st.standIn = true
	if own := c.own(); p.Device != own.dv.idx {
		// The stand-in's own work (a push into this rank's memory) reaches
		// this rank's device directly, with peer access; this rank reaches
		// the stand-in through its IPC mapping.
		if err := st.eng.peers.Enable(st.dv.ctx, own.dv.ctx); err != nil {
			_ = st.release()
			return nil, err
		}
	}
	return st, nil
}

// importRank opens a peer's buffers and start event in this process's
// context. Each memory handle is opened twice to check the documented
// reference counting (the second open maps nothing new and returns the same
// pointer); the second reference is closed at once, the first at unmap.
func (c *ipcChild) importRank(p ipcPeer, exports []ipcExport, event cuda.IpcEventHandle) (*importedRank, int, error) {
	ctx := c.own().dv.ctx
	imp := &importedRank{rank: p.Rank, dev: p.Device, bufs: map[string]cuda.DevicePtr{}, sizes: map[string]uint64{},
		handles: map[string]cuda.IpcMemHandle{}, onPeer: map[string]cuda.DevicePtr{}}
	fail := func(err error) (*importedRank, int, error) {
		_, _ = imp.close(ctx)
		return nil, 0, err
	}
	reopened := 0
	for _, x := range exports {
		ptr, err := ctx.IpcOpenMemHandle(x.Handle, ipcLazyEnablePeerAccess)
		if err != nil {
			return fail(fmt.Errorf("opening rank %d's %s buffer (device %d): %w", p.Rank, x.Name, p.Device, err))
		}
		imp.bufs[x.Name], imp.sizes[x.Name], imp.handles[x.Name] = ptr, x.Bytes, x.Handle
		again, err := ctx.IpcOpenMemHandle(x.Handle, ipcLazyEnablePeerAccess)
		if err != nil {
			return fail(fmt.Errorf("opening rank %d's %s buffer a second time: %w", p.Rank, x.Name, err))
		}
		cerr := ctx.IpcCloseMemHandle(again)
		if again != ptr {
			return fail(fmt.Errorf("opening rank %d's %s buffer a second time returned %#x, the first open %#x: the driver mapped the same handle twice in one context", p.Rank, x.Name, uint64(again), uint64(ptr)))
		}
		if cerr != nil {
			return fail(fmt.Errorf("closing the second open of rank %d's %s buffer: %w", p.Rank, x.Name, cerr))
		}
		reopened++
	}
	ev, err := ctx.IpcOpenEventHandle(event)
	if err != nil {
		return fail(fmt.Errorf("opening rank %d's start event: %w", p.Rank, err))
	}
	imp.start = ev
	return imp, reopened, nil
}

// close closes every mapping of imp (cuIpcCloseMemHandle) and its event; it
// returns how many mappings it closed.
func (imp *importedRank) close(ctx gpu.Context) (int, error) {
	var errs []error
	n := 0
	for name, p := range imp.bufs {
		if err := ctx.IpcCloseMemHandle(p); err != nil {
			errs = append(errs, fmt.Errorf("closing rank %d's %s buffer: %w", imp.rank, name, err))
		} else {
			n++
		}
		delete(imp.bufs, name)
	}
	for name, p := range imp.onPeer {
		if err := imp.peerCtx.IpcCloseMemHandle(p); err != nil {
			errs = append(errs, fmt.Errorf("closing rank %d's %s buffer opened on device %d: %w", imp.rank, name, imp.dev, err))
		} else {
			n++
		}
		delete(imp.onPeer, name)
	}
	if imp.start != 0 {
		if err := ctx.EventDestroy(imp.start); err != nil {
			errs = append(errs, fmt.Errorf("destroying rank %d's opened start event: %w", imp.rank, err))
		}
		imp.start = 0
	}
	return n, errors.Join(errs...)
}

// unmap closes what was imported of ranks (every imported rank when empty),
// then frees the simulated stand-ins of those ranks, in that order.
func (c *ipcChild) unmap(ranks []int) (int, error) {
	if len(ranks) == 0 {
		for r := range c.imports {
			ranks = append(ranks, r)
		}
		for r, h := range c.hosted {
			if h.standIn && !slices.Contains(ranks, r) {
				ranks = append(ranks, r)
			}
		}
	}
	var errs []error
	closed := 0
	ctx := c.own().dv.ctx
	for _, r := range ranks {
		if imp := c.imports[r]; imp != nil {
			n, err := imp.close(ctx)
			closed += n
			errs = append(errs, err)
			delete(c.imports, r)
		}
		if h := c.hosted[r]; h != nil && h.standIn {
			errs = append(errs, h.release())
			delete(c.hosted, r)
		}
	}
	return closed, errors.Join(errs...)
}

// exit closes every mapping left and frees this rank's memory.
func (c *ipcChild) exit() error {
	_, err := c.unmap(nil)
	if own := c.own(); own != nil {
		err = errors.Join(err, own.release())
		delete(c.hosted, c.rank)
	}
	return err
}

// abandon is all the cleanup left once the parent went away without an
// exit: the latches let go. Mappings and memory are left to the process's
// end, where the driver reclaims them: other children may still map this
// one's memory, and a stream waiting on a failed peer's event would block an
// orderly close for ever.
func (c *ipcChild) abandon() {
	for _, h := range c.hosted {
		releaseLatch(h.dv)
	}
}

// issuer returns the hosted rank that issues work for rank.
func (c *ipcChild) issuer(rank int) (*hostedRank, error) {
	if h := c.hosted[rank]; h != nil {
		return h, nil
	}
	return nil, fmt.Errorf("ipc-child: rank %d's work is not issued by rank %d's process", rank, c.rank)
}

// ptr resolves a buffer as issuer reaches it: the rank's own memory when the
// issuer is that rank (or, simulated, any rank hosted in this process reaching
// another), else this process's IPC mapping of it.
func (c *ipcChild) ptr(issuer int, ref bufRef, bytes uint64) (cuda.DevicePtr, error) {
	var p cuda.DevicePtr
	var size uint64
	if h := c.hosted[ref.Rank]; h != nil && (ref.Rank == issuer || issuer != c.rank) {
		p, size = h.bufs[ref.Name], h.sizes[ref.Name]
	} else if imp := c.imports[ref.Rank]; imp != nil && issuer == c.rank {
		p, size = imp.bufs[ref.Name], imp.sizes[ref.Name]
	} else {
		return 0, fmt.Errorf("ipc-child: rank %d has not mapped rank %d's memory", issuer, ref.Rank)
	}
	if p == 0 {
		return 0, fmt.Errorf("ipc-child: rank %d has no %s buffer", ref.Rank, ref.Name)
	}
	if bytes > size {
		return 0, fmt.Errorf("ipc-child: %d bytes of rank %d's %s buffer of %d", bytes, ref.Rank, ref.Name, size)
	}
	return p, nil
}

// startEvent resolves the start event of leader as follower waits on it.
func (c *ipcChild) startEvent(follower, leader int) (cuda.Event, error) {
	if h := c.hosted[leader]; h != nil && follower != c.rank {
		return h.start, nil
	}
	if imp := c.imports[leader]; imp != nil && follower == c.rank {
		return imp.start, nil
	}
	return 0, fmt.Errorf("ipc-child: rank %d has not opened rank %d's start event", follower, leader)
}

// data fills, poisons or checks a buffer in its owner's process.
func (c *ipcChild) data(op string, req dataReq) (checkReply, error) {
	h := c.hosted[req.Buf.Rank]
	if h == nil {
		return checkReply{}, fmt.Errorf("ipc-child: rank %d's memory is checked by its own process", req.Buf.Rank)
	}
	p, err := c.ptr(req.Buf.Rank, req.Buf, req.Bytes)
	if err != nil {
		return checkReply{}, err
	}
	switch op {
	case opFill:
		return checkReply{}, h.dv.fill(p, req.Bytes, req.Seed)
	case opPoison:
		return checkReply{}, h.dv.poison(p, req.Bytes)
	}
	err = h.dv.check(p, req.Bytes, req.Seed)
	var mm *Mismatch
	if errors.As(err, &mm) {
		return checkReply{BadWords: mm.BadWords, FirstBadByte: mm.FirstBadByte}, nil
	}
	return checkReply{}, err
}

// transferOp builds the operation of x, issued by x.Issuer: cuMemcpyAsync on
// the (mapped) addresses for the copy engine, else the SM copy kernel.
func (c *ipcChild) transferOp(x xfer) (*hostedRank, transfer, error) {
	h, err := c.issuer(x.Issuer)
	if err != nil {
		return nil, transfer{}, err
	}
	src, err := c.ptr(x.Issuer, x.Src, x.Bytes)
	if err != nil {
		return nil, transfer{}, err
	}
	dst, err := c.ptr(x.Issuer, x.Dst, x.Bytes)
	if err != nil {
		return nil, transfer{}, err
	}
	if c.pending[x.Issuer] != nil {
		return nil, transfer{}, fmt.Errorf("ipc-child: rank %d already has a sample queued", x.Issuer)
	}
	if x.SM == nil && x.PeerContext {
		return c.peerContextOp(h, x)
	}
	if x.SM == nil {
		ctx, dev, n := h.dv.ctx, h.dv.idx, x.Bytes
		op := func(s cuda.Stream) error {
			if err := ctx.MemcpyAsync(dst, src, n, s); err != nil {
				return fmt.Errorf("cuMemcpyAsync on device %d: %w", dev, err)
			}
			return nil
		}
		return h, transfer{dv: h.dv, op: op}, nil
	}
	op, err := h.eng.copyOp(h.dv, x.SM.engine(), *x.SM, dst, nil, src, nil, x.Bytes)
	if err != nil {
		return nil, transfer{}, err
	}
	return h, transfer{dv: h.dv, op: op}, nil
}

// peerContextOp builds a PeerContext copy of x: the issuer's own buffer on
// one side, on the other the other rank's buffer as opened in this process's
// context on that rank's device, copied with cuMemcpyPeerAsync between the
// two contexts on the issuer's stream.
func (c *ipcChild) peerContextOp(h *hostedRank, x xfer) (*hostedRank, transfer, error) {
	own, other := x.Src, x.Dst
	if own.Rank != x.Issuer {
		own, other = other, own
	}
	if own.Rank != x.Issuer || other.Rank == x.Issuer {
		return nil, transfer{}, fmt.Errorf("ipc-child: a peer-context copy issued by rank %d must involve its own buffer and another rank's", x.Issuer)
	}
	ownPtr, err := c.ptr(x.Issuer, own, x.Bytes)
	if err != nil {
		return nil, transfer{}, err
	}
	otherPtr, otherCtx, err := c.onPeerDevice(h, other, x.Bytes)
	if err != nil {
		return nil, transfer{}, err
	}
	src, srcCtx, dst, dstCtx := ownPtr, h.dv.ctx, otherPtr, otherCtx
	if own == x.Dst {
		src, srcCtx, dst, dstCtx = otherPtr, otherCtx, ownPtr, h.dv.ctx
	}
	ctx, dev, peerDev, n := h.dv.ctx, h.dv.idx, otherCtx.Device(), x.Bytes
	op := func(s cuda.Stream) error {
		if err := ctx.MemcpyPeerAsync(dst, dstCtx, src, srcCtx, n, s); err != nil {
			return fmt.Errorf("cuMemcpyPeerAsync on device %d (the peer's buffer opened in a context on device %d): %w", dev, peerDev, err)
		}
		return nil
	}
	return h, transfer{dv: h.dv, op: op}, nil
}

// onPeerDevice returns ref's buffer as opened in this process's context on
// its own device, and that context. The context is the device's primary
// context (retained by the driver binding, released when the process ends
// its driver); peer access is enabled both ways between it and the issuer's,
// and the handle is opened there once. On a simulated driver the other
// rank is hosted in this process (a stand-in, or this process's own rank
// when a stand-in issues): its buffer is used as it is.
func (c *ipcChild) onPeerDevice(h *hostedRank, ref bufRef, bytes uint64) (cuda.DevicePtr, gpu.Context, error) {
	if st := c.hosted[ref.Rank]; c.sim && st != nil {
		p, err := c.ptr(ref.Rank, ref, bytes)
		if err == nil {
			err = c.enableBothWays(h, st.dv.ctx)
		}
		return p, st.dv.ctx, err
	}
	imp := c.imports[ref.Rank]
	if imp == nil {
		return 0, nil, fmt.Errorf("ipc-child: rank %d has not mapped rank %d's memory", h.rank, ref.Rank)
	}
	hd, ok := imp.handles[ref.Name]
	if !ok {
		return 0, nil, fmt.Errorf("ipc-child: rank %d has no %s buffer", ref.Rank, ref.Name)
	}
	if bytes > imp.sizes[ref.Name] {
		return 0, nil, fmt.Errorf("ipc-child: %d bytes of rank %d's %s buffer of %d", bytes, ref.Rank, ref.Name, imp.sizes[ref.Name])
	}
	if imp.dev == h.dv.idx {
		return 0, nil, fmt.Errorf("ipc-child: rank %d is on this process's device %d: no other device's context to open its buffer in", ref.Rank, imp.dev)
	}
	if imp.peerCtx == nil {
		pc, err := c.drv.Context(imp.dev)
		if err != nil {
			return 0, nil, fmt.Errorf("opening device %d's primary context in rank %d's process: %w", imp.dev, h.rank, err)
		}
		if err := c.enableBothWays(h, pc); err != nil {
			return 0, nil, err
		}
		imp.peerCtx = pc
	}
	if p := imp.onPeer[ref.Name]; p != 0 {
		return p, imp.peerCtx, nil
	}
	p, err := imp.peerCtx.IpcOpenMemHandle(hd, ipcLazyEnablePeerAccess)
	if err != nil {
		return 0, nil, fmt.Errorf("opening rank %d's %s buffer in a context on its own device %d: %w", ref.Rank, ref.Name, imp.dev, err)
	}
	imp.onPeer[ref.Name] = p
	return p, imp.peerCtx, nil
}

// enableBothWays enables peer access between h's context and pc, both ways,
// with h's engine keeping track (it disables what it enabled at the end).
func (c *ipcChild) enableBothWays(h *hostedRank, pc gpu.Context) error {
	if h.eng.peers.Enabled(h.dv.idx, pc.Device()) && h.eng.peers.Enabled(pc.Device(), h.dv.idx) {
		return nil
	}
	if err := h.eng.peers.Enable(h.dv.ctx, pc); err != nil {
		return err
	}
	return h.eng.peers.Enable(pc, h.dv.ctx)
}

// time measures one transfer alone, with this process's latch.
func (c *ipcChild) time(ctx context.Context, req timeReq) (timeReply, error) {
	h, t, err := c.transferOp(req.X)
	if err != nil {
		return timeReply{}, err
	}
	ts := []transfer{t}
	tm, err := h.eng.calibrate(ctx, ts)
	if err != nil {
		return timeReply{}, err
	}
	ms, err := h.eng.timeTransfers(ctx, ts, tm, max(1, req.Samples))
	if err != nil {
		return timeReply{}, err
	}
	return timeReply{Reps: tm.reps, Ms: ms[0]}, nil
}

// queue enqueues one sample of a transfer that runs with another process's.
// The leader holds its stream with the latch and records its start event
// behind it; a follower's stream waits on that event, so the leader's one
// release starts both.
func (c *ipcChild) queue(req sampleReq, lead bool) error {
	h, t, err := c.transferOp(req.X)
	if err != nil {
		return err
	}
	if req.Reps < 1 || req.Warmup < 0 {
		return fmt.Errorf("ipc-child: %d repetitions and %d warm-ups", req.Reps, req.Warmup)
	}
	dv := h.dv
	var wait cuda.Event
	if !lead {
		if wait, err = c.startEvent(h.rank, req.Leader); err != nil {
			return err
		}
	}
	s, err := dv.stream(0)
	if err != nil {
		return fmt.Errorf("device %d: creating a stream: %w", dv.idx, err)
	}
	start, err := dv.event(0)
	if err == nil {
		_, err = dv.event(1)
	}
	if err != nil {
		return fmt.Errorf("device %d: creating an event: %w", dv.idx, err)
	}
	end := dv.events[1]
	if lead {
		f, err := dv.function(kernels.Latch)
		if err != nil {
			return err
		}
		armLatch(dv)
		atomic.StoreUint32(hostWord(dv.latch, latchStatusOffset), 0)
		args := kernels.LatchArgs{
			Flag:      uint64(dv.latch.Device),
			Status:    uint64(dv.latch.Device) + latchStatusOffset,
			TimeoutNs: uint64(c.opt.LatchTimeout.Nanoseconds()),
		}
		if err := dv.ctx.Launch(f, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, s, args.Params()...); err != nil {
			releaseLatch(dv)
			return fmt.Errorf("device %d: launching the latch: %w", dv.idx, err)
		}
	}
	err = func() error {
		if lead {
			if err := dv.ctx.EventRecord(h.start, s); err != nil {
				return fmt.Errorf("device %d: recording the interprocess start event: %w", dv.idx, err)
			}
		} else if err := dv.ctx.StreamWaitEvent(s, wait); err != nil {
			return fmt.Errorf("device %d: waiting on rank %d's start event: %w", dv.idx, req.Leader, err)
		}
		for i := 0; i < req.Warmup; i++ {
			if err := t.op(s); err != nil {
				return err
			}
		}
		if err := dv.ctx.EventRecord(start, s); err != nil {
			return fmt.Errorf("device %d: recording an event: %w", dv.idx, err)
		}
		for i := 0; i < req.Reps; i++ {
			if err := t.op(s); err != nil {
				return err
			}
		}
		if err := dv.ctx.EventRecord(end, s); err != nil {
			return fmt.Errorf("device %d: recording an event: %w", dv.idx, err)
		}
		return nil
	}()
	if err != nil {
		if lead {
			releaseLatch(dv)
		}
		return err
	}
	c.pending[h.rank] = &queuedSample{h: h, start: start, end: end, reps: req.Reps, latched: lead}
	return nil
}

// finish releases (leader) or collects (follower) the sample queued for rank
// and returns the milliseconds of one repetition.
func (c *ipcChild) finish(rank int, release bool) (float64, error) {
	q := c.pending[rank]
	if q == nil || q.latched != release {
		return 0, fmt.Errorf("ipc-child: rank %d has no sample queued by %s", rank, map[bool]string{true: opArm, false: opFollow}[release])
	}
	delete(c.pending, rank)
	dv := q.h.dv
	if release {
		releaseLatch(dv)
	}
	if err := dv.ctx.EventSynchronize(q.end); err != nil {
		return 0, fmt.Errorf("device %d: waiting for the timed work: %w", dv.idx, err)
	}
	el, err := dv.ctx.EventElapsed(q.start, q.end)
	if err != nil {
		return 0, fmt.Errorf("device %d: reading the events: %w", dv.idx, err)
	}
	if release && atomic.LoadUint32(hostWord(dv.latch, latchStatusOffset)) == kernels.LatchTimedOut {
		return 0, fmt.Errorf("device %d: %w", dv.idx, ErrLatchTimeout)
	}
	return float64(el) / float64(q.reps), nil
}

// chase builds a random chain through owner's scratch buffer as the runner
// maps it (addresses differ between processes, so the runner writes it) and
// follows it from the runner's device.
func (c *ipcChild) chase(req chaseReq) ([]float64, error) {
	h, err := c.issuer(req.Runner)
	if err != nil {
		return nil, err
	}
	buf, err := c.ptr(req.Runner, bufRef{req.Owner, bufScratch}, req.Bytes)
	if err != nil {
		return nil, err
	}
	small := h.bufs[bufSmall]
	nodes := req.Bytes / chaseStride
	if small == 0 || nodes < 2 || nodes&(nodes-1) != 0 {
		return nil, fmt.Errorf("ipc-child: a chase of %d bytes (a power of two of %d-byte nodes, and a small buffer, are needed)", req.Bytes, chaseStride)
	}
	dv := h.dv
	build, err := dv.function(kernels.ChaseBuild)
	if err != nil {
		return nil, err
	}
	bargs := kernels.ChaseBuildArgs{Buf: uint64(buf), Nodes: nodes, Stride: chaseStride, Seed: req.Seed}
	if err := dv.ctx.Launch(build, dv.launchGrid(), [3]uint32{256, 1, 1}, 0, dv.streams[0], bargs.Params()...); err != nil {
		return nil, fmt.Errorf("device %d: launching the chain build through the IPC mapping: %w", dv.idx, err)
	}
	if err := dv.ctx.StreamSynchronize(dv.streams[0]); err != nil {
		return nil, fmt.Errorf("device %d: chain build through the IPC mapping: %w", dv.idx, err)
	}
	return dv.chaseSamples(buf, nodes, small)
}

// pingPong launches one side of a ping-pong: this rank's flag in its own
// memory, the peer's flag through the IPC mapping. It does not wait.
func (c *ipcChild) pingPong(req pingPongReq) error {
	h, err := c.issuer(req.Me)
	if err != nil {
		return err
	}
	if _, busy := c.pings[req.Me]; busy {
		return fmt.Errorf("ipc-child: rank %d's ping-pong is already running", req.Me)
	}
	mine, err := c.ptr(req.Me, bufRef{req.Me, bufSmall}, smallBytes)
	if err != nil {
		return err
	}
	peer, err := c.ptr(req.Me, bufRef{req.Peer, bufSmall}, smallBytes)
	if err != nil {
		return err
	}
	if req.Chunk == 0 || req.Iters%req.Chunk != 0 || int(req.Iters/req.Chunk)+1 > maxTimestamp {
		return fmt.Errorf("ipc-child: ping-pong of %d round trips in chunks of %d", req.Iters, req.Chunk)
	}
	dv := h.dv
	f, err := dv.function(kernels.PingPong)
	if err != nil {
		return err
	}
	// The flag must be 0 before the peer's kernel can store to it: clear it
	// and wait, before this side (and so the peer) starts.
	if err := dv.ctx.MemsetD32Async(mine, 0, smallTimes/4, dv.streams[0]); err != nil {
		return fmt.Errorf("device %d: %w", dv.idx, err)
	}
	if err := dv.ctx.StreamSynchronize(dv.streams[0]); err != nil {
		return fmt.Errorf("device %d: %w", dv.idx, err)
	}
	s, err := dv.stream(1)
	if err != nil {
		return fmt.Errorf("device %d: creating a stream: %w", dv.idx, err)
	}
	args := kernels.PingPongArgs{
		MyFlag: uint64(mine + smallFlag), PeerFlag: uint64(peer + smallFlag),
		Iters: req.Iters, Chunk: req.Chunk, Role: req.Role,
		Times: uint64(mine + smallTimes), TimeoutNs: req.TimeoutNs, Status: uint64(mine + smallStatus),
	}
	if err := dv.ctx.Launch(f, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, s, args.Params()...); err != nil {
		return fmt.Errorf("device %d: launching the ping-pong: %w", dv.idx, err)
	}
	c.pings[req.Me] = req
	return nil
}

// pingPongWait waits for rank's ping-pong kernel and returns its status and,
// for the initiator, its timestamps.
func (c *ipcChild) pingPongWait(rank int) (pingPongReply, error) {
	req, ok := c.pings[rank]
	if !ok {
		return pingPongReply{}, fmt.Errorf("ipc-child: no ping-pong of rank %d to wait for", rank)
	}
	delete(c.pings, rank)
	h := c.hosted[rank]
	dv, mine := h.dv, h.bufs[bufSmall]
	if err := dv.ctx.StreamSynchronize(dv.streams[1]); err != nil {
		return pingPongReply{}, fmt.Errorf("device %d: ping-pong: %w", dv.idx, err)
	}
	st, err := dv.readU32(mine + smallStatus)
	if err != nil {
		return pingPongReply{}, err
	}
	out := pingPongReply{Status: st}
	if st == 1 && req.Role == 0 {
		if out.Times, err = dv.readU64(mine+smallTimes, int(req.Iters/req.Chunk)+1); err != nil {
			return pingPongReply{}, err
		}
	}
	return out, nil
}

// IPCFaultEnv names the environment variable that makes children fail on
// purpose, for the tests of the process machinery only: a comma-separated
// list of rank:request:action, where action is crash (exit at once, status
// 3), hang (stop answering) or stop (SIGSTOP itself). For example
// "1:fill:crash" crashes rank 1's child when it is first asked to fill.
const IPCFaultEnv = "P2PBENCH_IPC_TEST_FAULT"

type ipcFault struct {
	rank   int
	op     string
	action string
}

func parseIPCFaults(s string) ([]ipcFault, error) {
	var out []ipcFault
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		f := strings.Split(part, ":")
		if len(f) != 3 {
			return nil, fmt.Errorf("%s: %q is not rank:request:action", IPCFaultEnv, part)
		}
		rank, err := strconv.Atoi(f[0])
		if err != nil || rank < 0 {
			return nil, fmt.Errorf("%s: %q: bad rank", IPCFaultEnv, part)
		}
		switch f[2] {
		case "crash", "hang", "stop":
		default:
			return nil, fmt.Errorf("%s: %q: the action is crash, hang or stop", IPCFaultEnv, part)
		}
		out = append(out, ipcFault{rank: rank, op: f[1], action: f[2]})
	}
	return out, nil
}

// injectFault carries out the first test fault set for rank and op.
func (c *ipcChild) injectFault(rank int, op string) {
	for i, f := range c.faults {
		if f.rank != rank || f.op != op {
			continue
		}
		c.faults = slices.Delete(c.faults, i, i+1)
		fmt.Fprintf(os.Stderr, "ipc-child rank %d: test fault: %s at %s\n", rank, f.action, op)
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
