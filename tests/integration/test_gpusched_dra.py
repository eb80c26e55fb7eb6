"""gpusched's answers on Dynamic Resource Allocation beyond simulate's: --kube-version's
warnings for fields an older release drops, explain's per-node reasons, nodes/report/capacity
with GPUs from ResourceSlices, and examples/dra/."""
import os

import util

SCEN = os.path.join(util.SRC, "tests", "scenarios")
VERSIONED = os.path.join(SCEN, "dra-kube-version-1.37", "cluster.yaml")


def gpusched(*args, input=None):
    p = util.run([util.binary("gpusched")] + list(args), input=input)
    if p.returncode not in (0, 1, 2):
        raise AssertionError("gpusched %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return p


def warnings(p):
    return [l for l in p.stderr.splitlines() if l.startswith("gpusched: warning: ")]


def test_kube_version_warns_of_dropped_fields():
    p = gpusched("simulate", "-f", VERSIONED, "--kube-version", "1.35", "-o", "json")
    util.check_eq(p.returncode, 0, "exit")
    w = warnings(p)
    want = [
        "gpusched: warning: DeviceTaintRule gpu-2-maintenance: DRADeviceTaintRules is off by "
        "default in kube-scheduler 1.35 (resource.k8s.io/v1 has no DeviceTaintRule): not read",
        "gpusched: warning: DeviceClass gpu.nvidia.com: spec.extendedResourceName "
        "(DRAExtendedResource) is off by default in kube-scheduler 1.35 (its API server drops "
        "the field): not read",
        "gpusched: warning: ResourceSlice gpu-1-gpu: taints (DRADeviceTaints) is off by default "
        "in kube-scheduler 1.35 (its API server drops the field): not read",
    ]
    util.check_eq(w, want, "1.35 warnings")
    p = gpusched("simulate", "-f", VERSIONED, "--kube-version", "1.36", "-o", "json")
    util.check_eq(len(warnings(p)), 1, "1.36 warnings: %r" % p.stderr)
    p = gpusched("simulate", "-f", VERSIONED, "-o", "json")
    util.check_eq(warnings(p), [], "1.37 warnings")


def test_kube_version_134_pools_and_counters():
    doc = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s1}
spec:
  driver: gpu.nvidia.com
  nodeName: n1
  pool: {name: p1, generation: 1, resourceSliceCount: 2}
  devices: [{name: gpu-0}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: default}
spec:
  devices:
    requests:
    - name: r
      exactly:
        deviceClassName: gpu
        capacity: {requests: {memory: 1Gi}}
"""
    p = gpusched("simulate", "-f", "-", "--kube-version", "1.34", input=doc)
    w = warnings(p)
    util.check_eq(w, [
        "gpusched: warning: ResourceSlice s1: pool gpu.nvidia.com/p1 is incomplete "
        "(resourceSliceCount): kube-scheduler 1.34 treats such a pool otherwise than 1.35 (not "
        "modelled): the answer is 1.35's",
        "gpusched: warning: ResourceClaim default/c: capacity (DRAConsumableCapacity) is off by "
        "default in kube-scheduler 1.34 (its API server drops the field): read as written, so "
        "the answer may differ from 1.34's",
    ], "1.34 warnings")
    p = gpusched("simulate", "-f", "-", "--kube-version", "1.35", input=doc)
    util.check_eq(len(warnings(p)), 1, "1.35: the capacity request only: %r" % p.stderr)
