#!/usr/bin/env python3
"""Re-judge every real results file under the given roots with two builds of
p2pbench and write the table of their verdicts, before and after, as Markdown.

    scripts/rejudge.py --before OLD/p2pbench --after ./p2pbench \
        testdata/reference /work/shared/evidence > table.md

Each file is judged by `p2pbench check FILE -o TMP` of each build (the file
itself is never written); files that are not p2pbench results (another tool's
output, a manifest) are skipped, as are imports and simulated runs. A row per
run: GPUs, each build's verdict and the checks that warned or failed, and for
the link check the CRC-data rate per GPU each build judged (the later build's
over DCGM's minute, and during the run). The summary counts the verdicts by
number of GPUs, and how many GPUs' links each build failed or warned on.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile


def verdict_of(binary, path, cache):
    """The verdict of path as binary judges it, with the run's GPUs and
    whether it has health readings; None for a file that is no p2pbench
    run of real GPUs. With cache (a directory), a verdict judged before
    by the same binary file is read from there."""
    key = None
    if cache:
        st = os.stat(binary)
        key = os.path.join(cache, "%s-%d-%d" % (re.sub(r"[^A-Za-z0-9]+", "_", os.path.abspath(path)), st.st_size, int(st.st_mtime)))
        if os.path.exists(key):
            with open(key) as f:
                return json.load(f)
    got = judged(binary, path)
    if key:
        os.makedirs(cache, exist_ok=True)
        with open(key, "w") as f:
            json.dump(got, f)
    return got


def judged(binary, path):
    """The verdict of path as binary judges it (verdict_of's, uncached)."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "judged.json")
        subprocess.run([binary, "check", path, "-o", out], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=600)
        if not os.path.exists(out) or os.path.getsize(out) == 0:
            return None
        with open(out) as f:
            run = json.load(f)
    if run.get("imported") or run.get("simulated") or not run.get("verdict"):
        return None
    env = run.get("environment") or {}
    return {"gpus": len(env.get("devices") or []), "readings": bool(env.get("health_after")),
            "verdict": run["verdict"]}


BEFORE_RATE = re.compile(r"errors on .*? in ([0-9.]+) s: ([0-9.]+) a second for the GPU")
MINUTE = re.compile(r"in DCGM's minute at the run's end, ([0-9.]+) a second")
DURING = re.compile(r"([0-9.]+) a second during the run's ([0-9.]+) s")
GPU = re.compile(r"^GPU (\d+)")


def label(status):
    return "NOT JUDGED" if status == "not_judged" else status.upper()


def reasons(v, after):
    """The checks that warned or failed, each in a few words (after: with
    its first finding); the link check's CRC-data rates per GPU."""
    out = []
    for c in v["checks"]:
        if c["status"] not in ("warn", "fail"):
            continue
        if c["name"] != "links":
            first = ""
            items = [it for it in c.get("items") or [] if it["status"] == c["status"]]
            if items and after:
                first = " (" + items[0]["subject"] + ": " + clip(items[0]["message"], 110) + ")"
            out.append("%s %s%s" % (c["name"], label(c["status"]), first))
            continue
        rates = []
        for it in c.get("items") or []:
            if it["status"] not in ("warn", "fail"):
                continue
            g = GPU.match(it["subject"])
            gpu = "GPU " + g.group(1) if g else it["subject"]
            m = BEFORE_RATE.search(it["message"])
            if after:
                mm, dd = MINUTE.search(it["message"]), DURING.search(it["message"])
                if mm and dd:
                    rates.append("%s %s/s over DCGM's minute (%s/s in the run's %s s)" % (gpu, mm.group(1), dd.group(1), dd.group(2)))
                    continue
            elif m:
                rates.append("%s %s/s over the run's %s s" % (gpu, m.group(2), m.group(1)))
                continue
            rates.append("%s: %s" % (gpu, it["message"][:80]))
        out.append("links %s: CRC-data %s" % (label(c["status"]), "; ".join(rates)))
    return out


def clip(text, n):
    """text cut at a word before n characters, | escaped for a table."""
    if len(text) > n:
        text = text[:n].rsplit(" ", 1)[0] + " …"
    return text.replace("|", "/")


def summary(v, name):
    for c in v["checks"]:
        if c["name"] == name:
            return c["summary"]
    return "absent"


def check_status(v, name):
    for c in v["checks"]:
        if c["name"] == name:
            return c["status"]
    return "absent"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, help="the earlier build's p2pbench")
    ap.add_argument("--after", required=True, help="the later build's p2pbench")
    ap.add_argument("--cache", help="a directory to keep each build's verdicts in, read again by a later call")
    ap.add_argument("roots", nargs="+")
    a = ap.parse_args()
    files = []
    for root in a.roots:
        for d, _, names in os.walk(root):
            files += [os.path.join(d, n) for n in names if n.endswith(".json") or n.endswith(".json.gz")]
    rows = []
    for p in sorted(files):
        b, n = verdict_of(a.before, p, a.cache), verdict_of(a.after, p, a.cache)
        if b is None or n is None:
            continue
        rows.append((p, n["gpus"], n["readings"], b["verdict"], n["verdict"]))
        print(p, b["verdict"]["status"], n["verdict"]["status"], file=sys.stderr)

    count = collections.Counter()
    links = collections.Counter()
    latency = collections.Counter()
    for p, gpus, readings, bv, nv in rows:
        k = "two GPUs" if gpus > 1 else "one GPU"
        count[(k, "before", bv["status"])] += 1
        count[(k, "after", nv["status"])] += 1
        latency[(k, check_status(nv, "latency"))] += 1
        for when, v in (("before", bv), ("after", nv)):
            for c in v["checks"]:
                if c["name"] == "links":
                    for it in c.get("items") or []:
                        if it["status"] in ("warn", "fail"):
                            links[(when, it["status"])] += 1

    print("| runs | verdict before | verdict after | latency and atomics after |")
    print("|---|---|---|---|")
    for k in ("two GPUs", "one GPU"):
        n = sum(v for (kk, w, _), v in count.items() if kk == k and w == "before")
        fmt = lambda w: ", ".join("%d %s" % (count[(k, w, s)], label(s)) for s in ("fail", "warn", "pass", "not_judged") if count[(k, w, s)])
        lat = ", ".join("%d %s" % (latency[(k, s)], label(s)) for s in ("fail", "warn", "pass", "not_judged") if latency[(k, s)])
        print("| %d of %s | %s | %s | %s |" % (n, k, fmt("before"), fmt("after"), lat))
    print()
    print("GPUs whose link check failed or warned: before %d FAIL, %d WARN; after %d FAIL, %d WARN." % (
        links[("before", "fail")], links[("before", "warn")], links[("after", "fail")], links[("after", "warn")]))
    print()
    print("| run | GPUs | before | its link check | after | why | latency and atomics |")
    print("|---|---:|---|---|---|---|---|")
    for p, gpus, readings, bv, nv in rows:
        why = "; ".join(reasons(nv, True)) or "—"
        if not readings:
            why = "no health readings: links not judged" + ("" if why == "—" else "; " + why)
        before = [r for r in reasons(bv, False) if r.startswith("links")]
        bl = before[0] if before else "links " + label(check_status(bv, "links"))
        if nv["status"] == "not_judged":
            why = "nothing of the machine judged (latency: %s)%s" % (clip(summary(nv, "latency"), 150), "" if why == "—" else "; " + why)
        print("| %s | %d | %s | %s | %s | %s | %s |" % (p, gpus, label(bv["status"]), bl, label(nv["status"]), why, label(check_status(nv, "latency"))))


if __name__ == "__main__":
    main()
