#!/bin/sh
# serve_bench.sh - gpusched serve at 5,000 nodes / 10,000 pods against the API server double,
# once with kube-scheduler's client limit (50 qps, burst 100) and once with the limit lifted.
# Results: docs/benchmarks-serve.md. Usage: sh bench/serve_bench.sh [BUILD_DIR]
set -e
BUILD=${1:-build}
HERE=$(dirname "$0")
echo "== limit lifted (--kube-api-qps 0)"
python3 "$HERE/serve_bench.py" --build "$BUILD" --nodes 5000 --pods 10000 --qps 0
echo "== default client limit (--kube-api-qps 50 --kube-api-burst 100)"
python3 "$HERE/serve_bench.py" --build "$BUILD" --nodes 5000 --pods 10000 --qps 50 --burst 100
