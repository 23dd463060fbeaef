#!/usr/bin/env python3
"""Where does the SM copy ceiling come from? A probe for a 2-GPU machine.

Runs copies between GPU0 and GPU1 (copy engine and SM kernels, one direction
and both at once) and reads each GPU's NVLink throughput counters through NVML
(nvmlDeviceGetFieldValues, fields NVLINK_THROUGHPUT_DATA_TX/RX and RAW_TX/RX,
per link) around each, so that the bytes on the wire (raw: headers, requests,
acknowledgements) can be set against the payload (data) and against the bytes
the copy moved. Also: the pull rate at large sizes and over grid sizes, and
experimental kernels from tools/kernel-selftest/probe/ (selftest.py --extra).

Only reads counters: it never resets, freezes or reconfigures them.

    python3 tools/kernel-selftest/probe_link.py --json out.json
"""

import argparse
import ctypes
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import selftest as st  # noqa: E402

FI_DATA_TX, FI_DATA_RX, FI_RAW_TX, FI_RAW_RX = 138, 139, 140, 141
LINKS = 18


class FieldValue(ctypes.Structure):
    _fields_ = [("fieldId", ctypes.c_uint), ("scopeId", ctypes.c_uint), ("timestamp", ctypes.c_longlong),
                ("latencyUsec", ctypes.c_longlong), ("valueType", ctypes.c_uint), ("nvmlReturn", ctypes.c_uint),
                ("value", ctypes.c_ulonglong)]


class NVML:
    def __init__(self):
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        if self.lib.nvmlInit_v2() != 0:
            raise RuntimeError("nvmlInit_v2 failed")
        self.handles = []
        for i in range(2):
            h = ctypes.c_void_p()
            if self.lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h)) != 0:
                raise RuntimeError("nvmlDeviceGetHandleByIndex_v2 %d failed" % i)
            self.handles.append(h)

    def counters(self, gpu, scopes):
        """{field: [value per scope]} in KiB (None where NVML refused)."""
        fields = (FI_DATA_TX, FI_DATA_RX, FI_RAW_TX, FI_RAW_RX)
        arr = (FieldValue * (len(fields) * len(scopes)))()
        k = 0
        for f in fields:
            for s in scopes:
                arr[k].fieldId, arr[k].scopeId = f, s
                k += 1
        res = self.lib.nvmlDeviceGetFieldValues(self.handles[gpu], len(arr), arr)
        out = {}
        k = 0
        for f in fields:
            vals = []
            for _ in scopes:
                vals.append(arr[k].value if res == 0 and arr[k].nvmlReturn == 0 else None)
                k += 1
            out[f] = vals
        return out


def snapshot(nv):
    return [nv.counters(g, list(range(LINKS))) for g in range(2)]


def delta(a, b):
    """Per GPU and field, the change summed over links, in bytes."""
    out = []
    for g in range(2):
        d = {}
        for f, name in ((FI_DATA_TX, "data_tx"), (FI_DATA_RX, "data_rx"), (FI_RAW_TX, "raw_tx"), (FI_RAW_RX, "raw_rx")):
            tot = 0
            ok = False
            for x, y in zip(a[g][f], b[g][f]):
                if x is not None and y is not None:
                    tot += y - x
                    ok = True
            d[name] = tot * 1024 if ok else None
        out.append(d)
    return out


def run_timed(work, devs, reps):
    """work(): enqueues one repetition on the devices' streams. Returns the
    median ms of each device's own events, per device that got work."""
    evs = [(d.event(), d.event()) for d in devs]
    times = [[] for _ in devs]
    for r in range(reps + 1):
        for d, (a, _) in zip(devs, evs):
            d.record(a)
        work()
        for d, (_, b) in zip(devs, evs):
            d.record(b)
        for i, (a, b) in enumerate(evs):
            ms = st.elapsed_ms(a, b)
            if r:
                times[i].append(ms)
    return [statistics.median(t) for t in times]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--mib", type=int, default=2048)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--skip-big", action="store_true")
    args = ap.parse_args()

    st.load_cuda()
    cu = st.cu
    cu.cuMemcpyAsync.argtypes = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_size_t, ctypes.c_void_p]
    cu.cuMemcpyAsync.restype = ctypes.c_int
    st.ck(cu.cuInit(0), "cuInit")
    rep = st.Report()
    d0, d1 = st.Device(0), st.Device(1)
    devs = [d0, d1]
    for d in devs:
        st.load_all(d, rep)
    extra = st.load_extra(devs, os.path.join(st.HERE, "probe"), rep)
    for a, b in ((d0, d1), (d1, d0)):
        a.use()
        res = cu.cuCtxEnablePeerAccess(b.ctx, 0)
        if res not in (0, 704):
            st.ck(res, "cuCtxEnablePeerAccess")
    nv = NVML()
    out = {"extra": extra, "runs": []}

    n = args.mib << 20
    a0, b0 = d0.alloc(n), d0.alloc(n)
    a1, b1 = d1.alloc(n), d1.alloc(n)
    st.fill(d0, a0, n // 4, 1)
    st.fill(d1, a1, n // 4, 2)
    d0.sync(), d1.sync()

    def ce_peer(issuer, dst, dctx, src, sctx):
        return lambda: st.ck(cu.cuMemcpyPeerAsync(dst, dctx.ctx, src, sctx.ctx, n, issuer.stream), "cuMemcpyPeerAsync")

    def ce_uva(issuer, dst, src):
        def f():
            issuer.use()
            st.ck(cu.cuMemcpyAsync(dst, src, n, issuer.stream), "cuMemcpyAsync")
        return f

    def sm(issuer, variant, dst, src, bpsm=None, block=None, grid=None):
        if bpsm is None:
            bpsm, block = (4, 32) if variant.startswith("bulk") else (2, 512)
        g = grid or issuer.sms * bpsm
        return lambda: st.copy_launch(issuer, variant, dst, src, n, g, block)

    def both(f, g):
        def h():
            f()
            g()
        return h

    def measure(name, work, active, bytes_per_dir):
        """active: the devices whose events time the work."""
        work()
        for d in devs:
            d.sync()
        before = snapshot(nv)
        t0 = time.time()
        ms = run_timed(work, active, args.reps)
        for d in devs:
            d.sync()
        wall = time.time() - t0
        after = snapshot(nv)
        dl = delta(before, after)
        moved = bytes_per_dir * (args.reps + 1)
        gbs = [bytes_per_dir / (m * 1e-3) / 1e9 for m in ms]
        row = {"name": name, "gbps": [round(x, 2) for x in gbs], "total_gbps": round(sum(gbs), 2),
               "moved_bytes_per_direction": moved, "counters": dl, "wall_s": round(wall, 3)}
        ratios = []
        for g in range(2):
            c = dl[g]
            if c["raw_tx"] is not None and c["data_tx"] is not None:
                ratios.append("GPU%d tx raw/data %s/%s GB (x%.3f of moved) rx raw/data %s/%s GB" % (
                    g, fmt(c["raw_tx"]), fmt(c["data_tx"]), c["raw_tx"] / moved if moved else 0,
                    fmt(c["raw_rx"]), fmt(c["data_rx"])))
        print("%-34s %s  total %.1f  | %s" % (name, " + ".join("%.1f" % x for x in gbs), sum(gbs), "; ".join(ratios)),
              flush=True)
        out["runs"].append(row)

    def fmt(b):
        return "-" if b is None else "%.2f" % (b / 1e9)

    print("== counters around copies (%d MiB, %d+1 reps; GB/s per direction)" % (args.mib, args.reps))
    measure("ce pull 0->1 peer (on GPU1)", ce_peer(d1, b1, d1, a0, d0), [d1], n)
    measure("ce push 0->1 peer (on GPU0)", ce_peer(d0, b1, d1, a0, d0), [d0], n)
    measure("ce pull 0->1 uva (on GPU1)", ce_uva(d1, b1, a0), [d1], n)
    measure("ce push 0->1 uva (on GPU0)", ce_uva(d0, b1, a0), [d0], n)
    for v in ["bulk", "warp_u8", "v4_u4", "v4_u1"] + [e for e in extra if e != "rdonly"]:
        measure("sm pull 0->1 %s" % v, sm(d1, v, b1, a0), [d1], n)
    measure("sm pull 0->1 rdonly 2x512", sm(d1, "rdonly", b1, a0), [d1], n)
    if "pfonly" in extra:
        measure("sm 0->1 L2 prefetch only", sm(d1, "pfonly", b1, a0, 4, 32), [d1], n)
    measure("sm pull 0->1 rdonly 8x256", sm(d1, "rdonly", b1, a0, 8, 256), [d1], n)
    for v in ["bulk", "warp_u8", "v4_u4"]:
        measure("sm push 0->1 %s" % v, sm(d0, v, b1, a0), [d0], n)
    print("== both ways")
    measure("both ce pull peer", both(ce_peer(d1, b1, d1, a0, d0), ce_peer(d0, b0, d0, a1, d1)), devs, n)
    measure("both ce pull uva", both(ce_uva(d1, b1, a0), ce_uva(d0, b0, a1)), devs, n)
    measure("both ce push peer", both(ce_peer(d0, b1, d1, a0, d0), ce_peer(d1, b0, d0, a1, d1)), devs, n)
    measure("both ce push uva", both(ce_uva(d0, b1, a0), ce_uva(d1, b0, a1)), devs, n)
    for v in ["bulk", "warp_u8", "bulkspan", "bulkrd", "rdonly"]:
        if v in extra or v in ("bulk", "warp_u8"):
            measure("both sm pull %s" % v, both(sm(d1, v, b1, a0), sm(d0, v, b0, a1)), devs, n)
    measure("both sm push bulk", both(sm(d0, "bulk", b1, a0), sm(d1, "bulk", b0, a1)), devs, n)

    print("== pull over grid sizes (bulk x32, warp_u8 x512)")
    for g in [33, 66, 99, 132, 198, 264, 396, 528, 792]:
        measure("sm pull bulk grid %d" % g, sm(d1, "bulk", b1, a0, 0, 32, g), [d1], n)
    for g in [66, 132, 264, 528]:
        measure("sm pull warp_u8 grid %dx512" % g, sm(d1, "warp_u8", b1, a0, 0, 512, g), [d1], n)

    if not args.skip_big:
        for d, p in ((d0, a0), (d0, b0), (d1, a1), (d1, b1)):
            d.free(p)
        big = 8 << 30
        a0, b1 = d0.alloc(big), d1.alloc(big)
        st.fill(d0, a0, big // 4, 3)
        d0.sync()
        print("== 8 GiB single launches (pull rate without the per-launch cost)")
        saved = n
        n = big
        for v in ["bulk", "warp_u8", "bulkspan"]:
            if v in extra or v in ("bulk", "warp_u8"):
                measure("sm pull 8GiB %s" % v, sm(d1, v, b1, a0), [d1], n)
        measure("ce pull 8GiB peer", ce_peer(d1, b1, d1, a0, d0), [d1], n)
        n = saved

    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
