#!/bin/sh
# Runs every benchmark and regenerates its report under docs/ (see docs/benchmarks.md).
# Usage: sh bench/run.sh [BUILD_DIR]. Takes about 10 minutes on 2 cores; run it on an idle
# machine, since wall-clock figures depend on load.
set -e
B=${1:-build}
cd "$(dirname "$0")/.."
echo "== gpulabel: one oneshot cycle (docs/benchmarks-gpulabel.md)"
sh bench/gpulabel_oneshot.sh "$B"
echo "== gpulabel: node sync steady state (docs/benchmarks-gpulabel-sync.md)"
python3 bench/gpulabel_sync_steady.py "$B" 50
echo "== gpulabel as the device plugin (docs/benchmarks-deviceplugin.md)"
if /usr/bin/python3 -c 'import grpc, google.protobuf' 2>/dev/null; then
    /usr/bin/python3 bench/deviceplugin_bench.py "$B" 5000 3
else
    echo "skipped: the device plugin benchmark needs python3-grpcio and python3-protobuf"
fi
echo "== gpusched simulate: scheduling core (docs/benchmarks-sched.md)"
sh bench/sched_bench.sh "$B"
echo "== gpusched simulate: a pod that has to preempt, 5,000 nodes (docs/benchmarks-sched.md)"
sh bench/preempt_bench.sh "$B"
echo "== gpusched serve: end to end against the API server double (docs/benchmarks-serve.md)"
sh bench/serve_bench.sh "$B"
if [ -f build/k8s/.built ]; then
    echo "== gpusched serve against kube-scheduler on the real kube-apiserver (docs/benchmarks.md)"
    python3 bench/k8s_serve_bench.py --build "$B" --nodes 1000 --pods 5000 --paced-pods 1000 --rate 50 --qps 0
else
    echo "skipped: gpusched serve against kube-scheduler: build/k8s/ is not built (make k8s)"
fi
