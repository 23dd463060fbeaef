#!/usr/bin/env python3
"""Why is a copy-engine pull across processes slower both ways? A probe for a 2-GPU machine.

In one process, a cuMemcpyPeerAsync pull (issued on the destination's stream)
puts no read requests on the NVLinks (probe_link.py: the wire carries the same
bytes as a push), and both directions at once reach ~783 GB/s. Across
processes (CUDA IPC, each process owning one GPU) the same pull both ways
reaches ~745. This probe runs two worker processes, one per GPU, that export
their buffers to each other through IPC handles (passed over pipes to this
coordinator), and times copy-engine copies both ways with NVML's NVLink
counters around them, in three set-ups:

  own      each worker opens the peer's handle in its own context (what
           p2pbench ipc and every one-GPU-per-process job does)
  peerctx  each worker also retains the peer GPU's primary context, opens the
           peer's handle there (the memory is then local to that context),
           enables peer access both ways and copies between the two contexts:
           the driver may then drive the copy the way it does in one process

Only reads counters: it never resets, freezes or reconfigures them.

    python3 tools/kernel-selftest/probe_ipc.py --json out.json
"""

import argparse
import ctypes
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


# ---------------------------------------------------------------- worker

class Handle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_ubyte * 64)]


def worker(g, nbytes):
    import selftest as st
    st.load_cuda()
    cu = st.cu
    u64, vp = ctypes.c_uint64, ctypes.c_void_p
    for name, args in {
        "cuIpcGetMemHandle": [ctypes.POINTER(Handle), u64],
        "cuIpcOpenMemHandle_v2": [ctypes.POINTER(u64), Handle, ctypes.c_uint],
        "cuIpcCloseMemHandle": [u64],
        "cuMemcpyAsync": [u64, u64, ctypes.c_size_t, vp],
    }.items():
        f = getattr(cu, name)
        f.argtypes, f.restype = args, ctypes.c_int
    st.ck(cu.cuInit(0), "cuInit")
    me = st.Device(g)
    peer_dev = None
    src, dst = me.alloc(nbytes), me.alloc(nbytes)
    me.memset32(src, 0x1000 + g, nbytes // 4)
    me.memset32(dst, 0, nbytes // 4)

    def export(p):
        h = Handle()
        me.use()
        st.ck(cu.cuIpcGetMemHandle(ctypes.byref(h), p), "cuIpcGetMemHandle")
        return bytes(h.reserved).hex()

    def reply(**kw):
        sys.stdout.write(json.dumps(kw) + "\n")
        sys.stdout.flush()

    reply(src=export(src), dst=export(dst))
    mapped = {}  # name -> (pointer, context it was opened in)
    start, end = me.event(), me.event()
    work = None
    for line in sys.stdin:
        m = json.loads(line)
        op = m["op"]
        try:
            if op == "open":
                ctx = me
                if m["mode"] == "peerctx":
                    if peer_dev is None:
                        peer_dev = st.Device(1 - g)
                        for a, b in ((me, peer_dev), (peer_dev, me)):
                            a.use()
                            res = cu.cuCtxEnablePeerAccess(b.ctx, 0)
                            if res not in (0, 704):
                                st.ck(res, "cuCtxEnablePeerAccess")
                    ctx = peer_dev
                h = Handle()
                h.reserved = (ctypes.c_ubyte * 64)(*bytes.fromhex(m["handle"]))
                p = u64()
                ctx.use()
                st.ck(cu.cuIpcOpenMemHandle_v2(ctypes.byref(p), h, 1), "cuIpcOpenMemHandle_v2")
                mapped[m["name"]] = (p.value, ctx)
                reply(ok=True)
            elif op == "prepare":
                # direction: pull = peer's src -> my dst; push = my src -> peer's dst
                if m["dir"] == "pull":
                    (sp, sctx), (dp, dctx) = mapped["src"], (dst, me)
                else:
                    (sp, sctx), (dp, dctx) = (src, me), mapped["dst"]
                how = m["how"]

                def work(sp=sp, sctx=sctx, dp=dp, dctx=dctx, how=how):
                    me.use()
                    if how == "peer":
                        st.ck(cu.cuMemcpyPeerAsync(dp, dctx.ctx, sp, sctx.ctx, nbytes, me.stream), "cuMemcpyPeerAsync")
                    else:
                        st.ck(cu.cuMemcpyAsync(dp, sp, nbytes, me.stream), "cuMemcpyAsync")
                work()
                me.sync()
                reply(ok=True)
            elif op == "go":
                reps = m["reps"]
                me.record(start)
                for _ in range(reps):
                    work()
                me.record(end)
                ms = st.elapsed_ms(start, end)
                reply(ms=ms)
            elif op == "check":
                # The words that arrived: the peer's pattern (pull) in my dst.
                words = st.u32s(me.read(dst, 1 << 20)) + st.u32s(me.read(dst + nbytes - (1 << 20), 1 << 20))
                want = 0x1000 + (1 - g)
                bad = sum(1 for w in words if w != want)
                me.memset32(dst, 0, nbytes // 4)
                reply(bad=bad, checked=len(words))
            elif op == "close":
                for name, (p, ctx) in mapped.items():
                    ctx.use()
                    st.ck(cu.cuIpcCloseMemHandle(p), "cuIpcCloseMemHandle")
                mapped.clear()
                reply(ok=True)
            elif op == "quit":
                me.free(src)
                me.free(dst)
                reply(ok=True)
                return 0
        except st.CudaError as e:
            reply(error=str(e))
    return 0


# ---------------------------------------------------------------- coordinator

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", type=int)
    ap.add_argument("--mib", type=int, default=2048)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--json")
    args = ap.parse_args()
    nbytes = args.mib << 20
    if args.worker is not None:
        return worker(args.worker, nbytes)

    import probe_link as pl
    nv = pl.NVML()
    procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", str(g), "--mib", str(args.mib)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for g in range(2)]

    def send(g, **kw):
        procs[g].stdin.write(json.dumps(kw) + "\n")
        procs[g].stdin.flush()

    def recv(g):
        line = procs[g].stdout.readline()
        if not line:
            raise RuntimeError("worker %d died" % g)
        m = json.loads(line)
        if "error" in m:
            raise RuntimeError("worker %d: %s" % (g, m["error"]))
        return m

    handles = [recv(g) for g in range(2)]
    out = {"mib": args.mib, "reps": args.reps, "runs": []}

    def fmt(b):
        return "-" if b is None else "%.2f" % (b / 1e9)

    def scenario(name, mode, how, direction, active):
        for g in range(2):
            for buf in ("src", "dst"):
                send(g, op="open", mode=mode, name=buf, handle=handles[1 - g][buf])
                recv(g)
        for g in active:
            send(g, op="prepare", dir=direction, how=how)
        for g in active:
            recv(g)
        before = pl.snapshot(nv)
        for g in active:
            send(g, op="go", reps=args.reps)
        ms = {g: recv(g)["ms"] for g in active}
        after = pl.snapshot(nv)
        dl = pl.delta(before, after)
        checks = {}
        if direction == "pull":
            for g in active:
                send(g, op="check")
                checks[g] = recv(g)
        for g in range(2):
            send(g, op="close")
            recv(g)
        moved = nbytes * args.reps
        gbs = {g: moved / (ms[g] * 1e-3) / 1e9 for g in active}
        parts = []
        for g in range(2):
            c = dl[g]
            if c["raw_tx"] is not None:
                parts.append("GPU%d tx raw/data %s/%s GB (x%.3f of moved) rx raw/data %s/%s GB" % (
                    g, fmt(c["raw_tx"]), fmt(c["data_tx"]), c["raw_tx"] / moved, fmt(c["raw_rx"]), fmt(c["data_rx"])))
        bad = sum(c["bad"] for c in checks.values())
        print("%-38s %s  total %.1f  data %s | %s" % (
            name, " + ".join("%.1f" % gbs[g] for g in active), sum(gbs.values()),
            "ok" if not bad else "%d BAD WORDS" % bad if checks else "-", "; ".join(parts)), flush=True)
        out["runs"].append({"name": name, "mode": mode, "how": how, "direction": direction, "active": active,
                            "gbps": {str(g): round(v, 2) for g, v in gbs.items()}, "total_gbps": round(sum(gbs.values()), 2),
                            "moved_bytes_per_direction": moved, "counters": dl, "checks": checks})

    print("== CE copies across processes (%d MiB, %d reps each; GB/s per direction)" % (args.mib, args.reps))
    try:
        for rnd in range(2):
            for mode in ("own", "peerctx"):
                hows = ("uva",) if mode == "own" else ("uva", "peer")
                for how in hows:
                    tag = "%s/%s" % (mode, how)
                    scenario("pull 0->1 %s" % tag, mode, how, "pull", [1])
                    scenario("both pull %s" % tag, mode, how, "pull", [0, 1])
                    scenario("both push %s" % tag, mode, how, "push", [0, 1])
    finally:
        for g in range(2):
            try:
                send(g, op="quit")
                recv(g)
            except Exception:
                pass
            procs[g].wait(timeout=30)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
