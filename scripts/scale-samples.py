#!/usr/bin/env python3
"""A copy of a p2pbench results file with one test's samples scaled.

    scripts/scale-samples.py SRC OUT TEST FACTOR MIN_BYTES MAX_BYTES

The samples of TEST's figures of MIN_BYTES..MAX_BYTES are multiplied by
FACTOR and their stats dropped (compare reads the samples): a change of known
size, to check that compare flags it. Standard library only.
"""
import json
import sys

src, out, test = sys.argv[1], sys.argv[2], sys.argv[3]
factor, lo, hi = float(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
run = json.load(open(src))
n = 0
for f in run["figures"]:
    if f["test"] == test and lo <= f["size_bytes"] <= hi and f.get("samples"):
        f["samples"] = [x * factor for x in f["samples"]]
        f.pop("stats", None)
        n += 1
json.dump(run, open(out, "w"))
print(f"{out}: {n} figures of {test} scaled by {factor}")
