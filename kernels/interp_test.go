package kernels

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A small interpreter for the PTX of the copy entries, so that what the
// kernels do (not a Go model of it) is checked without a GPU: every thread
// runs its instructions one after another (the copy kernels never
// synchronise threads), global memory is one byte slice, and the sm_90
// bulk path's asynchronous copies are deferred and completed out of order:
// a load lands only when a try_wait on some barrier would otherwise fail,
// a store group reads shared memory only when a wait_group makes it. A
// stage stored before its load landed, or refilled while a store still
// reads it, is an error, whatever the bytes: that is what a mistake in the
// barriers' phase tracking would do on the GPU, where the bytes would often
// be right by luck.

type ptxInstr struct {
	guard   string // predicate register, "" for none
	negate  bool
	op      string
	args    []string
	srcLine string
}

type ptxProgram struct {
	name   string
	params map[string]int // parameter name → index
	code   []ptxInstr
	labels map[string]int
}

var (
	labelPrefix = regexp.MustCompile(`^\s*([A-Za-z_$][A-Za-z0-9_$]*):`)
	guardPrefix = regexp.MustCompile(`^@(!?)%([A-Za-z0-9_$]+)\s+`)
)

// compileEntry turns an entry's body into instructions.
func compileEntry(e Entry) (*ptxProgram, error) {
	p := &ptxProgram{name: e.Name, params: map[string]int{}, labels: map[string]int{}}
	for i, par := range e.Params {
		p.params[par.Name] = i
	}
	for _, stmt := range strings.Split(e.Body, ";") {
		for {
			m := labelPrefix.FindStringSubmatch(stmt)
			if m == nil {
				break
			}
			p.labels[m[1]] = len(p.code)
			stmt = stmt[len(m[0]):]
		}
		stmt = strings.TrimSpace(stmt)
		if stmt == "" || strings.HasPrefix(stmt, ".reg") {
			continue
		}
		in := ptxInstr{srcLine: stmt}
		if m := guardPrefix.FindStringSubmatch(stmt); m != nil {
			in.negate, in.guard = m[1] == "!", m[2]
			stmt = stmt[len(m[0]):]
		}
		op, rest, _ := strings.Cut(stmt, " ")
		in.op = op
		in.args = splitOperands(rest)
		p.code = append(p.code, in)
	}
	return p, nil
}

// splitOperands splits at the commas outside braces and brackets.
func splitOperands(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, t)
	}
	return out
}

// Shared memory as the bulk path lays it out: the barriers (static) at 0,
// the stages (dynamic) from 128.
const (
	sharedBars   = 0
	sharedStages = 128
)

type barrier struct {
	count, pending int
	tx             int64
	phase          uint64
}

type bulkLoad struct {
	smem, gaddr, size, bar uint64
}

type bulkStore struct {
	gaddr, smem, size uint64
}

// gpuState is the memory of one launch and what it counted.
type gpuState struct {
	base          uint64
	mem           []byte
	dstLo, dstHi  uint64 // the destination range: stores there are counted
	storedToDst   uint64
	loadedFromSrc uint64
	srcLo, srcHi  uint64
}

func (g *gpuState) span(addr, n uint64, align uint64) ([]byte, error) {
	if addr%align != 0 {
		return nil, fmt.Errorf("misaligned access of %d bytes at %#x", n, addr)
	}
	if addr < g.base || addr+n > g.base+uint64(len(g.mem)) {
		return nil, fmt.Errorf("access of %d bytes at %#x outside global memory", n, addr)
	}
	return g.mem[addr-g.base : addr-g.base+n], nil
}

func (g *gpuState) count(addr, n uint64, store bool) {
	lo, hi, c := g.srcLo, g.srcHi, &g.loadedFromSrc
	if store {
		lo, hi, c = g.dstLo, g.dstHi, &g.storedToDst
	}
	a, b := max(addr, lo), min(addr+n, hi)
	if b > a {
		*c += b - a
	}
}

// thread is one thread's run, with its block's shared memory and its
// asynchronous copies (only thread 0 of a bulk block issues any).
type thread struct {
	prog      *ptxProgram
	g         *gpuState
	params    []uint64
	special   map[string]uint64
	regs      map[string]uint64
	preds     map[string]bool
	shared    []byte
	bars      map[uint64]*barrier
	loads     []bulkLoad
	open      []bulkStore   // stores not yet committed to a group
	groups    [][]bulkStore // committed groups, oldest first
	rng       *rand.Rand
	completed int // loads landed
}

func (t *thread) fail(in ptxInstr, format string, args ...any) error {
	return fmt.Errorf("%s: %q: %s", t.prog.name, in.srcLine, fmt.Sprintf(format, args...))
}

func width(op string) uint64 {
	if strings.HasSuffix(op, "32") {
		return 0xffffffff
	}
	return ^uint64(0)
}

func (t *thread) val(s string) (uint64, error) {
	switch {
	case strings.HasPrefix(s, "%"):
		name := s[1:]
		if v, ok := t.special[name]; ok {
			return v, nil
		}
		v, ok := t.regs[name]
		if !ok {
			return 0, fmt.Errorf("register %s read before it is written", s)
		}
		return v, nil
	case s == "p2p_bulk_stage":
		return sharedStages, nil
	case s == "p2p_bulk_full":
		return sharedBars, nil
	}
	v, err := strconv.ParseInt(s, 0, 64)
	return uint64(v), err
}

// addr evaluates "[%r]", "[%r+imm]" or "[param]".
func (t *thread) addr(s string) (uint64, error) {
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return 0, fmt.Errorf("not an address: %s", s)
	}
	inner := s[1 : len(s)-1]
	if i, ok := t.prog.params[inner]; ok {
		return t.params[i], nil
	}
	reg, off, hasOff := strings.Cut(inner, "+")
	v, err := t.val(reg)
	if err != nil || !hasOff {
		return v, err
	}
	o, err := strconv.ParseInt(off, 0, 64)
	return v + uint64(o), err
}

func (t *thread) sharedSpan(addr, n uint64) ([]byte, error) {
	if addr+n > uint64(len(t.shared)) {
		return nil, fmt.Errorf("shared access of %d bytes at %#x outside %d bytes", n, addr, len(t.shared))
	}
	return t.shared[addr : addr+n], nil
}

func overlaps(a, an, b, bn uint64) bool { return a < b+bn && b < a+an }

// land completes load i: its bytes reach shared memory and its barrier.
func (t *thread) land(i int) error {
	l := t.loads[i]
	t.loads = append(t.loads[:i], t.loads[i+1:]...)
	src, err := t.g.span(l.gaddr, l.size, 16)
	if err != nil {
		return err
	}
	t.g.count(l.gaddr, l.size, false)
	dst, err := t.sharedSpan(l.smem, l.size)
	if err != nil {
		return err
	}
	copy(dst, src)
	t.completed++
	b := t.bars[l.bar]
	b.tx -= int64(l.size)
	t.settle(b)
	return nil
}

// settle completes the barrier's phase when every arrival and byte is in.
func (t *thread) settle(b *barrier) {
	if b.pending == 0 && b.tx == 0 {
		b.phase++
		b.pending = b.count
	}
}

// drainGroups completes the oldest committed store groups until at most n
// are left: their bytes leave shared memory for global memory now.
func (t *thread) drainGroups(n int) error {
	for len(t.groups) > n {
		for _, s := range t.groups[0] {
			src, err := t.sharedSpan(s.smem, s.size)
			if err != nil {
				return err
			}
			dst, err := t.g.span(s.gaddr, s.size, 16)
			if err != nil {
				return err
			}
			copy(dst, src)
			t.g.count(s.gaddr, s.size, true)
		}
		t.groups = t.groups[1:]
	}
	return nil
}

func (t *thread) storesReading(smem, n uint64) bool {
	for _, g := range append(t.groups, t.open) {
		for _, s := range g {
			if overlaps(s.smem, s.size, smem, n) {
				return true
			}
		}
	}
	return false
}

// run executes the thread to its ret, at most maxSteps instructions.
func (t *thread) run(maxSteps int) error {
	pc := 0
	for steps := 0; ; steps++ {
		if steps > maxSteps {
			return fmt.Errorf("%s: more than %d instructions: a loop that does not end?", t.prog.name, maxSteps)
		}
		if pc >= len(t.prog.code) {
			return fmt.Errorf("%s: ran off the end", t.prog.name)
		}
		in := t.prog.code[pc]
		pc++
		if in.guard != "" {
			p, ok := t.preds[in.guard]
			if !ok {
				return t.fail(in, "predicate read before it is set")
			}
			if p == in.negate {
				continue
			}
		}
		next, done, err := t.exec(in)
		if err != nil {
			return t.fail(in, "%v", err)
		}
		if done {
			if len(t.loads) > 0 || len(t.groups) > 0 || len(t.open) > 0 {
				return t.fail(in, "the thread ends with %d loads, %d store groups and %d uncommitted stores in flight", len(t.loads), len(t.groups), len(t.open))
			}
			return nil
		}
		if next != "" {
			target, ok := t.prog.labels[next]
			if !ok {
				return t.fail(in, "no label %s", next)
			}
			pc = target
		}
	}
}

// exec runs one instruction; it returns a branch target or the thread's end.
func (t *thread) exec(in ptxInstr) (branch string, done bool, err error) {
	op, a := in.op, in.args
	m := width(op)
	set := func(v uint64) { t.regs[strings.TrimPrefix(a[0], "%")] = v & m }
	vals := func(args ...string) ([]uint64, error) {
		out := make([]uint64, len(args))
		for i, s := range args {
			v, err := t.val(s)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	switch {
	case op == "ret":
		return "", true, nil
	case op == "bra" || op == "bra.uni":
		return a[0], false, nil
	case strings.HasPrefix(op, "ld.param."):
		v, err := t.addr(a[1])
		set(v)
		return "", false, err
	case op == "cvta.to.global.u64", strings.HasPrefix(op, "mov."), op == "cvt.u64.u32", op == "cvt.u32.u64":
		v, err := t.val(a[1])
		if op == "cvt.u64.u32" {
			v &= 0xffffffff
		}
		set(v)
		return "", false, err
	case op == "mul.wide.u32":
		v, err := vals(a[1], a[2])
		t.regs[strings.TrimPrefix(a[0], "%")] = (v[0] & 0xffffffff) * (v[1] & 0xffffffff)
		return "", false, err
	case strings.HasPrefix(op, "add."), strings.HasPrefix(op, "sub."), strings.HasPrefix(op, "and."),
		strings.HasPrefix(op, "xor."), strings.HasPrefix(op, "shl."), strings.HasPrefix(op, "shr."),
		strings.HasPrefix(op, "mul.lo."):
		v, err := vals(a[1], a[2])
		if err != nil {
			return "", false, err
		}
		x, y := v[0]&m, v[1]&m
		switch op[:3] {
		case "add":
			set(x + y)
		case "sub":
			set(x - y)
		case "and":
			set(x & y)
		case "xor":
			set(x ^ y)
		case "shl":
			set(x << y)
		case "shr":
			set(x >> y)
		case "mul":
			set(x * y)
		}
		return "", false, nil
	case op == "mad.lo.u32":
		v, err := vals(a[1], a[2], a[3])
		set(v[0]*v[1] + v[2])
		return "", false, err
	case strings.HasPrefix(op, "setp."):
		v, err := vals(a[1], a[2])
		if err != nil {
			return "", false, err
		}
		x, y := v[0]&m, v[1]&m
		var r bool
		switch strings.Split(op, ".")[1] {
		case "ge":
			r = x >= y
		case "lt":
			r = x < y
		case "eq":
			r = x == y
		case "ne":
			r = x != y
		default:
			return "", false, fmt.Errorf("comparison %s", op)
		}
		t.preds[strings.TrimPrefix(a[0], "%")] = r
		return "", false, nil
	case strings.HasPrefix(op, "ld.global.") && strings.HasSuffix(op, ".v4.u32"):
		addr, err := t.addr(a[1])
		if err != nil {
			return "", false, err
		}
		b, err := t.g.span(addr, 16, 16)
		if err != nil {
			return "", false, err
		}
		t.g.count(addr, 16, false)
		regs := splitOperands(strings.Trim(a[0], "{}"))
		for k, r := range regs {
			t.regs[strings.TrimPrefix(r, "%")] = uint64(binary.LittleEndian.Uint32(b[4*k:]))
		}
		return "", false, nil
	case strings.HasPrefix(op, "st.global.") && strings.HasSuffix(op, ".v4.u32"):
		addr, err := t.addr(a[0])
		if err != nil {
			return "", false, err
		}
		b, err := t.g.span(addr, 16, 16)
		if err != nil {
			return "", false, err
		}
		v, err := vals(splitOperands(strings.Trim(a[1], "{}"))...)
		if err != nil {
			return "", false, err
		}
		for k, x := range v {
			binary.LittleEndian.PutUint32(b[4*k:], uint32(x))
		}
		t.g.count(addr, 16, true)
		return "", false, nil
	case op == "ld.global.u32":
		addr, err := t.addr(a[1])
		if err != nil {
			return "", false, err
		}
		b, err := t.g.span(addr, 4, 4)
		if err != nil {
			return "", false, err
		}
		t.g.count(addr, 4, false)
		set(uint64(binary.LittleEndian.Uint32(b)))
		return "", false, nil
	case op == "st.global.u32":
		addr, err := t.addr(a[0])
		if err != nil {
			return "", false, err
		}
		b, err := t.g.span(addr, 4, 4)
		if err != nil {
			return "", false, err
		}
		v, err := t.val(a[1])
		binary.LittleEndian.PutUint32(b, uint32(v))
		t.g.count(addr, 4, true)
		return "", false, err
	}
	return "", false, t.execBulk(in)
}

// execBulk runs the sm_90 barrier and bulk-copy instructions.
func (t *thread) execBulk(in ptxInstr) error {
	op, a := in.op, in.args
	switch op {
	case "fence.mbarrier_init.release.cluster":
		return nil
	case "mbarrier.init.shared::cta.b64":
		bar, err := t.addr(a[0])
		if err != nil {
			return err
		}
		n, err := t.val(a[1])
		t.bars[bar] = &barrier{count: int(n), pending: int(n)}
		return err
	case "mbarrier.arrive.expect_tx.shared::cta.b64":
		bar, err := t.addr(a[1])
		if err != nil {
			return err
		}
		size, err := t.val(a[2])
		if err != nil {
			return err
		}
		b := t.bars[bar]
		if b == nil {
			return fmt.Errorf("barrier at %#x not initialised", bar)
		}
		if b.pending == 0 {
			return fmt.Errorf("arrival on barrier %#x beyond its count", bar)
		}
		b.tx += int64(size)
		b.pending--
		t.settle(b)
		t.regs[strings.TrimPrefix(a[0], "%")] = b.phase
		return nil
	case "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes":
		v := make([]uint64, 4)
		var err error
		for i, s := range []string{a[0], a[1], a[3]} {
			if v[[]int{0, 1, 3}[i]], err = t.addr(s); err != nil {
				return err
			}
		}
		if v[2], err = t.val(a[2]); err != nil {
			return err
		}
		l := bulkLoad{smem: v[0], gaddr: v[1], size: v[2], bar: v[3]}
		if l.size == 0 || l.size%16 != 0 || l.smem%16 != 0 {
			return fmt.Errorf("bulk load of %d bytes to shared %#x", l.size, l.smem)
		}
		if t.bars[l.bar] == nil {
			return fmt.Errorf("bulk load completes on barrier %#x, not initialised", l.bar)
		}
		if t.storesReading(l.smem, l.size) {
			return fmt.Errorf("refills shared %#x while a bulk store still reads it", l.smem)
		}
		for _, p := range t.loads {
			if overlaps(p.smem, p.size, l.smem, l.size) {
				return fmt.Errorf("refills shared %#x while an earlier load into it is in flight", l.smem)
			}
		}
		t.loads = append(t.loads, l)
		return nil
	case "mbarrier.try_wait.parity.shared::cta.b64":
		bar, err := t.addr(a[1])
		if err != nil {
			return err
		}
		parity, err := t.val(a[2])
		if err != nil {
			return err
		}
		b := t.bars[bar]
		if b == nil {
			return fmt.Errorf("waiting on barrier %#x, not initialised", bar)
		}
		ready := b.phase%2 != parity%2
		t.preds[strings.TrimPrefix(a[0], "%")] = ready
		if !ready {
			// Something lands while this thread waits: any load in
			// flight, not necessarily the one waited for.
			if len(t.loads) == 0 {
				return fmt.Errorf("waits on barrier %#x (parity %d) with no load in flight: it waits forever", bar, parity)
			}
			return t.land(t.rng.IntN(len(t.loads)))
		}
		return nil
	case "cp.async.bulk.global.shared::cta.bulk_group":
		gaddr, err := t.addr(a[0])
		if err != nil {
			return err
		}
		smem, err := t.addr(a[1])
		if err != nil {
			return err
		}
		size, err := t.val(a[2])
		if err != nil {
			return err
		}
		for _, p := range t.loads {
			if overlaps(p.smem, p.size, smem, size) {
				return fmt.Errorf("stores shared %#x before the load into it landed", smem)
			}
		}
		t.open = append(t.open, bulkStore{gaddr: gaddr, smem: smem, size: size})
		return nil
	case "cp.async.bulk.commit_group":
		if len(t.open) > 0 {
			t.groups = append(t.groups, t.open)
			t.open = nil
		}
		return nil
	case "cp.async.bulk.wait_group.read", "cp.async.bulk.wait_group":
		n, err := t.val(a[0])
		if err != nil {
			return err
		}
		return t.drainGroups(int(n))
	}
	return fmt.Errorf("the interpreter does not know %s", op)
}

// launchCopy interprets one launch of copy entry e over a fresh memory:
// src holds a pattern, dst junk, and a guard follows dst. It returns the
// memory and the bytes the launch stored to dst and loaded from src.
func launchCopy(t *testing.T, prog *ptxProgram, grid, block int, bytes uint64, reps uint32, seed uint64) (*gpuState, error) {
	t.Helper()
	const base, guard = 1 << 20, 64
	span := (bytes + 15) &^ 15
	g := &gpuState{base: base, mem: make([]byte, 2*span+2*guard+32)}
	g.srcLo, g.srcHi = base, base+bytes
	g.dstLo = base + span + guard
	g.dstHi = g.dstLo + bytes
	for i := range g.mem {
		g.mem[i] = byte(0xA5 ^ i)
	}
	for i := uint64(0); i < bytes/4; i++ {
		binary.LittleEndian.PutUint32(g.mem[i*4:], Pattern(uint32(seed), i))
	}
	params := CopyArgs{Dst: g.dstLo, Src: g.srcLo, Bytes: bytes, Reps: reps}.Params()
	vals := make([]uint64, len(params))
	for i, p := range params {
		switch v := p.(type) {
		case uint64:
			vals[i] = v
		case uint32:
			vals[i] = uint64(v)
		}
	}
	for b := 0; b < grid; b++ {
		shared := make([]byte, sharedStages+bulkChunk*bulkStages)
		for th := 0; th < block; th++ {
			tr := &thread{
				prog: prog, g: g, params: vals, shared: shared, bars: map[uint64]*barrier{},
				special: map[string]uint64{"tid.x": uint64(th), "ntid.x": uint64(block), "ctaid.x": uint64(b), "nctaid.x": uint64(grid)},
				regs:    map[string]uint64{}, preds: map[string]bool{},
				rng: rand.New(rand.NewPCG(seed, uint64(b))),
			}
			if err := tr.run(1 << 24); err != nil {
				return nil, fmt.Errorf("block %d thread %d: %w", b, th, err)
			}
		}
	}
	return g, nil
}

// copyPrograms compiles every copy entry.
func copyPrograms(t *testing.T) map[string]*ptxProgram {
	t.Helper()
	out := map[string]*ptxProgram{}
	for _, k := range CopyKernels {
		text, err := PTX(k.Module)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ParsePTX(text)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range m.Entries {
			if e.Name == k.Entry {
				if out[k.Variant], err = compileEntry(e); err != nil {
					t.Fatal(err)
				}
			}
		}
		if out[k.Variant] == nil {
			t.Fatalf("%s: no entry %s", k.Variant, k.Entry)
		}
	}
	return out
}

// checkCopy says what is wrong with a launch's outcome: dst must hold src's
// bytes, the guard after it its junk, and the launch must have stored (and
// loaded) every byte once per repetition.
func checkCopy(g *gpuState, bytes uint64, reps uint32) error {
	src := g.mem[g.srcLo-g.base : g.srcHi-g.base]
	dst := g.mem[g.dstLo-g.base : g.dstHi-g.base]
	if reps > 0 {
		for i := range dst {
			if dst[i] != src[i] {
				return fmt.Errorf("dst byte %d is %#x, src %#x", i, dst[i], src[i])
			}
		}
	} else {
		for i := range dst {
			if want := byte(0xA5 ^ int(g.dstLo-g.base+uint64(i))); dst[i] != want {
				return fmt.Errorf("0 repetitions wrote dst byte %d", i)
			}
		}
	}
	for i := g.dstHi - g.base; i < uint64(len(g.mem)); i++ {
		if g.mem[i] != byte(0xA5^int(i)) {
			return fmt.Errorf("byte %d past dst's end was written", i-(g.dstHi-g.base))
		}
	}
	want := uint64(reps) * bytes
	if g.storedToDst != want || g.loadedFromSrc != want {
		return fmt.Errorf("stored %d and loaded %d bytes, want %d (%d repetitions of %d)", g.storedToDst, g.loadedFromSrc, want, reps, bytes)
	}
	return nil
}

// TestCopyKernelsInterpreted runs every copy entry's PTX, through the
// interpreter above, over sizes with every bytes % 16 tail, several grids
// and 0 to 3 repetitions: each copies its range exactly, touches nothing
// past it, and stores every byte once per repetition (0: none). The bulk
// path runs with 1 to 9 chunks per block and repetition, so repetitions
// start on every stage and both parities, with its loads landing in random
// order.
func TestCopyKernelsInterpreted(t *testing.T) {
	progs := copyPrograms(t)
	type shape struct {
		grid, block int
		bytes       uint64
	}
	var register []shape
	for _, bytes := range []uint64{4, 12, 16, 20, 4096 + 12, 3*4096 + 16*37 + 8} {
		register = append(register, shape{1, 32, bytes}, shape{3, 64, bytes})
	}
	register = append(register, shape{2, 40, 9*4096 + 4}) // a group of 32 split across blocks
	var bulk []shape
	for _, bytes := range []uint64{4, 12, 48, 1000 * 16, 32768} {
		bulk = append(bulk, shape{2, 32, bytes})
	}
	for m := uint64(1); m <= 9; m++ {
		bulk = append(bulk,
			shape{1, 1, m*bulkChunk - 16*3 + 8}, // the last chunk short, a tail of 8
			shape{3, 2, 3*(m-1)*bulkChunk + bulkChunk + 4})
	}
	bulk = append(bulk, shape{4, 32, bulkChunk + 48}) // blocks 2 and 3 have no chunk
	for _, k := range CopyKernels {
		shapes := register
		if k.CacheHint == "bulk" {
			shapes = bulk
		}
		for _, sh := range shapes {
			for reps := uint32(0); reps <= 3; reps++ {
				g, err := launchCopy(t, progs[k.Variant], sh.grid, sh.block, sh.bytes, reps, uint64(sh.bytes)+uint64(reps))
				if err == nil {
					err = checkCopy(g, sh.bytes, reps)
				}
				if err != nil {
					t.Errorf("%s, %d bytes, grid %d × %d, %d repetitions: %v", k.Variant, sh.bytes, sh.grid, sh.block, reps, err)
				}
			}
		}
	}
}

// TestInterpreterCatchesParityMistakes: the interpreter is worth its checks
// only if it fails a bulk kernel that tracks its barriers' phases wrongly.
// Resetting the parity (and stage) at each repetition's start, the natural
// mistake, waits on a phase that completed a round of stages ago: with 5
// chunks per block it stores a stage whose load has not landed.
func TestInterpreterCatchesParityMistakes(t *testing.T) {
	text, _ := PTX("copy_bulk")
	m, err := ParsePTX(text)
	if err != nil {
		t.Fatal(err)
	}
	e := m.Entries[0]
	prog, err := compileEntry(e)
	if err != nil {
		t.Fatal(err)
	}
	// The broken variant: when the store offset wraps to the next
	// repetition, the stage and the parity go back to 0.
	const wrap = "@%p_wrap mov.u64 %store_off, %first;"
	if strings.Count(e.Body, wrap) != 1 {
		t.Fatalf("copy_bulk.ptx has %d of %q, want 1", strings.Count(e.Body, wrap), wrap)
	}
	e.Body = strings.Replace(e.Body, wrap, wrap+" @%p_wrap mov.u32 %stage, 0; @%p_wrap mov.u32 %parity, 0;", 1)
	e.Name += " (parity reset)"
	bad, err := compileEntry(e)
	if err != nil {
		t.Fatal(err)
	}
	const bytes = 5 * bulkChunk
	if g, err := launchCopy(t, prog, 1, 1, bytes, 3, 1); err != nil || checkCopy(g, bytes, 3) != nil {
		t.Fatalf("the real kernel failed: %v", err)
	}
	if _, err := launchCopy(t, bad, 1, 1, bytes, 3, 1); err == nil {
		t.Error("a bulk kernel that resets its parity at each repetition passed the interpreter")
	} else {
		t.Logf("the broken kernel: %v", err)
	}
}
