#!/usr/bin/env python3
"""GPU self-test of p2pbench's PTX kernels, for a machine with CUDA but no Go.

It loads every kernels/*.ptx through the driver exactly as p2pbench does
(cuModuleLoadDataEx, JIT log on failure), runs every entry point, checks the
results exactly (the same rules as kernels.go: Pattern, ChasePerm, the atomic
final values), and times the copies, atomics and latencies. With two GPUs that
can reach each other it also runs the peer tests (pull, push, both ways,
remote atomics, remote chase, ping-pong).

Only the Python standard library and libcuda.so.1 (through ctypes) are used.

    python3 tools/kernel-selftest/selftest.py            # everything
    python3 tools/kernel-selftest/selftest.py --quick    # correctness only, no sweeps
    python3 tools/kernel-selftest/selftest.py --no-gpu   # the Python ports vs golden.json
    python3 tools/kernel-selftest/selftest.py --bandwidth-only --rounds 3 \
        --variants warp_u8,bulk --configs 1x512,2x32   # timings only
    python3 tools/kernel-selftest/selftest.py --extra DIR   # also experimental copy modules

The bandwidth sweeps copy --mib MiB (default 2048: at 512 MiB the fixed cost of
a launch, about 16 us, is still ~1% of the time) and report, per variant, the
median of --reps timed launches for each grid shape and the best shape. With
--in-kernel N each timed launch repeats its copy N times (the copy kernels'
reps parameter, as p2pbench times SM copies of 64 MiB and more): the launch's
fixed cost is then paid once for N copies.

Exit status: 0 when every check passed, 1 otherwise. Timings are printed, and
written as JSON with --json FILE.
"""

import argparse
import ctypes
import json
import os
import statistics
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "kernels")

M32 = 0xFFFFFFFF
M64 = 0xFFFFFFFFFFFFFFFF


# ---------------------------------------------------------------------------
# Ports of kernels.Pattern and kernels.ChasePerm (checked against golden.json).

def pattern(seed, i):
    x = (i & M32) ^ (((i >> 32) * 0x85EBCA6B) & M32) ^ seed
    x ^= x >> 16
    x = (x * 0x7FEB352D) & M32
    x ^= x >> 15
    x = (x * 0x846CA68B) & M32
    x ^= x >> 16
    return x


def chase_perm(k, bits, seed):
    mask = (1 << bits) - 1
    x = k & mask
    s = seed
    for _ in range(3):
        x = ((x * 0x9E3779B97F4A7C15 + s) & M64) & mask
        x ^= x >> ((bits + 1) // 2)
        s = (s * 0x5851F42D4C957F2D + 0x14057B7EF767814F) & M64
    return x & mask


def check_golden():
    with open(os.path.join(KERNELS, "testdata", "golden.json")) as f:
        g = json.load(f)
    bad = 0
    for p in g["pattern"]:
        if pattern(p["seed"], p["index"]) != p["word"]:
            bad += 1
    for c in g["chase"]:
        for k, want in zip(c["k"], c["perm"]):
            if chase_perm(k, c["bits"], c["seed"]) != want:
                bad += 1
    return bad


# ---------------------------------------------------------------------------
# The driver API through ctypes.

class CudaError(Exception):
    pass


cu = None


def load_cuda():
    global cu
    cu = ctypes.CDLL("libcuda.so.1")
    cu.cuGetErrorName.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    c_size = ctypes.c_size_t
    u64 = ctypes.c_uint64
    vp = ctypes.c_void_p
    sigs = {
        "cuInit": [ctypes.c_uint],
        "cuDeviceGetCount": [ctypes.POINTER(ctypes.c_int)],
        "cuDeviceGet": [ctypes.POINTER(ctypes.c_int), ctypes.c_int],
        "cuDeviceGetName": [ctypes.c_char_p, ctypes.c_int, ctypes.c_int],
        "cuDeviceGetAttribute": [ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_int],
        "cuDeviceCanAccessPeer": [ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_int],
        "cuDevicePrimaryCtxRetain": [ctypes.POINTER(vp), ctypes.c_int],
        "cuCtxSetCurrent": [vp],
        "cuCtxSynchronize": [],
        "cuCtxEnablePeerAccess": [vp, ctypes.c_uint],
        "cuMemAlloc_v2": [ctypes.POINTER(u64), c_size],
        "cuMemFree_v2": [u64],
        "cuMemsetD32_v2": [u64, ctypes.c_uint, c_size],
        "cuMemcpyHtoD_v2": [u64, vp, c_size],
        "cuMemcpyDtoH_v2": [vp, u64, c_size],
        "cuMemcpyPeerAsync": [u64, vp, u64, vp, c_size, vp],
        "cuMemHostAlloc": [ctypes.POINTER(vp), c_size, ctypes.c_uint],
        "cuMemHostGetDevicePointer_v2": [ctypes.POINTER(u64), vp, ctypes.c_uint],
        "cuMemFreeHost": [vp],
        "cuModuleLoadDataEx": [ctypes.POINTER(vp), ctypes.c_char_p, ctypes.c_uint,
                               ctypes.POINTER(ctypes.c_int), ctypes.POINTER(vp)],
        "cuModuleGetFunction": [ctypes.POINTER(vp), vp, ctypes.c_char_p],
        "cuFuncGetAttribute": [ctypes.POINTER(ctypes.c_int), ctypes.c_int, vp],
        "cuFuncSetAttribute": [vp, ctypes.c_int, ctypes.c_int],
        "cuLaunchKernel": [vp, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,
                           ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,
                           ctypes.c_uint, vp, ctypes.POINTER(vp), ctypes.POINTER(vp)],
        "cuStreamCreate": [ctypes.POINTER(vp), ctypes.c_uint],
        "cuStreamSynchronize": [vp],
        "cuStreamQuery": [vp],
        "cuEventCreate": [ctypes.POINTER(vp), ctypes.c_uint],
        "cuEventRecord": [vp, vp],
        "cuEventSynchronize": [vp],
        "cuEventElapsedTime": [ctypes.POINTER(ctypes.c_float), vp, vp],
    }
    for name, args in sigs.items():
        fn = getattr(cu, name)
        fn.argtypes = args
        fn.restype = ctypes.c_int


def err_name(res):
    s = ctypes.c_char_p()
    cu.cuGetErrorName(res, ctypes.byref(s))
    return s.value.decode() if s.value else str(res)


def ck(res, what):
    if res != 0:
        raise CudaError("%s: %s (%d)" % (what, err_name(res), res))


ATTR_SM_COUNT = 16
ATTR_CC_MAJOR = 75
ATTR_CC_MINOR = 76
FUNC_NUM_REGS = 4
FUNC_LOCAL_BYTES = 3
FUNC_SHARED_BYTES = 1


class Device:
    """One GPU: its primary context, a stream, its loaded modules."""

    def __init__(self, ordinal):
        self.ordinal = ordinal
        dev = ctypes.c_int()
        ck(cu.cuDeviceGet(ctypes.byref(dev), ordinal), "cuDeviceGet")
        self.dev = dev.value
        name = ctypes.create_string_buffer(256)
        ck(cu.cuDeviceGetName(name, 256, self.dev), "cuDeviceGetName")
        self.name = name.value.decode()
        self.sms = self.attr(ATTR_SM_COUNT)
        self.cc = self.attr(ATTR_CC_MAJOR) * 10 + self.attr(ATTR_CC_MINOR)
        ctx = ctypes.c_void_p()
        ck(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), self.dev), "cuDevicePrimaryCtxRetain")
        self.ctx = ctx
        self.use()
        s = ctypes.c_void_p()
        ck(cu.cuStreamCreate(ctypes.byref(s), 1), "cuStreamCreate")
        self.stream = s
        self.functions = {}
        self.resources = {}

    def attr(self, a):
        v = ctypes.c_int()
        ck(cu.cuDeviceGetAttribute(ctypes.byref(v), a, self.dev), "cuDeviceGetAttribute")
        return v.value

    def use(self):
        ck(cu.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")

    def load(self, module, text):
        """cuModuleLoadDataEx with the JIT error log, as p2pbench does."""
        self.use()
        log = ctypes.create_string_buffer(1 << 16)
        opts = (ctypes.c_int * 2)(5, 6)  # CU_JIT_ERROR_LOG_BUFFER, ..._SIZE_BYTES
        vals = (ctypes.c_void_p * 2)(ctypes.cast(log, ctypes.c_void_p).value, 1 << 16)
        mod = ctypes.c_void_p()
        res = cu.cuModuleLoadDataEx(ctypes.byref(mod), text.encode() + b"\0", 2, opts, vals)
        if res != 0:
            raise CudaError("load %s: %s\n%s" % (module, err_name(res), log.value.decode(errors="replace")))
        return mod

    def function(self, mod, entry):
        f = ctypes.c_void_p()
        ck(cu.cuModuleGetFunction(ctypes.byref(f), mod, entry.encode()), "cuModuleGetFunction " + entry)
        regs, local, shared = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        ck(cu.cuFuncGetAttribute(ctypes.byref(regs), FUNC_NUM_REGS, f), "cuFuncGetAttribute")
        ck(cu.cuFuncGetAttribute(ctypes.byref(local), FUNC_LOCAL_BYTES, f), "cuFuncGetAttribute")
        ck(cu.cuFuncGetAttribute(ctypes.byref(shared), FUNC_SHARED_BYTES, f), "cuFuncGetAttribute")
        self.functions[entry] = f
        self.resources[entry] = (regs.value, local.value, shared.value)
        return f

    def alloc(self, nbytes):
        self.use()
        p = ctypes.c_uint64()
        ck(cu.cuMemAlloc_v2(ctypes.byref(p), nbytes), "cuMemAlloc %d" % nbytes)
        return p.value

    def free(self, p):
        self.use()
        ck(cu.cuMemFree_v2(p), "cuMemFree")

    def memset32(self, p, value, words):
        # cuMemsetD32 runs on the legacy stream, which does not order itself
        # with our non-blocking streams: synchronise the context around it.
        self.use()
        ck(cu.cuCtxSynchronize(), "cuCtxSynchronize")
        ck(cu.cuMemsetD32_v2(p, value & M32, words), "cuMemsetD32")
        ck(cu.cuCtxSynchronize(), "cuCtxSynchronize")

    def read(self, p, nbytes):
        self.use()
        buf = ctypes.create_string_buffer(nbytes)
        ck(cu.cuMemcpyDtoH_v2(buf, p, nbytes), "cuMemcpyDtoH")
        return buf.raw

    def write(self, p, data):
        self.use()
        ck(cu.cuMemcpyHtoD_v2(p, data, len(data)), "cuMemcpyHtoD")

    def launch(self, entry, grid, block, params, shared=0, stream=None):
        """params: list of (value, 'u64'|'u32')."""
        self.use()
        vals = []
        for v, t in params:
            vals.append(ctypes.c_uint64(v & M64) if t == "u64" else ctypes.c_uint32(v & M32))
        ptrs = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in vals])
        ck(cu.cuLaunchKernel(self.functions[entry], grid, 1, 1, block, 1, 1, shared,
                             stream if stream is not None else self.stream, ptrs, None),
           "cuLaunchKernel " + entry)

    def sync(self):
        self.use()
        ck(cu.cuStreamSynchronize(self.stream), "cuStreamSynchronize")

    def event(self):
        self.use()
        e = ctypes.c_void_p()
        ck(cu.cuEventCreate(ctypes.byref(e), 0), "cuEventCreate")
        return e

    def record(self, e):
        self.use()
        ck(cu.cuEventRecord(e, self.stream), "cuEventRecord")


def elapsed_ms(a, b):
    ck(cu.cuEventSynchronize(b), "cuEventSynchronize")
    ms = ctypes.c_float()
    ck(cu.cuEventElapsedTime(ctypes.byref(ms), a, b), "cuEventElapsedTime")
    return ms.value


def u32s(raw):
    return struct.unpack("<%dI" % (len(raw) // 4), raw)


def u64s(raw):
    return struct.unpack("<%dQ" % (len(raw) // 8), raw)


# ---------------------------------------------------------------------------
# The catalog, as kernels/*.go has it (entry -> parameter types).

def _copy_variants():
    """The SM copy variants and their dynamic shared memory, from
    variants.txt, which the Go side writes from kernels.CopyKernels
    (go test ./kernels -run TestSelftestVariants -update)."""
    out = []
    with open(os.path.join(HERE, "variants.txt")) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if line:
                out.append((line[0], int(line[1])))
    return out


COPY_VARIANTS = [v for v, _ in _copy_variants()]
# Dynamic shared memory of copy variants that need some (bulk, and any
# experimental module loaded with --extra).
SHARED_BYTES = {v: n for v, n in _copy_variants() if n}
BULK_SHARED = SHARED_BYTES["bulk"]  # over the 48 KiB default: needs the opt-in
# bulk works with one thread per block: small blocks, several per SM
# (blocks per SM, threads per block).
BULK_CONFIGS = [(1, 32), (2, 32), (4, 32), (6, 32), (2, 256)]

# name, width, float, init, has chain
ATOMIC_OPS = [
    ("add_u32", 4, False, 0, True),
    ("red_add_u32", 4, False, 0, False),
    ("add_u64", 8, False, 0, True),
    ("red_add_u64", 8, False, 0, False),
    ("cas_u64", 8, False, 0, True),
    ("exch_u32", 4, False, 0, True),
    ("min_u32", 4, False, 0xFFFFFFFF, True),
    ("add_f32", 4, True, 0, True),
]


def f32bits(f):
    return struct.unpack("<I", struct.pack("<f", f))[0]


def atomic_expected(name, width, is_float, init, threads, iters, contended):
    """kernels.AtomicOp.Expected."""
    n = threads * iters if contended else iters
    if name == "exch_u32":
        return iters & M32
    if name == "min_u32":
        return init if iters == 0 else 1
    if is_float:
        return f32bits(float(min(n, 1 << 24)))
    return n & M32 if width == 4 else n & M64


# ---------------------------------------------------------------------------

class Report:
    def __init__(self):
        self.failures = []
        self.results = {}

    def check(self, ok, what):
        print(("  ok    " if ok else "  FAIL  ") + what, flush=True)
        if not ok:
            self.failures.append(what)
        return ok

    def note(self, key, value):
        self.results[key] = value


def load_all(d, rep):
    mods = {}
    for fn in sorted(os.listdir(KERNELS)):
        if not fn.endswith(".ptx"):
            continue
        name = fn[:-4]
        with open(os.path.join(KERNELS, fn)) as f:
            text = f.read()
        if ".target sm_90" in text and d.cc < 90:
            continue
        try:
            mods[name] = d.load(name, text)
            rep.check(True, "GPU%d load %s" % (d.ordinal, fn))
        except CudaError as e:
            rep.check(False, "GPU%d load %s: %s" % (d.ordinal, fn, e))
    entries = ["p2p_latch", "p2p_fill", "p2p_check", "p2p_chase_build", "p2p_chase", "p2p_pingpong",
               "p2p_pingpong_relaxed"]
    entries += ["p2p_copy_" + v for v in COPY_VARIANTS]
    for name, _, _, _, chain in ATOMIC_OPS:
        entries.append("p2p_atomic_" + name)
        if chain:
            entries.append("p2p_atomic_chain_" + name)
    module_of = {"p2p_latch": "latch", "p2p_fill": "verify", "p2p_check": "verify",
                 "p2p_chase_build": "latency", "p2p_chase": "latency", "p2p_pingpong": "latency",
                 "p2p_pingpong_relaxed": "latency",
                 "p2p_copy_bulk": "copy_bulk"}
    for e in entries:
        m = module_of.get(e, "copy" if e.startswith("p2p_copy_") else "atomic")
        if m not in mods:
            continue
        try:
            f = d.function(mods[m], e)
            if e == "p2p_copy_bulk":
                # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, as bench must.
                ck(cu.cuFuncSetAttribute(f, 8, BULK_SHARED), "cuFuncSetAttribute bulk")
        except CudaError as ex:
            rep.check(False, str(ex))
    if d.ordinal == 0:
        print("  resources (registers, local bytes, static shared bytes):")
        for e, (r, l, s) in sorted(d.resources.items()):
            print("    %-28s regs %3d  local %4d  shared %5d" % (e, r, l, s))
            if l:
                rep.check(False, "%s uses %d bytes of local memory" % (e, l))


def fill(d, buf, words, seed, grid=None, block=256):
    d.launch("p2p_fill", grid or d.sms * 8, block, [(buf, "u64"), (words, "u64"), (seed, "u32")])


def check(d, buf, words, seed, result, grid=None, block=256):
    """Runs p2p_check; returns (first_bad, bad_count)."""
    d.write(result, struct.pack("<QQ", M64, 0))
    d.launch("p2p_check", grid or d.sms * 8, block,
             [(buf, "u64"), (words, "u64"), (seed, "u32"), (result, "u64")])
    d.sync()
    return u64s(d.read(result, 16))


def test_verify(d, rep, big):
    print("verify: p2p_fill / p2p_check")
    words = (1 << 32) + 4099 if big else (1 << 20) + 3
    buf = d.alloc(words * 4)
    result = d.alloc(16)
    seed = 0x5EED1234
    fill(d, buf, words, seed)
    d.sync()
    head = u32s(d.read(buf, 4096 * 4))
    rep.check(all(head[i] == pattern(seed, i) for i in range(4096)), "fill: first 4096 words == Pattern")
    tail_start = words - 4099
    tail = u32s(d.read(buf + tail_start * 4, 4099 * 4))
    rep.check(all(tail[j] == pattern(seed, tail_start + j) for j in range(4099)),
              "fill: last 4099 words == Pattern (indices up to %d)" % (words - 1))
    rep.check(check(d, buf, words, seed, result) == (M64, 0), "check: clean buffer has no mismatch")
    rep.check(check(d, buf, words, seed + 1, result) == (0, words), "check: wrong seed, every word bad")
    bad = [12345, words - 2] + ([(1 << 32) + 17] if big else [])
    for i in bad:
        d.memset32(buf + i * 4, pattern(seed, i) ^ 1, 1)
    rep.check(check(d, buf, words, seed, result) == (12345, len(bad)),
              "check: %d planted errors found, first at 12345" % len(bad))
    rep.check(check(d, buf, words, seed, result, grid=3, block=64) == (12345, len(bad)),
              "check: same with a small grid")
    d.free(buf)
    d.free(result)




def load_extra(devs, directory, rep):
    """Loads experimental copy modules: every p2p_copy_X entry becomes variant
    X; a line '// selftest-shared: N' gives its dynamic shared memory. An
    entry takes (dst, src, bytes) or, as the shipped ones, (dst, src, bytes,
    reps); launched with reps 1 and checked as one copy (a kernel ignores the
    parameters it does not declare)."""
    found = []
    for fn in sorted(os.listdir(directory)):
        if not fn.endswith(".ptx"):
            continue
        with open(os.path.join(directory, fn)) as f:
            text = f.read()
        shared = 0
        for line in text.splitlines():
            if line.startswith("// selftest-shared:"):
                shared = int(line.split(":")[1])
        names = [w.split("(")[0] for w in text.split() if w.startswith("p2p_copy_") and w.endswith("(")]
        for d in devs:
            try:
                mod = d.load(fn, text)
            except CudaError as e:
                rep.check(False, "extra %s: %s" % (fn, e))
                continue
            for entry in names:
                f = d.function(mod, entry)
                if shared > 48 * 1024:
                    ck(cu.cuFuncSetAttribute(f, 8, shared), "cuFuncSetAttribute")  # MAX_DYNAMIC_SHARED_SIZE_BYTES
        for entry in names:
            v = entry[len("p2p_copy_"):]
            SHARED_BYTES[v] = shared
            found.append(v)
    print("extra variants: %s" % ", ".join(found))
    return found


def copy_launch(d, variant, dst, src, nbytes, grid, block, stream=None, reps=1):
    """One launch of a copy kernel that copies nbytes reps times."""
    shared = SHARED_BYTES.get(variant, 0)
    d.launch("p2p_copy_" + variant, grid, block, [(dst, "u64"), (src, "u64"), (nbytes, "u64"), (reps, "u32")],
             shared=shared, stream=stream)


def test_copy_correct(run_dev, src_dev, dst_dev, rep, label, variants):
    """Copies with every variant, sizes with every tail and several grids; run on
    run_dev. The shipped variants also copy a few sizes with 0 repetitions
    (the destination untouched) and with 3 in one launch (exact)."""
    print("copy correctness: %s" % label)
    sizes = [4, 8, 12, 16, 20, 44, 4096 + 12, 8192 * 5 + 4, (1 << 20) + 8, 33 * (1 << 20) + 12]
    grids = [(1, 32), (7, 96), (run_dev.sms * 2, 256), (run_dev.sms * 4, 1024)]
    maxb = max(sizes)
    src = src_dev.alloc(maxb + 64)
    dst = dst_dev.alloc(maxb + 64)
    result = run_dev.alloc(16)
    seed = 77
    fill(src_dev, src, (maxb + 64) // 4, seed)
    src_dev.sync()
    for v in variants:
        if "p2p_copy_" + v not in run_dev.functions:
            continue
        ok = True
        runs = [(nbytes, 1) for nbytes in sizes]
        if v in COPY_VARIANTS:
            runs += [(nbytes, r) for nbytes in (12, 8192 * 5 + 4, 33 * (1 << 20) + 12) for r in (0, 3)]
        for nbytes, reps in runs:
            for grid, block in grids:
                dst_dev.memset32(dst, 0xFFFFFFFF, (maxb + 64) // 4)
                copy_launch(run_dev, v, dst, src, nbytes, grid, block, reps=reps)
                run_dev.sync()
                first, count = check(run_dev, dst, nbytes // 4, seed, result)
                want = nbytes // 4 if reps == 0 else 0  # 0 repetitions: all still 0xFFFFFFFF
                after = u32s(dst_dev.read(dst + nbytes, 16))
                if count != want or any(w != 0xFFFFFFFF for w in after):
                    ok = False
                    rep.check(False, "copy %s %s: %d bytes x %d grid %dx%d: %d bad (first %d, want %d bad), overrun %s"
                              % (v, label, nbytes, reps, grid, block, count, first, want, after))
        if ok:
            rep.check(True, "copy %s %s: %d sizes and repetitions x %d grids exact, no overrun"
                      % (v, label, len(runs), len(grids)))
    src_dev.free(src)
    dst_dev.free(dst)
    run_dev.free(result)


def time_copy(d, variant, dst, src, nbytes, grid, block, reps, inner=1):
    """GB/s of the median of reps timed launches, each copying nbytes inner
    times (the kernel's repetitions), and the launches' times."""
    e0, e1 = d.event(), d.event()
    copy_launch(d, variant, dst, src, nbytes, grid, block, reps=inner)  # warm-up
    times = []
    for _ in range(reps):
        d.record(e0)
        copy_launch(d, variant, dst, src, nbytes, grid, block, reps=inner)
        d.record(e1)
        times.append(elapsed_ms(e0, e1))
    ms = statistics.median(times)
    return inner * nbytes / (ms * 1e-3) / 1e9, times


def copy_sweep(run_dev, src, dst, rep, label, variants, nbytes, reps, configs, inner=1):
    print("copy bandwidth: %s, %d MiB x %d a launch, median of %d (GB/s, decimal)" % (label, nbytes >> 20, inner, reps))
    table = {}
    for v in variants:
        if "p2p_copy_" + v not in run_dev.functions:
            continue
        row = {}
        for bpsm, block in (BULK_CONFIGS if v.startswith("bulk") else configs):
            grid = run_dev.sms * bpsm
            gbs, _ = time_copy(run_dev, v, dst, src, nbytes, grid, block, reps,
                               inner=inner if v in COPY_VARIANTS else 1)
            row["%dx%d" % (grid, block)] = round(gbs, 1)
        best = max(row.items(), key=lambda kv: kv[1])
        table[v] = {"best": best[1], "best_config": best[0], "configs": row}
        print("  %-8s best %6.1f at %-9s  %s" % (v, best[1], best[0],
                                                  " ".join("%s:%.1f" % kv for kv in row.items())), flush=True)
    rep.note("copy " + label, table)
    return table


def test_atomics(run_dev, mem_dev, rep, label, reps):
    print("atomics: %s (kernel on GPU%d, memory on GPU%d)" % (label, run_dev.ordinal, mem_dev.ordinal))
    out = {}
    for name, width, is_float, init, chain in ATOMIC_OPS:
        entry = "p2p_atomic_" + name
        if entry not in run_dev.functions:
            continue
        for contended in (False, True):
            if contended:
                grid, block, iters = (8, 64, 16) if name == "cas_u64" else (run_dev.sms, 256, 16)
            else:
                grid, block, iters = run_dev.sms * 8, 256, 64
            threads = grid * block
            nelem = 1 if contended else threads
            buf = mem_dev.alloc(max(nelem * width, 16))
            e0, e1 = run_dev.event(), run_dev.event()
            times = []
            ok = True
            for r in range(reps):
                # init is 0 or 0xFFFFFFFF (u32 only): a word fill does it.
                mem_dev.memset32(buf, init, nelem * width // 4)
                run_dev.record(e0)
                run_dev.launch(entry, grid, block, [(buf, "u64"), (iters, "u32"), (1 if contended else 0, "u32")])
                run_dev.record(e1)
                times.append(elapsed_ms(e0, e1))
                raw = mem_dev.read(buf, nelem * width)
                vals = u32s(raw) if width == 4 else u64s(raw)
                want = atomic_expected(name, width, is_float, init, threads, iters, contended)
                if any(v != want for v in vals):
                    wrong = [v for v in vals if v != want]
                    ok = False
                    rep.check(False, "atomic %s %s contended=%s: %d elements wrong (e.g. %#x, want %#x)"
                              % (name, label, contended, len(wrong), wrong[0], want))
                    break
            mem_dev.free(buf)
            if ok:
                gops = threads * iters / (statistics.median(times) * 1e-3) / 1e9
                rep.check(True, "atomic %-11s %s %-10s exact; %.2f Gop/s (%d threads x %d)"
                          % (name, label, "contended" if contended else "distinct", gops, threads, iters))
                out["%s %s" % (name, "contended" if contended else "distinct")] = round(gops, 3)
        if chain:
            centry = "p2p_atomic_chain_" + name
            buf = mem_dev.alloc(16)
            for iters in (1, 2000):
                mem_dev.memset32(buf, init, width // 4)
                e0, e1 = run_dev.event(), run_dev.event()
                run_dev.record(e0)
                run_dev.launch(centry, 1, 1, [(buf, "u64"), (iters, "u32")])
                run_dev.record(e1)
                ms = elapsed_ms(e0, e1)
                raw = mem_dev.read(buf, width)
                v = u32s(raw)[0] if width == 4 else u64s(raw)[0]
                want = atomic_expected(name, width, is_float, init, 1, iters, False)
                if rep.check(v == want, "chain %-11s %s iters=%d final %#x (want %#x); %.0f ns/op"
                             % (name, label, iters, v, want, ms * 1e6 / iters)) and iters > 1:
                    out["chain " + name + " ns"] = round(ms * 1e6 / iters, 1)
            mem_dev.free(buf)
    rep.note("atomics " + label, out)


def test_latch(d, rep):
    print("latch")
    host = ctypes.c_void_p()
    ck(cu.cuMemHostAlloc(ctypes.byref(host), 64, 3), "cuMemHostAlloc")  # PORTABLE|DEVICEMAP
    dptr = ctypes.c_uint64()
    ck(cu.cuMemHostGetDevicePointer_v2(ctypes.byref(dptr), host, 0), "cuMemHostGetDevicePointer")
    words = (ctypes.c_uint32 * 16).from_address(host.value)
    flag, status = dptr.value, dptr.value + 4
    # Held, then released.
    words[0], words[1] = 0, 0
    d.launch("p2p_latch", 1, 1, [(flag, "u64"), (status, "u64"), (5_000_000_000, "u64")])
    time.sleep(0.2)
    held = cu.cuStreamQuery(d.stream)
    rep.check(held == 600 and words[1] == 0, "latch holds the stream (cuStreamQuery %s, status %d)" % (err_name(held), words[1]))
    t0 = time.time()
    words[0] = 1
    d.sync()
    rep.check(words[1] == 1, "latch released: status %d after %.1f ms" % (words[1], (time.time() - t0) * 1e3))
    # Not released: times out.
    words[0], words[1] = 0, 0
    t0 = time.time()
    d.launch("p2p_latch", 1, 1, [(flag, "u64"), (status, "u64"), (20_000_000, "u64")])
    d.sync()
    dt = time.time() - t0
    rep.check(words[1] == 2 and dt < 2, "latch timeout: status %d after %.1f ms (timeout 20 ms)" % (words[1], dt * 1e3))
    # A larger launch is harmless.
    words[0], words[1] = 1, 0
    d.launch("p2p_latch", 4, 128, [(flag, "u64"), (status, "u64"), (1_000_000_000, "u64")])
    d.sync()
    rep.check(words[1] == 1, "latch <<<4,128>>> released: status %d" % words[1])
    ck(cu.cuMemFreeHost(host), "cuMemFreeHost")


def test_chase(run_dev, mem_dev, rep, label, timing):
    print("chase: %s" % label)
    # Build: exact layout.
    bits, stride, seed = 12, 24, 0xC0FFEE
    nodes = 1 << bits
    buf = mem_dev.alloc(nodes * stride)
    mem_dev.memset32(buf, 0, nodes * stride // 4)
    mem_dev.launch("p2p_chase_build", 5, 96, [(buf, "u64"), (nodes, "u64"), (stride, "u64"), (seed, "u32")])
    mem_dev.sync()
    raw = mem_dev.read(buf, nodes * stride)
    ok = True
    for k in range(nodes):
        at = chase_perm(k, bits, seed)
        to = chase_perm((k + 1) % nodes, bits, seed)
        got = struct.unpack_from("<Q", raw, at * stride)[0]
        if got != buf + to * stride:
            ok = False
            break
    rep.check(ok, "chase_build %s: 2^%d nodes, stride %d, every next-pointer exact" % (label, bits, stride))
    # Chase it: the final pointer after chunks*hops hops.
    times = run_dev.alloc(8 * 64)
    sink = run_dev.alloc(8)
    start = buf + chase_perm(0, bits, seed) * stride
    chunks, hops = 3, 1000
    run_dev.launch("p2p_chase", 1, 1, [(start, "u64"), (chunks, "u32"), (hops, "u32"), (times, "u64"), (sink, "u64")])
    run_dev.sync()
    end = u64s(run_dev.read(sink, 8))[0]
    want = buf + chase_perm((chunks * hops) % nodes, bits, seed) * stride
    ts = u64s(run_dev.read(times, 8 * (chunks + 1)))
    rep.check(end == want and all(ts[i] < ts[i + 1] for i in range(chunks)),
              "chase %s: lands on the right node after %d hops; times increase" % (label, chunks * hops))
    mem_dev.free(buf)
    if timing:
        for bits, stride in ((16, 128), (22, 256)):
            nodes = 1 << bits
            buf = mem_dev.alloc(nodes * stride)
            mem_dev.launch("p2p_chase_build", mem_dev.sms * 4, 256, [(buf, "u64"), (nodes, "u64"), (stride, "u64"), (1, "u32")])
            mem_dev.sync()
            chunks, hops = 8, 2000
            start = buf + chase_perm(0, bits, 1) * stride
            run_dev.launch("p2p_chase", 1, 1, [(start, "u64"), (chunks, "u32"), (hops, "u32"), (times, "u64"), (sink, "u64")])
            run_dev.sync()
            ts = u64s(run_dev.read(times, 8 * (chunks + 1)))
            per = sorted((ts[i + 1] - ts[i]) / hops for i in range(chunks))
            med = per[len(per) // 2]
            print("  %s: %d MiB footprint, %.0f ns per hop (median of %d chunks, min %.0f)"
                  % (label, nodes * stride >> 20, med, chunks, per[0]))
            rep.note("chase %s %dMiB ns" % (label, nodes * stride >> 20), round(med, 1))
            mem_dev.free(buf)
    run_dev.free(times)
    run_dev.free(sink)


def test_pingpong(d0, d1, rep, entry, iters=20000, chunk=1000):
    print("%s: GPU0 (initiator) <-> GPU1 (responder)" % entry)
    f0, f1 = d0.alloc(64), d1.alloc(64)
    t0 = d0.alloc(8 * (iters // chunk + 2))
    s0, s1 = d0.alloc(8), d1.alloc(8)
    t1 = d1.alloc(8 * 4)
    for _ in range(2):
        d0.memset32(f0, 0, 16)
        d1.memset32(f1, 0, 16)
        d0.memset32(s0, 0, 2)
        d1.memset32(s1, 0, 2)
        d0.sync(), d1.sync()
        d1.launch(entry, 1, 1, [(f1, "u64"), (f0, "u64"), (iters, "u32"), (chunk, "u32"), (1, "u32"),
                                         (t1, "u64"), (5_000_000_000, "u64"), (s1, "u64")])
        d0.launch(entry, 1, 1, [(f0, "u64"), (f1, "u64"), (iters, "u32"), (chunk, "u32"), (0, "u32"),
                                         (t0, "u64"), (5_000_000_000, "u64"), (s0, "u64")])
        d0.sync()
        d1.sync()
    st0, st1 = u32s(d0.read(s0, 4))[0], u32s(d1.read(s1, 4))[0]
    ts = u64s(d0.read(t0, 8 * (iters // chunk + 1)))
    rtts = sorted((ts[i + 1] - ts[i]) / chunk for i in range(iters // chunk))
    rep.check(st0 == 1 and st1 == 1 and all(r > 0 for r in rtts),
              entry + ": status %d/%d, %d round trips, %.0f ns per round trip (median of %d chunks; min %.0f)"
              % (st0, st1, iters, rtts[len(rtts) // 2], len(rtts), rtts[0]))
    rep.note(entry + " rtt ns", round(rtts[len(rtts) // 2], 1))
    # Responder missing: the initiator times out.
    d0.memset32(f0, 0, 16)
    d1.memset32(f1, 0, 16)
    d0.memset32(s0, 0, 2)
    d1.sync()
    t = time.time()
    d0.launch(entry, 1, 1, [(f0, "u64"), (f1, "u64"), (iters, "u32"), (chunk, "u32"), (0, "u32"),
                                     (t0, "u64"), (10_000_000, "u64"), (s0, "u64")])
    d0.sync()
    st0 = u32s(d0.read(s0, 4))[0]
    rep.check(st0 == 2 and time.time() - t < 2, entry + " without a responder times out: status %d" % st0)
    for p, d in ((f0, d0), (t0, d0), (s0, d0), (f1, d1), (t1, d1), (s1, d1)):
        d.free(p)


def test_ce(src_dev, dst_dev, run_dev, src, dst, nbytes, reps, label, rep):
    run_dev.use()
    e0, e1 = run_dev.event(), run_dev.event()
    times = []
    for r in range(reps + 1):
        run_dev.record(e0)
        ck(cu.cuMemcpyPeerAsync(dst, dst_dev.ctx, src, src_dev.ctx, nbytes, run_dev.stream), "cuMemcpyPeerAsync")
        run_dev.record(e1)
        if r:
            times.append(elapsed_ms(e0, e1))
    gbs = nbytes / (statistics.median(times) * 1e-3) / 1e9
    print("  copy engine (cuMemcpyPeerAsync, %s): %.1f GB/s" % (label, gbs))
    rep.note("ce " + label, round(gbs, 1))


def test_both_ways(d0, d1, variant, a0, b1, a1, b0, nbytes, grid_per_sm, block, reps, rep, mode):
    """Both directions at once: mode 'push' (each GPU writes into the other) or
    'pull' (each reads from the other). Each direction timed with its own events."""
    e = [(d0.event(), d0.event()), (d1.event(), d1.event())]
    res = [[], []]
    for r in range(reps + 1):
        for i, (d, (s, t)) in enumerate(((d0, e[0]), (d1, e[1]))):
            d.record(s)
            if mode == "push":
                dst, src = (b1, a0) if i == 0 else (b0, a1)
            else:
                dst, src = (a0, b1) if i == 0 else (a1, b0)
            copy_launch(d, variant, dst, src, nbytes, d.sms * grid_per_sm, block)
            d.record(t)
        for i, (s, t) in enumerate(e):
            ms = elapsed_ms(s, t)
            if r:
                res[i].append(ms)
    g = [nbytes / (statistics.median(x) * 1e-3) / 1e9 for x in res]
    print("  both ways %s %-8s: %.1f + %.1f = %.1f GB/s" % (mode, variant, g[0], g[1], g[0] + g[1]))
    rep.note("both %s %s" % (mode, variant), [round(g[0], 1), round(g[1], 1)])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="correctness only")
    ap.add_argument("--no-gpu", action="store_true", help="only the Python ports vs golden.json")
    ap.add_argument("--json", help="write the timings here")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--mib", type=int, default=2048)
    ap.add_argument("--in-kernel", type=int, default=1, metavar="N",
                    help="copies per timed launch in the bandwidth sweeps (the copy kernels' reps; default 1)")
    ap.add_argument("--variants", help="comma-separated copy variants for the bandwidth runs (default: all)")
    ap.add_argument("--rounds", type=int, default=1, help="repeat the bandwidth sweeps this many times")
    ap.add_argument("--extra", help="a directory of experimental copy modules to test and time too")
    ap.add_argument("--configs", help="grid shapes for the sweeps, as BLOCKS_PER_SMxTHREADS,... (e.g. 2x512,4x256)")
    ap.add_argument("--bandwidth-only", action="store_true", help="skip the correctness tests")
    args = ap.parse_args()

    rep = Report()
    print("golden.json vs the Python ports of Pattern and ChasePerm")
    rep.check(check_golden() == 0, "Pattern and ChasePerm ports agree with golden.json")
    if args.no_gpu:
        return finish(rep, args)

    load_cuda()
    ck(cu.cuInit(0), "cuInit")
    n = ctypes.c_int()
    ck(cu.cuDeviceGetCount(ctypes.byref(n)), "cuDeviceGetCount")
    devs = [Device(i) for i in range(min(n.value, 2))]
    for d in devs:
        print("GPU%d: %s, cc %d, %d SMs" % (d.ordinal, d.name, d.cc, d.sms))
    d0 = devs[0]
    try:
        for d in devs:
            load_all(d, rep)
        extra = load_extra(devs, args.extra, rep) if args.extra else []
        all_variants = COPY_VARIANTS + extra
        correctness = not args.bandwidth_only
        if correctness:
            test_verify(d0, rep, big=not args.quick)
            test_latch(d0, rep)
            test_copy_correct(d0, d0, d0, rep, "local", all_variants)
            test_atomics(d0, d0, rep, "local", 1 if args.quick else 3)
            test_chase(d0, d0, rep, "local", timing=not args.quick)

        peer = False
        if len(devs) == 2:
            can = ctypes.c_int()
            ck(cu.cuDeviceCanAccessPeer(ctypes.byref(can), devs[0].dev, devs[1].dev), "cuDeviceCanAccessPeer")
            peer = can.value == 1
            print("peer access GPU0 <-> GPU1: %s" % peer)
        if peer:
            d1 = devs[1]
            for a, b in ((d0, d1), (d1, d0)):
                a.use()
                res = cu.cuCtxEnablePeerAccess(b.ctx, 0)
                if res not in (0, 704):  # 704: already enabled
                    ck(res, "cuCtxEnablePeerAccess")
            if correctness:
                test_copy_correct(d1, d0, d1, rep, "pull GPU0->GPU1", all_variants)
                test_copy_correct(d0, d0, d1, rep, "push GPU0->GPU1", all_variants)
                test_atomics(d0, d1, rep, "remote", 1 if args.quick else 3)
                test_chase(d0, d1, rep, "remote", timing=not args.quick)
                test_pingpong(d0, d1, rep, "p2p_pingpong")
                test_pingpong(d0, d1, rep, "p2p_pingpong_relaxed")
            variants = args.variants.split(",") if args.variants else all_variants
            if not args.quick:
                nbytes = args.mib << 20
                a0, a1 = d0.alloc(nbytes), d1.alloc(nbytes)
                b0, b1 = d0.alloc(nbytes), d1.alloc(nbytes)
                fill(d0, a0, nbytes // 4, 1)
                fill(d1, a1, nbytes // 4, 2)
                d0.sync(), d1.sync()
                configs = [(1, 256), (1, 512), (2, 512), (4, 256), (1, 1024), (2, 1024), (8, 256),
                           (4, 512), (16, 128), (32, 64)]
                if args.configs:
                    configs = [tuple(int(x) for x in c.split("x")) for c in args.configs.split(",")]
                for r in range(args.rounds):
                    sfx = " round %d" % (r + 1) if args.rounds > 1 else ""
                    test_ce(d0, d1, d1, a0, b1, nbytes, args.reps, "GPU0->GPU1 issued by GPU1" + sfx, rep)
                    test_ce(d0, d1, d0, a0, b1, nbytes, args.reps, "GPU0->GPU1 issued by GPU0" + sfx, rep)
                    copy_sweep(d1, a0, b1, rep, "pull GPU0->GPU1" + sfx, variants, nbytes, args.reps, configs,
                               inner=args.in_kernel)
                    copy_sweep(d0, a0, b1, rep, "push GPU0->GPU1" + sfx, variants, nbytes, args.reps, configs,
                               inner=args.in_kernel)
                copy_sweep(d0, a0, b0, rep, "local GPU0", ["v4_u4", "bulk"], nbytes, args.reps, [(2, 512)],
                           inner=args.in_kernel)
                for v in [v for v in ("v4_u4", "v4_u8", "cs_u8", "warp_u8", "bulk") + tuple(extra) if v in variants]:
                    bpsm, block = (1, 32) if v.startswith("bulk") else (1, 512)
                    test_both_ways(d0, d1, v, a0, b1, a1, b0, nbytes, bpsm, block, args.reps, rep, "push")
                    test_both_ways(d0, d1, v, a0, b1, a1, b0, nbytes, bpsm, block, args.reps, rep, "pull")
                result = d1.alloc(16)
                copy_launch(d1, "v4_u4", b1, a0, nbytes, d1.sms * 2, 512)
                d1.sync()
                rep.check(check(d1, b1, nbytes // 4, 1, result) == (M64, 0), "the last timed copy's data verified")
    except CudaError as e:
        rep.check(False, "CUDA error, stopping: %s" % e)
    return finish(rep, args)


def finish(rep, args):
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"failures": rep.failures, "results": rep.results}, f, indent=1)
    print()
    if rep.failures:
        print("FAILED: %d check(s)" % len(rep.failures))
        for f in rep.failures:
            print("  " + f)
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
