#!/usr/bin/env python3
"""Run-to-run spread of p2pbench results files of the same command.

    scripts/spread.py RUN1.json RUN2.json ... [--top N]

For every figure all the runs have (matched by p2pbench's figure key), it
sets what separate processes show, the CV of the runs' medians, beside what
each run's rounds showed, the mean of their run_cv (stats.rounds.run_cv):
where the rounds renew the state a process keeps, the runs' medians spread about
0.55 times as much as the rounds (the median of five rounds); where they do
not, the processes spread more than that (a ratio near 1 or above). It prints the figures that spread most, a summary by size, and
how often the medians of runs 2.. lie inside the interval run 1 reports
(stats.rounds.median_lo .. median_hi). Standard library only, for the GPU
machine.
"""
import argparse
import gzip
import json
import os
import statistics
import sys

# Params that describe a figure rather than identify it (results.DescriptiveParam).
DESCRIPTIVE = {"threads", "native_atomic_supported", "memory", "cache", "ptx", "chains"}


def descriptive(k):
    return k in DESCRIPTIVE or k.endswith("_per_sample") or k.endswith("_per_thread") or k.startswith("driver_")


def key(f):
    params = ",".join(f"{k}={v}" for k, v in sorted((f.get("params") or {}).items()) if not descriptive(k))
    return "|".join(str(x) for x in (f["test"], f["engine"], f.get("direction", ""), f.get("part", ""),
                                     f["src"], f["dst"], f["size_bytes"], params))


def size_text(n):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def load(path):
    """A results file (JSON, gzip-compressed when it ends in .gz); a bad one
    ends the script with one line naming it."""
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("%s: %s: %s" % (os.path.basename(sys.argv[0]), path, e))


def measured(f):
    s = f.get("stats")
    return s if s and not f.get("error") and f.get("verify") != "failed" else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--top", type=int, default=25, help="figures to list (default 25)")
    a = ap.parse_args()
    if len(a.runs) < 2:
        sys.exit("spread.py: give at least two results files")
    figs = []
    for path in a.runs:
        figs.append({key(f): f for f in load(path).get("figures") or []})
    rows = []
    inside = total = figs_in = figs_with = 0
    for k, f0 in figs[0].items():
        stats = [measured(r[k]) if k in r else None for r in figs]
        if any(s is None for s in stats):
            continue
        meds = [s["median"] for s in stats]
        mean = statistics.mean(meds)
        if mean <= 0:
            continue
        across = statistics.stdev(meds) / mean
        rcv = [s["rounds"]["run_cv"] for s in stats if s.get("rounds")]
        within = statistics.mean(rcv) if rcv else None
        rows.append((across, within, (max(meds) - min(meds)) / mean, k, f0))
        r1 = stats[0].get("rounds")
        if r1:
            ins = [r1["median_lo"] <= m <= r1["median_hi"] for m in meds[1:]]
            total, inside = total + len(ins), inside + sum(ins)
            figs_with, figs_in = figs_with + 1, figs_in + all(ins)
    rows.sort(key=lambda r: -r[0])
    print(f"{len(rows)} figures in all {len(a.runs)} runs; across = CV of the runs' medians, "
          "rounds = mean run_cv of the runs' rounds, range = (max - min) / mean of the medians\n")
    print(f"{'across %':>9} {'rounds %':>9} {'ratio':>6} {'range %':>8}  figure")
    for across, within, rng, k, f in rows[:a.top]:
        w = f"{100 * within:9.3f}" if within is not None else f"{'n/a':>9}"
        ratio = f"{across / within:6.1f}" if within else f"{'':>6}"
        test, engine, direction, part, src, dst, size, params = k.split("|")
        print(f"{100 * across:9.3f} {w} {ratio} {100 * rng:8.2f}  {test} {direction} {part} {src}->{dst} {size_text(int(size))} {params}")
    print("\nby size (medians over figures):")
    print(f"{'size':>10} {'figures':>8} {'across %':>9} {'rounds %':>9} {'ratio':>6}")
    by = {}
    for across, within, _, k, f in rows:
        by.setdefault(f["size_bytes"], []).append((across, within))
    for size in sorted(by):
        acr = statistics.median(x for x, _ in by[size])
        ws = [w for _, w in by[size] if w]
        w = statistics.median(ws) if ws else None
        print(f"{size_text(size):>10} {len(by[size]):8d} {100 * acr:9.3f} "
              + (f"{100 * w:9.3f} {acr / w:6.1f}" if w else f"{'n/a':>9}"))
    if total:
        print(f"\nmedians of runs 2..{len(a.runs)} inside run 1's interval over rounds: {inside} of {total} ({100 * inside / total:.1f}%); "
              f"figures with all of them inside: {figs_in} of {figs_with} ({100 * figs_in / figs_with:.1f}%)")


if __name__ == "__main__":
    main()
