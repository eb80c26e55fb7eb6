#!/bin/sh
# The seed's walkthrough, offline: label a (simulated) Tesla M40 node, find the GPU nodes by
# label, and place the seed's two workloads; then its DRA edition (examples/dra/): the GPUs as
# ResourceSlice devices, the notebook by nvidia.com/gpu and by claim, explain's device detail.
# Usage: examples/demo.sh [BUILD_DIR]
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

echo
echo "The same walkthrough on Dynamic Resource Allocation (examples/dra/): the M40 workers run"
echo "NVIDIA's DRA driver, each GPU a device of a ResourceSlice; one notebook asks nvidia.com/gpu: 1"
echo "(a DeviceClass's extendedResourceName serves it), the other a claim for a Tesla-M40."

step gpusched nodes -f examples/dra/ -l aliyun.accelerator/nvidia_name=Tesla-M40
"$B/gpusched" nodes -f examples/dra/ -l aliyun.accelerator/nvidia_name=Tesla-M40

step gpusched simulate -f examples/dra/ -o json
"$B/gpusched" simulate -f examples/dra/ -o json

step gpusched explain -f examples/dra/ -f examples/dra/extra/ one-more-gpu
"$B/gpusched" explain -f examples/dra/ -f examples/dra/extra/ one-more-gpu
