#!/usr/bin/env bash
# p2pbench under the launchers people run it under, for real and without
# GPUs (the simulator, and for mnnvl the gcc-built fake driver, stand in):
# Open MPI's mpirun, and a Slurm cluster of this one host (slurmctld and
# slurmd with munge, started here and stopped at the end). Each check fails
# when p2pbench misreads what the launcher sets (rank, size, job id, host):
#   - Open MPI: 4 ranks of `all --simulate h200x2 --dir 'results/%j/%h-%r'`
#     (oversubscribed), then `fleet` over them; a pattern without %r warns;
#     the ranks of `mnnvl` meet at the rendezvous, and a rank that dies
#     before it is named by the others;
#   - Slurm: the same with `srun -n 4`, an `sbatch` script as docs/fleets.md
#     shows it (its job id checked against sbatch's), mpirun inside an
#     allocation (Open MPI's rank, Slurm's job id), the rendezvous under srun.
# As root with apt-get (CI: `bash .ci/run` on a fresh clone), the Debian
# packages are installed when missing (openmpi-bin; slurm-wlm and munge);
# a launcher that cannot be installed or started is skipped, said in one
# line. The commands are shown as they run, as docs/fleets.md quotes them.
# Usage: scripts/launchers.sh [openmpi] [slurm]   (both by default)
# Exit status: 0 when every check of the launchers that ran passed, 1 else.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
want=${*:-openmpi slurm}
failed=0
work=$(mktemp -d /tmp/p2pbench-launchers.XXXXXX)
daemons=()
cleanup() {
	for pid in "${daemons[@]}"; do
		kill "$pid" 2>/dev/null
	done
	for pid in "${daemons[@]}"; do
		for _ in $(seq 50); do
			[ -e "/proc/$pid" ] || break
			sleep 0.1
		done
	done
	rm -rf "$work"
}
trap cleanup EXIT

say() { echo "launchers: $*"; }
check() { # check DESCRIPTION COMMAND...: one line, ok or FAIL
	if "${@:2}"; then
		echo "  ok: $1"
	else
		echo "  FAIL: $1"
		failed=1
	fi
}
show() { # show COMMAND...: print it as typed, run it in $work, keep its output in $work/out and $work/err
	echo "\$ $*"
	(cd "$work" && eval "$@") >"$work/out" 2>"$work/err"
	echo $? >"$work/status"
}
status() { cat "$work/status"; }
lines() { grep -c -- "$1" "$work/$2" || true; }
# said PHRASE FILE: how many times FILE says PHRASE, its lines joined (p2pbench
# wraps its messages to the screen's width, so a phrase may span two lines).
said() { tr '\n' ' ' <"$work/$2" | grep -o -- "$1" | wc -l; }

# install PACKAGES... COMMAND: the Debian packages, as root, when COMMAND is missing.
install() {
	local cmd=${*: -1} pkgs=("${@:1:$#-1}")
	command -v "$cmd" >/dev/null && return 0
	if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
		return 1
	fi
	if [ ! -e "$work/.apt-updated" ]; then
		apt-get update -qq >/dev/null 2>&1 && touch "$work/.apt-updated"
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >"$work/apt.log" 2>&1
	command -v "$cmd" >/dev/null
}

go build -o "$work/p2pbench" ./cmd/p2pbench || exit 1
host=$(hostname)
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
# The fake driver and NVML of the tests, for mnnvl: each rank a node of
# one GPU (device 0), fabric memory shared through files.
fake() {
	mkdir -p "$work/fake" "$work/fabric"
	[ -e "$work/fake/libcuda.so.1" ] && return 0
	echo "\$ FAKE='$FAKE'  # the fake driver and NVML of the tests, built with gcc"
	${CC:-gcc} -shared -fPIC -o "$work/fake/libcuda.so.1" cuda/testdata/fakecuda.c &&
		${CC:-gcc} -shared -fPIC -o "$work/fake/libnvidia-ml.so.1" nvml/testdata/fakenvml.c
}
# The commands name it $FAKE, as shown.
export FAKE="P2PBENCH_LIBCUDA=$work/fake/libcuda.so.1 P2PBENCH_LIBNVML=$work/fake/libnvidia-ml.so.1 FAKECUDA_FABRIC_DIR=$work/fabric"
mnnvl="./p2pbench mnnvl --imex-channel /dev/null --device 0 --tests ipc_ce_read,ipc_sm_write --size 64KiB --samples 2"
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null || echo $((20000 + RANDOM % 20000)); }

# ranks DIR NODE: the directories under DIR are NODE-0 … NODE-3, each with
# a results file whose host is NODE.
ranks() {
	[ "$(cd "$work/$1" && find . -mindepth 1 -maxdepth 1 -type d | sort | tr '\n' ' ')" = "./$2-0 ./$2-1 ./$2-2 ./$2-3 " ] || return 1
	for r in 0 1 2 3; do
		head -c 2000 "$work/$1/$2-$r/results.json" | grep -q "\"host\":\"$2\"" || return 1
	done
}
# pid FILE: the process id a daemon wrote to FILE, once it has.
pid() {
	for _ in $(seq 50); do
		[ -s "$1" ] && cat "$1" && return 0
		sleep 0.1
	done
	return 1
}
# onejob DIR: DIR holds one job's directory; its name.
onejob() { [ "$(ls "$work/$1" | wc -l)" = 1 ] && ls "$work/$1"; }

openmpi() {
	if ! install openmpi-bin mpirun; then
		say "Open MPI (Debian's openmpi-bin) could not be installed: its tests are skipped"
		return
	fi
	say "Open MPI: $(mpirun --version 2>&1 | head -1)"
	local mpirun="mpirun ${root[*]} --oversubscribe -np 4"
	show "$mpirun ./p2pbench all --simulate h200x2 --dir 'results/%j/%h-%r'"
	grep -h '^results:' "$work/err"
	check "mpirun: exit status 0" [ "$(status)" = 0 ]
	local job
	job=$(onejob results)
	check "mpirun: one job directory, named by the job's PMIx namespace ($job)" [ -n "$job" ]
	check "mpirun: ranks 0-3 of host $host, each in its own directory" ranks "results/$job" "$host"
	show "./p2pbench fleet results/$job"
	sed -n '2,6p' "$work/out"
	check "fleet: 4 nodes of one machine type, none failed, none below its peers" \
		grep -q "4 nodes of 1 machine type, 0 unreadable, 0 incomplete. Verdicts: .* 0 FAIL, 0 NOT JUDGED; 0 nodes below their peers" "$work/out"
	show "$mpirun ./p2pbench all --simulate h200x2 --dry-run --dir 'probe/%j/%h'"
	sort -u "$work/err" | grep -v '^plan'
	check "mpirun: a pattern without %r warns that Open MPI started 4 processes on this host" \
		[ "$(said 'but Open MPI started 4 processes on this host: add %r' err)" = 4 ]
	if ! fake; then
		say "no C compiler for the fake driver: the rendezvous under mpirun is skipped"
		return
	fi
	local port
	port=$(freeport)
	show "env \$FAKE MASTER_ADDR=127.0.0.1 MASTER_PORT=$port $mpirun $mnnvl -o mnnvl.json"
	grep -h 'ranks met at the rendezvous\|served rank 0\|^results:' "$work/out" "$work/err" | sort -u
	check "mpirun: the 4 ranks of mnnvl meet at the rendezvous and measure" \
		grep -q '"devices":\[{"index":0.*{"index":3' "$work/mnnvl.json"
	# A rank that dies before the rendezvous (Open MPI 4 ends the job at
	# the first non-zero exit unless told otherwise).
	port=$(freeport)
	show "env \$FAKE OMPI_MCA_orte_abort_on_non_zero_status=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port $mpirun" \
		"sh -c '[ \"\$OMPI_COMM_WORLD_RANK\" = 2 ] && exit 1; exec \"\$@\"' sh $mnnvl --rendezvous-wait 5s"
	sort -u "$work/err" | grep 'never arrived'
	check "mpirun: rank 2 died before the rendezvous; ranks 0, 1 and 3 each name it in one line" \
		[ "$(lines "mnnvl preflight: rank 2 of 4 never arrived at the rendezvous on 127.0.0.1:$port" err)" = 3 ]
}

slurm() {
	if ! install slurm-wlm munge srun || ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
		say "Slurm (Debian's slurm-wlm and munge) could not be installed: its tests are skipped"
		return
	fi
	local s=$work/slurm node
	node=$(hostname -s)
	mkdir -p "$s/state" "$s/spool/$node" "$s/munge"
	chmod 700 "$s/munge"
	export SLURM_CONF=$s/slurm.conf
	cat >"$SLURM_CONF" <<EOF
ClusterName=p2pbench
SlurmctldHost=$node
SlurmUser=$(id -un)
AuthType=auth/munge
AuthInfo=socket=$s/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$s/state
SlurmdSpoolDir=$s/spool/%n
SlurmctldPidFile=$s/slurmctld.pid
SlurmdPidFile=$s/slurmd.pid
SlurmctldLogFile=$s/slurmctld.log
SlurmdLogFile=$s/slurmd.log
SlurmctldPort=$(freeport)
SlurmdPort=$(freeport)
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=$node CPUs=4 State=UNKNOWN
PartitionName=ci Nodes=ALL Default=YES MaxTime=10 State=UP OverSubscribe=FORCE:4
EOF
	# The daemons of this test only: its own key, socket, ports and state.
	if ! { mungekey -c -k "$s/munge/munge.key" >/dev/null 2>&1 &&
		munged -f --key-file="$s/munge/munge.key" --socket="$s/munge/munge.sock" --pid-file="$s/munge/munged.pid" \
			--log-file="$s/munge/munged.log" --seed-file="$s/munge/seed" && daemons+=("$(pid "$s/munge/munged.pid")") &&
		slurmctld && daemons+=("$(pid "$s/slurmctld.pid")") && slurmd && daemons+=("$(pid "$s/slurmd.pid")"); } 2>"$work/daemons.err"; then
		say "Slurm could not be started ($(head -c 300 "$work/daemons.err" | tr '\n' ' ')): its tests are skipped"
		return
	fi
	for _ in $(seq 100); do
		[ "$(sinfo -h -o %t 2>/dev/null)" = idle ] && break
		sleep 0.3
	done
	if [ "$(sinfo -h -o %t 2>/dev/null)" != idle ]; then
		say "Slurm started but its node is not idle ($(sinfo -h -o '%t %E' 2>&1 | head -1)): its tests are skipped"
		return
	fi
	say "Slurm: $(srun --version), one node ($node, 4 CPUs as configured) started for the test"
	# srun's own variables, read by a dry run of each task: which
	# directory it would write to.
	show "srun -n 4 ./p2pbench all --simulate h200x2 --dry-run --dir 'probe/%j/%h-%r'"
	sort "$work/err" | grep 'would go'
	local job
	job=$(grep -o 'probe/[^/]*/' "$work/err" | sort -u | cut -d/ -f2)
	check "srun: one job id, Slurm's for a job of 4 tasks ($job: $(scontrol -o show job "$job" 2>/dev/null | grep -o 'NumTasks=[0-9]*'))" \
		sh -c "[ -n '$job' ] && scontrol -o show job '$job' | grep -q 'NumTasks=4 '"
	check "srun: ranks 0-3 of node $node" [ "$(grep -o "probe/$job/$node-[0-3]/results.json" "$work/err" | sort -u | wc -l)" = 4 ]
	show "srun -n 4 ./p2pbench all --simulate h200x2 --dry-run --dir 'probe/%j/%h'"
	sort -u "$work/err" | grep -v '^plan'
	check "srun: a pattern without %r warns that Slurm started 4 processes on this host" \
		[ "$(said 'but Slurm started 4 processes on this host: add %r' err)" = 4 ]
	cat >"$work/p2pbench.sbatch" <<'EOF'
#!/bin/bash
#SBATCH --job-name=p2pbench --ntasks=4 --output=slurm-%j.out
srun ./p2pbench all --simulate h200x2 --dir 'results/%j/%h-%r'
./p2pbench fleet "results/$SLURM_JOB_ID" -o "results/$SLURM_JOB_ID/fleet.txt"
EOF
	rm -rf "$work/results"
	echo "\$ cat p2pbench.sbatch"
	cat "$work/p2pbench.sbatch"
	show "sbatch --parsable --wait p2pbench.sbatch"
	job=$(head -1 "$work/out")
	echo "$job"
	grep -h '^results:' "$work/slurm-$job.out" | sort
	echo "\$ head -5 results/$job/fleet.txt"
	head -5 "$work/results/$job/fleet.txt"
	check "sbatch: exit status 0" [ "$(status)" = 0 ]
	check "sbatch: the results of job $job, ranks 0-3 of node $node" ranks "results/$job" "$node"
	check "sbatch: fleet's view of the job's 4 nodes" grep -q "4 nodes of 1 machine type" "$work/results/$job/fleet.txt"
	if command -v mpirun >/dev/null; then
		show "sbatch --parsable --wait -n 4 --wrap \"mpirun ${root[*]} ./p2pbench all --simulate h200x2 --dry-run --dir 'probe/%j/%h-%r'\""
		job=$(head -1 "$work/out")
		grep 'would go' "$work/slurm-$job.out" | sort
		check "mpirun inside Slurm job $job: Open MPI's ranks 0-3 (not Slurm's task 0), Slurm's job id" \
			[ "$(grep -c "would go to probe/$job/$node-[0-3]/results.json" "$work/slurm-$job.out")" = 4 -a \
			"$(grep -o "probe/$job/$node-[0-3]" "$work/slurm-$job.out" | sort -u | wc -l)" = 4 ]
	fi
	if fake; then
		local port
		port=$(freeport)
		show "env \$FAKE MASTER_ADDR=127.0.0.1 MASTER_PORT=$port srun -n 4 $mnnvl -o mnnvl-srun.json"
		check "srun: the 4 ranks of mnnvl meet at the rendezvous and measure" \
			grep -q '"devices":\[{"index":0.*{"index":3' "$work/mnnvl-srun.json"
	fi
}

# Each launcher's part is timed, its installation included, and the
# whole (docs/fleets.md gives CI's times).
for l in $want; do
	start=$SECONDS
	case $l in
	openmpi) openmpi ;;
	slurm) slurm ;;
	*)
		echo "launchers: unknown launcher $l (openmpi, slurm)" >&2
		exit 2
		;;
	esac
	say "$l: $((SECONDS - start)) s"
done
[ "$failed" = 0 ] && say "every check passed in $SECONDS s" || say "some checks FAILED ($SECONDS s)"
exit "$failed"
