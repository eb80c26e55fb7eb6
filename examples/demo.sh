#!/bin/sh
# The seed's walkthrough, offline: label a (simulated) Tesla M40 node, find the GPU nodes by
# label, and place the seed's two workloads. Usage: examples/demo.sh [BUILD_DIR]
set -e
B=${1:-build}
cd "$(dirname "$0")/.."
step() { printf '\n$ %s\n' "$*"; }

echo "gpulabel demo: the NVML library used below is the project's test double (a simulated"
echo "Tesla M40), not a GPU driver; on a real GPU node gpulabel loads libnvidia-ml.so.1."

step gpulabel --oneshot --output - --nvml-lib $B/fake-nvml/libnvidia-ml.so.1
"$B/gpulabel" --oneshot --output - --nvml-lib "$B/fake-nvml/libnvidia-ml.so.1"

step gpusched nodes -f examples/seed/
"$B/gpusched" nodes -f examples/seed/

step gpusched nodes -f examples/seed/ -l aliyun.accelerator/nvidia_name=Tesla-M40
"$B/gpusched" nodes -f examples/seed/ -l aliyun.accelerator/nvidia_name=Tesla-M40

step gpusched simulate -f examples/seed/
"$B/gpusched" simulate -f examples/seed/

step gpusched explain -f examples/seed/ not-in-gpu-node
"$B/gpusched" explain -f examples/seed/ not-in-gpu-node
