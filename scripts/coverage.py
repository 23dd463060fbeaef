#!/usr/bin/env python3
"""How often one run's interval holds another run's median, by family.

    scripts/coverage.py RUN1.json[.gz] RUN2.json[.gz] ... [--top N]

For every ordered pair of runs (i, j), i != j, and every figure both have
with a round interval (stats.rounds.median_lo .. median_hi), it counts
whether run j's median lies inside run i's interval: issue 25's measure of
whether a run's rounds carry what differs between processes (95% asked).
It prints the overall share and the families (test, engine, size band)
that miss most. Standard library only, for the GPU machine.
"""
import argparse
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spread import key, load  # noqa: E402




def intervals(run):
    out = {}
    for f in run.get("figures") or []:
        st = f.get("stats") or {}
        rs = st.get("rounds") or {}
        if "median_lo" not in rs or st.get("median") is None:
            continue
        out[key(f)] = (st["median"], rs["median_lo"], rs["median_hi"], f)
    return out


def band(size):
    if size < 64 << 10:
        return "<64KiB"
    if size < 64 << 20:
        return "64KiB-64MiB"
    return ">=64MiB"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--top", type=int, default=12)
    a = ap.parse_args()
    if len(a.runs) < 2:
        sys.exit("coverage.py: give two runs or more")
    runs = [intervals(load(p)) for p in a.runs]
    fam = collections.defaultdict(lambda: [0, 0])
    for i, ri in enumerate(runs):
        for j, rj in enumerate(runs):
            if i == j:
                continue
            for k, (_, lo, hi, f) in ri.items():
                if k not in rj:
                    continue
                name = "%s|%s|%s" % (f["test"], f["engine"].split(":")[0], band(f["size_bytes"]))
                fam[name][1] += 1
                if lo <= rj[k][0] <= hi:
                    fam[name][0] += 1
    total = sum(n for _, n in fam.values())
    inside = sum(k for k, _ in fam.values())
    if total == 0:
        sys.exit("coverage.py: no figure with a round interval in two runs")
    print("inside: %.1f%% of %d (figure, ordered pair of runs)" % (100.0 * inside / total, total))
    worst = sorted(fam.items(), key=lambda kv: kv[1][0] - kv[1][1])[: a.top]
    for name, (k, n) in worst:
        if k < n:
            print("  %5.1f%%  %4d missed of %4d  %s" % (100.0 * k / n, n - k, n, name))


if __name__ == "__main__":
    main()
