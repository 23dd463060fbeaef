#!/usr/bin/env python3
"""p2pbench figures at 512 MiB beside nvbandwidth's from the same machine.

    scripts/vs-nvbandwidth.py NVBANDWIDTH.json RUN1.json[.gz] ... [--markdown]

For each figure nvbandwidth also measures (copy engine and SM, reads,
writes, both ways; the local copy; host copies), it prints nvbandwidth's
value (the mean of its matrix cells for that pair, or its total), each run's
median and the range of their ratios. Standard library only.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spread import load  # noqa: E402

SIZE = 512 << 20

# (p2pbench test, direction, part) -> (nvbandwidth test, which cells)
PAIRS = [
    ("ce_read", "read", "", "device_to_device_memcpy_read_ce", "pair"),
    ("ce_write", "write", "", "device_to_device_memcpy_write_ce", "pair"),
    ("ce_bidir", "read", "total", "device_to_device_bidirectional_memcpy_read_ce", "total"),
    ("ce_bidir", "write", "total", "device_to_device_bidirectional_memcpy_write_ce", "total"),
    ("sm_read", "read", "", "device_to_device_memcpy_read_sm", "pair"),
    ("sm_write", "write", "", "device_to_device_memcpy_write_sm", "pair"),
    ("sm_bidir", "read", "total", "device_to_device_bidirectional_memcpy_read_sm", "total"),
    ("sm_bidir", "write", "total", "device_to_device_bidirectional_memcpy_write_sm", "total"),
]
DEVICE = [
    ("local_copy", "device_local_copy", lambda d: (d, d)),
    ("h2d", "host_to_device_memcpy_ce", lambda d: (-1, d)),
    ("d2h", "device_to_host_memcpy_ce", lambda d: (d, -1)),
]




def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def nvb_pair(tc, src, dst, which):
    m = tc["bandwidth_matrix"]
    if which == "pair":
        return num(m[src][dst]) if src < len(m) and dst < len(m[src]) else None
    # Both-ways tests: the last two rows are the totals, by the row of the
    # first GPU.
    rows = m[-2:]
    return num(rows[src][dst]) if src < len(rows) else None


def median_of(run, test, direction, part, src, dst):
    for f in run["figures"]:
        if (f["test"] == test and f["size_bytes"] == SIZE and f["src"] == src and f["dst"] == dst
                and f.get("direction", "") in (direction, "") and f.get("part", "") == part and f.get("stats")):
            return f["stats"]["median"]
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("nvbandwidth")
    ap.add_argument("runs", nargs="+")
    a = ap.parse_args()
    try:
        nvb = {t["name"]: t for t in load(a.nvbandwidth)["nvbandwidth"]["testcases"] if t.get("status") == "Passed"}
    except (KeyError, TypeError):
        sys.exit("vs-nvbandwidth.py: %s is not nvbandwidth's JSON (-j)" % a.nvbandwidth)
    runs = [load(p) for p in a.runs]
    if any("figures" not in r for r in runs):
        sys.exit("vs-nvbandwidth.py: give p2pbench results files after nvbandwidth's JSON")
    print("| figure | pair | nvbandwidth | p2pbench, runs 1–%d | ratio |" % len(runs))
    print("|---|---|---:|---|---|")
    rows = []
    for test, direction, part, name, which in PAIRS:
        if name not in nvb:
            continue
        for src, dst in ((0, 1), (1, 0)):
            rows.append((f"{test} {direction} {part}".strip(), src, dst, nvb_pair(nvb[name], src, dst, which),
                         [median_of(r, test, direction, part, src, dst) for r in runs]))
    for test, name, where in DEVICE:
        if name not in nvb:
            continue
        m = nvb[name]["bandwidth_matrix"]
        for d in range(len(m[0])):
            src, dst = where(d)
            rows.append((test, src, dst, num(m[0][d]), [median_of(r, test, "", "", src, dst) or median_of(r, test, test, "", src, dst) for r in runs]))
    for label, src, dst, ref, meds in rows:
        if ref is None or any(m is None for m in meds):
            continue
        ratios = [m / ref for m in meds]
        print(f"| {label} | {src}→{dst} | {ref:.1f} | {', '.join(f'{m:.1f}' for m in meds)} | {min(ratios):.4f}–{max(ratios):.4f} |")


if __name__ == "__main__":
    sys.exit(main())
