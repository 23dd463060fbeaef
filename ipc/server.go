package ipc

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"slices"
	"time"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/measure"
)

// lazyEnablePeerAccess is CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS, the one flag
// cuIpcOpenMemHandle_v2 accepts.
const lazyEnablePeerAccess = 1

// errParentGone is returned by Serve when the parent closed the
// channel without telling the child to exit (it crashed or was killed).
var errParentGone = errors.New("ipc-child: the parent closed the channel")

// ChildConn returns the channel a child of `p2pbench ipc` inherits from
// its parent: its end of a socketpair, as descriptor 3.
func ChildConn() (net.Conn, error) {
	f := os.NewFile(childFD, "ipc")
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

// Serve is the child side of `p2pbench ipc`: it answers the parent's
// requests on conn, driving its device through drv, until the parent says
// exit (it returns nil), the channel closes (errParentGone), or ctx ends.
// The protocol is described in proto.go.
func Serve(ctx context.Context, drv gpu.Driver, conn net.Conn) error {
	fault, err := parseFaults(os.Getenv(FaultEnv))
	if err != nil {
		return err
	}
	c := &server{
		drv: drv, sim: drv.Simulated(), rank: -1, faults: fault,
		hosted: map[int]*hostedRank{}, imports: map[int]*importedRank{},
		pending: map[int]*queuedSample{}, pings: map[int]pingPongReq{},
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	defer conn.Close()
	r := newFrameReader(conn)
	defer r.close()
	for {
		m, err := r.read()
		if err != nil {
			c.abandon()
			switch {
			case ctx.Err() != nil:
				return ctx.Err()
			case errors.Is(err, io.EOF):
				return errParentGone
			}
			return fmt.Errorf("ipc-child: reading from the parent: %w", err)
		}
		body, herr := c.handle(ctx, m)
		// Descriptors received are imported by now (the driver keeps its
		// own reference); those to send are the parent's once sent.
		closeFDs(m.files)
		reply := message{Seq: m.Seq, Op: m.Op, Body: body, files: c.send}
		c.send = nil
		if herr != nil {
			reply.Body = nil
			reply.Err, reply.CUDA = errorFields(herr)
			closeFDs(reply.files)
			reply.files = nil
		}
		err = writeFrame(conn, reply)
		closeFDs(reply.files)
		if err != nil {
			c.abandon()
			return fmt.Errorf("ipc-child: writing to the parent: %w", err)
		}
		if m.Op == opExit && herr == nil {
			return nil
		}
	}
}

// server is the state of one child process.
type server struct {
	drv    gpu.Driver
	sim    bool
	rank   int
	timer  measure.Timer
	faults []fault

	// hosted are the ranks whose work this process issues: its own and, on a
	// simulated driver, stand-ins for its peers.
	hosted map[int]*hostedRank
	// imports are other ranks' buffers and start events as opened here.
	imports map[int]*importedRank
	// pending are the samples queued by arm or follow, by issuing rank.
	pending map[int]*queuedSample
	// pings are the ping-pong kernels launched, by rank.
	pings map[int]pingPongReq
	// handles is how this process shares memory; send are descriptors to
	// pass with the next reply.
	handles Handles
	send    []int
}

// hostedRank is a rank whose memory and streams live in this process.
type hostedRank struct {
	rank    int
	dv      *measure.Device
	peers   *measure.Peers
	bufs    map[string]cuda.DevicePtr
	sizes   map[string]uint64
	start   cuda.Event // interprocess: what followers of this rank's samples wait on
	standIn bool
	// lat runs the latency kernels (ping-pong, chase) on dv's memory in a
	// context of its own, made afresh every round (measure.Device.Twin).
	lat *measure.Device
}

// latency is the device that runs h's latency kernels.
func (h *hostedRank) latency() *measure.Device {
	if h.lat != nil {
		return h.lat
	}
	return h.dv
}

// importedRank is another rank's memory and start event, opened here.
type importedRank struct {
	rank, dev int
	bufs      map[string]cuda.DevicePtr
	sizes     map[string]uint64
	start     cuda.Event
	// handles are the rank's memory handles, for opening again elsewhere;
	// vmm its VMM memory as imported and mapped here.
	handles map[string]cuda.IpcMemHandle
	vmm     map[string]vmmAlloc
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

func (c *server) own() *hostedRank { return c.hosted[c.rank] }

func decodeBody[T any](m message) (T, error) {
	var v T
	if len(m.Body) == 0 {
		return v, fmt.Errorf("ipc-child: %s request without a body", m.Op)
	}
	if err := json.Unmarshal(m.Body, &v); err != nil {
		return v, fmt.Errorf("ipc-child: %s request: %w", m.Op, err)
	}
	return v, nil
}

// handler answers one request: its body decoded, its reply encoded.
type handler func(c *server, ctx context.Context, m message) (json.RawMessage, error)

// answer makes the handler of requests of type Req and replies of type Rep.
func answer[Req, Rep any](fn func(c *server, ctx context.Context, op string, req Req) (Rep, error)) handler {
	return func(c *server, ctx context.Context, m message) (json.RawMessage, error) {
		req, err := decodeBody[Req](m)
		if err != nil {
			return nil, err
		}
		rep, err := fn(c, ctx, m.Op, req)
		if err != nil {
			return nil, err
		}
		return json.Marshal(rep)
	}
}

// none is the body of requests and replies that carry nothing.
type none struct{}

// handlers answer every request after hello, by op.
var handlers = map[string]handler{
	opMap: func(c *server, _ context.Context, m message) (json.RawMessage, error) {
		req, err := decodeBody[mapReq](m)
		if err != nil {
			return nil, err
		}
		return json.Marshal(c.mapPeers(req, m.files))
	},
	opFill:   answer(func(c *server, _ context.Context, op string, req dataReq) (checkReply, error) { return c.data(op, req) }),
	opPoison: answer(func(c *server, _ context.Context, op string, req dataReq) (checkReply, error) { return c.data(op, req) }),
	opCheck:  answer(func(c *server, _ context.Context, op string, req dataReq) (checkReply, error) { return c.data(op, req) }),
	opTime: answer(func(c *server, ctx context.Context, _ string, req timeReq) (timeReply, error) {
		return c.time(ctx, req)
	}),
	opArm: answer(func(c *server, _ context.Context, _ string, req sampleReq) (none, error) {
		return none{}, c.queue(req, true)
	}),
	opFollow: answer(func(c *server, _ context.Context, _ string, req sampleReq) (none, error) {
		return none{}, c.queue(req, false)
	}),
	opRelease: answer(func(c *server, _ context.Context, _ string, req rankReq) (msReply, error) {
		ms, err := c.finish(req.Rank, true)
		return msReply{Ms: ms}, err
	}),
	opCollect: answer(func(c *server, _ context.Context, _ string, req rankReq) (msReply, error) {
		ms, err := c.finish(req.Rank, false)
		return msReply{Ms: ms}, err
	}),
	opChase: answer(func(c *server, _ context.Context, _ string, req chaseReq) (samplesReply, error) {
		s, err := c.chase(req)
		return samplesReply{Samples: s}, err
	}),
	opPingPong: answer(func(c *server, _ context.Context, _ string, req pingPongReq) (none, error) {
		return none{}, c.pingPong(req)
	}),
	opPingPongWait: answer(func(c *server, _ context.Context, _ string, req rankReq) (pingPongReply, error) {
		return c.pingPongWait(req.Rank)
	}),
	opRenew: answer(func(c *server, _ context.Context, _ string, req renewReq) (none, error) {
		return none{}, c.renew(req)
	}),
	opUnmap: answer(func(c *server, _ context.Context, _ string, req unmapReq) (unmapReply, error) {
		n, err := c.unmap(req.Ranks)
		return unmapReply{Closed: n}, err
	}),
	opExit: answer(func(c *server, _ context.Context, _ string, _ none) (none, error) { return none{}, c.exit() }),
}

// handle runs one request and returns its reply body.
func (c *server) handle(ctx context.Context, m message) (json.RawMessage, error) {
	if m.Op == opHello {
		req, err := decodeBody[helloReq](m)
		if err != nil {
			return nil, err
		}
		c.injectFault(req.Rank, m.Op)
		rep, err := c.hello(req)
		if err != nil {
			return nil, err
		}
		return json.Marshal(rep)
	}
	c.injectFault(c.rank, m.Op)
	if c.own() == nil {
		return nil, fmt.Errorf("ipc-child: %s before hello", m.Op)
	}
	h, ok := handlers[m.Op]
	if !ok {
		return nil, fmt.Errorf("ipc-child: unknown request %q", m.Op)
	}
	return h(c, ctx, m)
}

// hello opens the device, allocates and exports the buffers and the start
// event.
func (c *server) hello(req helloReq) (helloReply, error) {
	if c.own() != nil {
		return helloReply{}, errors.New("ipc-child: a second hello")
	}
	c.rank = req.Rank
	c.timer = measure.Timer{LatchTimeout: time.Duration(req.LatchTimeoutNs)}
	c.handles = cmp.Or(req.Handles, HandlesLegacy)
	if !c.handles.valid() {
		return helloReply{}, fmt.Errorf("ipc-child: unknown handles %q", c.handles)
	}
	info, err := c.drv.DeviceInfo(req.Device)
	if err != nil {
		return helloReply{}, fmt.Errorf("device %d: %w", req.Device, err)
	}
	if !info.UnifiedAddressing {
		return helloReply{}, fmt.Errorf("device %d: CUDA IPC needs unified addressing, which this device does not have", req.Device)
	}
	if err := c.handles.checkDevice(info); err != nil {
		return helloReply{}, err
	}
	if t, ok := c.handles.vmm(); ok {
		c.drv = newVMMDriver(c.drv, t)
	}
	h, err := c.host(req.Rank, req.Device, req.Buffers)
	if err != nil {
		return helloReply{}, err
	}
	c.hosted[req.Rank] = h
	exports, fds, ev, err := h.export(c.handles)
	if err != nil {
		return helloReply{}, err
	}
	c.send = fds
	return helloReply{Pid: os.Getpid(), Device: req.Device, Name: info.Name, Simulated: c.sim, Exports: exports, Event: ev}, nil
}

// host opens dev for rank and allocates the buffers it exports.
func (c *server) host(rank, dev int, sizes map[string]uint64) (*hostedRank, error) {
	if sizes[bufSend] != sizes[bufRecv] {
		return nil, fmt.Errorf("ipc-child: send and receive buffers of %d and %d bytes", sizes[bufSend], sizes[bufRecv])
	}
	if n := sizes[bufSmall]; n > measure.SmallBytes {
		return nil, fmt.Errorf("ipc-child: a small buffer of %d bytes (at most %d)", n, measure.SmallBytes)
	}
	dv, err := measure.Open(c.drv, dev, sizes[bufSend])
	if err != nil {
		return nil, err
	}
	h := &hostedRank{rank: rank, dv: dv, peers: measure.NewPeers(), bufs: map[string]cuda.DevicePtr{}, sizes: map[string]uint64{}}
	if err := h.allocate(sizes); err != nil {
		_ = h.release()
		return nil, err
	}
	if sizes[bufSmall] > 0 {
		if h.lat, err = dv.Twin(); err != nil {
			_ = h.release()
			return nil, err
		}
	}
	return h, nil
}

// allocate fills h's table of exported buffers and creates its start event.
func (h *hostedRank) allocate(sizes map[string]uint64) error {
	dv := h.dv
	if dv.BufBytes > 0 {
		h.bufs[bufSend], h.bufs[bufRecv] = dv.Send, dv.Recv
		h.sizes[bufSend], h.sizes[bufRecv] = dv.BufBytes, dv.BufBytes
	}
	if n := sizes[bufScratch]; n > 0 {
		p, err := dv.Scratch(n)
		if err != nil {
			return err
		}
		h.bufs[bufScratch], h.sizes[bufScratch] = p, n
	}
	if sizes[bufSmall] > 0 {
		p, err := dv.Small()
		if err != nil {
			return err
		}
		h.bufs[bufSmall], h.sizes[bufSmall] = p, measure.SmallBytes
	}
	var err error
	if h.start, err = dv.Ctx.EventCreateInterprocess(); err != nil {
		return fmt.Errorf("device %d: creating the interprocess start event: %w", dv.Index, err)
	}
	return nil
}

// export returns the IPC handles of h's buffers (with VMM handles, their
// file descriptors, which the caller closes) and its start event.
func (h *hostedRank) export(handles Handles) ([]export, []int, cuda.IpcEventHandle, error) {
	var out []export
	var fds []int
	var ev cuda.IpcEventHandle
	for _, n := range slices.Sorted(maps.Keys(h.bufs)) {
		x := export{Name: n, Bytes: h.sizes[n]}
		var err error
		if _, ok := handles.vmm(); ok {
			var fd int
			if fd, err = h.exportVMM(&x); err == nil && fd >= 0 {
				fds = append(fds, fd)
			}
		} else {
			x.Handle, err = h.dv.Ctx.IpcGetMemHandle(h.bufs[n])
		}
		if err != nil {
			closeFDs(fds)
			return nil, nil, ev, fmt.Errorf("device %d: exporting the %s buffer: %w", h.dv.Index, n, err)
		}
		out = append(out, x)
	}
	ev, err := h.dv.Ctx.IpcGetEventHandle(h.start)
	if err != nil {
		closeFDs(fds)
		return nil, nil, ev, fmt.Errorf("device %d: exporting the start event: %w", h.dv.Index, err)
	}
	return out, fds, ev, nil
}

// release frees what h holds. For the child's own rank it is called only
// once every importer has closed its mappings (the parent's exit).
func (h *hostedRank) release() error {
	var errs []error
	if h.lat != nil {
		errs = append(errs, h.lat.Close())
		h.lat = nil
	}
	if h.start != 0 {
		if err := h.dv.Ctx.EventDestroy(h.start); err != nil {
			errs = append(errs, fmt.Errorf("device %d: destroying the start event: %w", h.dv.Index, err))
		}
		h.start = 0
	}
	errs = append(errs, h.peers.ReleaseAll()...)
	errs = append(errs, h.dv.Close())
	return errors.Join(errs...)
}

// mapPeers imports every listed peer; each gets its own result. With VMM
// handles, fds are the descriptors of the peers' exports, in order.
func (c *server) mapPeers(req mapReq, fds []int) mapReply {
	var out mapReply
	perPeer, ferr := c.handles.descriptorsByPeer(req.Peers, fds)
	for i, p := range req.Peers {
		res := mapResult{Rank: p.Rank, Mode: c.handles.mode()}
		err := ferr
		if err == nil {
			err = c.mapPeer(p, perPeer[i], &res)
		}
		if err != nil {
			res.Err, res.CUDA = errorFields(err)
		}
		out.Results = append(out.Results, res)
	}
	return out
}

func (c *server) mapPeer(p peerHandles, fds []int, res *mapResult) error {
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
		if exports, fds, event, err = st.export(c.handles); err != nil {
			_ = st.release()
			return err
		}
		defer closeFDs(fds)
		c.hosted[p.Rank] = st
	}
	imp, reopened, err := c.importRank(p, exports, fds, event)
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
func (c *server) standIn(p peerHandles) (*hostedRank, error) {
	sizes := map[string]uint64{}
	for _, x := range p.Exports {
		sizes[x.Name] = x.Bytes
	}
	st, err := c.host(p.Rank, p.Device, sizes)
	if err != nil {
		return nil, fmt.Errorf("hosting a simulated stand-in of rank %d: %w", p.Rank, err)
	}
	st.standIn = true
	if own := c.own(); p.Device != own.dv.Index {
		// The stand-in's own work (a push into this rank's memory) reaches
		// this rank's device directly, with peer access; this rank reaches
		// the stand-in through its IPC mapping.
		if err := st.peers.Enable(st.dv.Ctx, own.dv.Ctx); err != nil {
			_ = st.release()
			return nil, err
		}
		if _, ok := c.handles.vmm(); ok {
			if err := own.grantVMM(p.Device); err != nil {
				_ = st.release()
				return nil, err
			}
		}
	}
	return st, nil
}

// importRank opens a peer's buffers and start event in this process's
// context. Each legacy memory handle is opened twice to check the
// documented reference counting (the second open maps nothing new and
// returns the same pointer); the second reference is closed at once, the
// first at unmap. VMM memory is imported from fds, one per export.
func (c *server) importRank(p peerHandles, exports []export, fds []int, event cuda.IpcEventHandle) (*importedRank, int, error) {
	ctx := c.own().dv.Ctx
	imp := &importedRank{rank: p.Rank, dev: p.Device, bufs: map[string]cuda.DevicePtr{}, sizes: map[string]uint64{},
		handles: map[string]cuda.IpcMemHandle{}, vmm: map[string]vmmAlloc{}, onPeer: map[string]cuda.DevicePtr{}}
	fail := func(err error) (*importedRank, int, error) {
		_, _ = imp.close(ctx)
		return nil, 0, err
	}
	reopened := 0
	for i, x := range exports {
		if _, ok := c.handles.vmm(); ok {
			fd := -1
			if i < len(fds) {
				fd = fds[i]
			}
			if err := imp.importVMM(ctx, x, fd); err != nil {
				return fail(fmt.Errorf("importing rank %d's %s buffer (device %d): %w", p.Rank, x.Name, p.Device, err))
			}
			continue
		}
		ptr, err := ctx.IpcOpenMemHandle(x.Handle, lazyEnablePeerAccess)
		if err != nil {
			return fail(fmt.Errorf("opening rank %d's %s buffer (device %d): %w", p.Rank, x.Name, p.Device, err))
		}
		imp.bufs[x.Name], imp.sizes[x.Name], imp.handles[x.Name] = ptr, x.Bytes, x.Handle
		again, err := ctx.IpcOpenMemHandle(x.Handle, lazyEnablePeerAccess)
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
	if c.handles == HandlesFabric {
		return imp, reopened, nil // an IPC event does not cross nodes
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
		if err := imp.closeBuffer(ctx, name, p); err != nil {
			errs = append(errs, fmt.Errorf("closing rank %d's %s buffer: %w", imp.rank, name, err))
		} else {
			n++
		}
		delete(imp.bufs, name)
	}
	for name, p := range imp.onPeer {
		if _, ok := imp.vmm[name]; ok {
			delete(imp.onPeer, name) // VMM memory is mapped once, for both devices
			continue
		}
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
func (c *server) unmap(ranks []int) (int, error) {
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
	ctx := c.own().dv.Ctx
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
func (c *server) exit() error {
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
func (c *server) abandon() {
	for _, h := range c.hosted {
		h.dv.Release()
	}
}

// issuer returns the hosted rank that issues work for rank.
func (c *server) issuer(rank int) (*hostedRank, error) {
	if h := c.hosted[rank]; h != nil {
		return h, nil
	}
	return nil, fmt.Errorf("ipc-child: rank %d's work is not issued by rank %d's process", rank, c.rank)
}

// ptr resolves a buffer as issuer reaches it: the rank's own memory when the
// issuer is that rank (or, simulated, any rank hosted in this process reaching
// another), else this process's IPC mapping of it.
func (c *server) ptr(issuer int, ref bufRef, bytes uint64) (cuda.DevicePtr, error) {
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
func (c *server) startEvent(follower, leader int) (cuda.Event, error) {
	if h := c.hosted[leader]; h != nil && follower != c.rank {
		return h.start, nil
	}
	if imp := c.imports[leader]; imp != nil && follower == c.rank {
		return imp.start, nil
	}
	return 0, fmt.Errorf("ipc-child: rank %d has not opened rank %d's start event", follower, leader)
}
