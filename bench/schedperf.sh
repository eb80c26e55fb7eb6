#!/bin/sh
# schedperf.sh - kube-scheduler's scheduler_perf workloads (v1.37.2, at their 5,000-node
# sizes) through the real kube-scheduler (build/k8s/kube-scheduler-oracle --all-at-once: in
# process, fake clientset, every pending pod created before it starts, as scheduler_perf
# without the API server) and through `gpusched simulate -o json`, side by side in one run.
# Results go to docs/benchmarks.md by hand.
#
#   sh bench/schedperf.sh [BUILD]          (after `make` and `make k8s`)
#
# bench/gen_schedperf.py writes each workload (its nodes, init pods bound, measured pods
# pending; `python3 bench/gen_schedperf.py --list`). Per workload: KRUNS runs of kube-scheduler
# (default 1: it takes minutes), RUNS of gpusched (default 5); the medians of wall-clock and CPU
# time (user + system, the steadier figure on a shared machine) of the whole process, and the
# ratios. Both must place the same number of pods and leave the same number unschedulable: a
# line says MISMATCH otherwise. The number of distinct nodes used is shown for both; it may
# differ a little, as the exact nodes do (both break score ties at random).
#
# DRA=1 runs the Dynamic Resource Allocation workloads instead (bench/gen_schedperf_dra.py:
# scheduler_perf's dra/ directory).
#
# Environment: WORKLOADS (default: all, in --list order), RUNS, KRUNS, PCT (percentageOfNodesToScore
# of both, default 0: kube-scheduler's adaptive default, what scheduler_perf runs), BENCH_OUT
# (default /tmp/gpusched-bench) for the generated inputs, NO_ORACLE=1 to time gpusched alone.
set -eu
B=${1:-build}
RUNS=${RUNS:-5}
KRUNS=${KRUNS:-1}
PCT=${PCT:-0}
OUT=${BENCH_OUT:-/tmp/gpusched-bench}
GEN=bench/gen_schedperf.py
[ "${DRA:-0}" = 1 ] && GEN=bench/gen_schedperf_dra.py
cd "$(dirname "$0")/.."
ORACLE=$B/k8s/kube-scheduler-oracle
GPUSCHED=$B/gpusched
[ -x "$GPUSCHED" ] || { echo "schedperf: $GPUSCHED missing (make)" >&2; exit 1; }
if [ "${NO_ORACLE:-0}" != 1 ] && [ ! -x "$ORACLE" ]; then
    echo "schedperf: $ORACLE missing (make k8s, or NO_ORACLE=1)" >&2
    exit 1
fi
WORKLOADS=${WORKLOADS:-$(python3 "$GEN" --list | awk '{print $1}')}
mkdir -p "$OUT"
T=$(mktemp)
trap 'rm -f "$T" "$T".*' EXIT

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# counts: "scheduled unschedulable distinct-nodes" of a simulate -o json output
counts() {
    python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
s = d.get("scheduled") or []
print(len(s), len(d.get("unschedulable") or []), len(set(x["node"] for x in s)))' "$1"
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); pct=$PCT, gpusched runs=$RUNS, kube-scheduler runs=$KRUNS"
for w in $WORKLOADS; do
    dir=$OUT/schedperf-$w
    [ -f "$dir/1-nodes.json" ] || python3 "$GEN" "$w" "$dir"
    size=$(python3 "$GEN" --list | awk -v w="$w" '$1 == w {print $2}')
    : >"$T.k"
    : >"$T.g"
    kc="-"
    i=0
    while [ "${NO_ORACLE:-0}" != 1 ] && [ $i -lt "$KRUNS" ]; do
        /usr/bin/time -f "%e %U %S" -o "$T" "$ORACLE" -f "$dir" --all-at-once \
            --percentage-of-nodes-to-score "$PCT" -o json >"$T.kout" 2>"$T.err" ||
            { echo "schedperf: $w: kube-scheduler-oracle failed: $(tail -3 "$T.err")" >&2; exit 1; }
        read -r wall user sys <"$T"
        echo "$wall $(echo "$user $sys" | awk '{print $1 + $2}')" >>"$T.k"
        kc=$(counts "$T.kout")
        echo "  $w kube-scheduler run $((i + 1)): ${wall}s wall, $(tail -1 "$T.k" | cut -d' ' -f2)s cpu; scheduled/unschedulable/nodes $kc; $(grep -o '[0-9]* pods in [0-9.]*s' "$T.err" || true)"
        i=$((i + 1))
    done
    i=0
    while [ $i -lt "$RUNS" ]; do
        /usr/bin/time -f "%e %U %S" -o "$T" "$GPUSCHED" simulate -f "$dir" -o json \
            --percentage-of-nodes-to-score "$PCT" >"$T.gout" 2>"$T.err" ||
            { echo "schedperf: $w: gpusched failed: $(tail -3 "$T.err")" >&2; exit 1; }
        read -r wall user sys <"$T"
        echo "$wall $(echo "$user $sys" | awk '{print $1 + $2}')" >>"$T.g"
        i=$((i + 1))
    done
    gc=$(counts "$T.gout")
    grep -i 'warning' "$T.err" | head -3 | sed "s/^/  $w: /" || true
    gw=$(cut -d' ' -f1 "$T.g" | median)
    gcpu=$(cut -d' ' -f2 "$T.g" | median)
    agree=""
    if [ "${NO_ORACLE:-0}" = 1 ]; then
        kw=0
        kcpu=0
    else
        kw=$(cut -d' ' -f1 "$T.k" | median)
        kcpu=$(cut -d' ' -f2 "$T.k" | median)
        # scheduled and unschedulable must agree; the number of distinct nodes is shown for
        # both (score ties are broken at random, so it may differ a little)
        [ "${kc% *}" = "${gc% *}" ] || agree=" MISMATCH"
        agree="$agree (kube-scheduler: $(echo "$kc" | awk '{printf "scheduled %d unschedulable %d on %d nodes", $1, $2, $3}'))"
    fi
    awk -v w="$w" -v s="$size" -v kw="$kw" -v kc="$kcpu" -v gw="$gw" -v gc="$gcpu" \
        -v n="$gc" -v a="$agree" -v l="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
        split(n, c, " ")
        printf "%-36s %-20s kube-scheduler %7.2fs wall %7.2fs cpu | gpusched %6.2fs wall %6.3fs cpu | ratio wall %6.1fx cpu %6.1fx | gpusched: scheduled %d unschedulable %d on %d nodes%s (load %s)\n",
            w, s, kw, kc, gw, gc, (gw > 0 ? kw / gw : 0), (gc > 0 ? kc / gc : 0), c[1], c[2], c[3], a, l }'
done
