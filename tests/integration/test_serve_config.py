"""gpusched serve --config against the API server double: a KubeSchedulerConfiguration with two
profiles (GPU bin-packing with MostAllocated, GPU spreading with LeastAllocated on
nvidia.com/gpu) schedules the pods of both schedulerNames, each with its own profile, leaves
the pods of other schedulerNames alone, and takes its leader election from the file; a bad file
is one line naming the file, the line and the field, exit 2."""
import os
import tempfile
import time

import util
from fake_apiserver import FakeApiServer
from serve_util import Serve, node, pod, wait_for, bound, events

CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: true
  leaseDuration: 4s
  renewDeadline: 3s
  retryPeriod: 500ms
  resourceName: gpu-schedulers
  resourceNamespace: kube-system
profiles:
- schedulerName: gpu-binpack
  plugins:
    score:
      disabled:
      - name: NodeResourcesBalancedAllocation
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - name: nvidia.com/gpu
          weight: 1
- schedulerName: gpu-spread
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: LeastAllocated
        resources:
        - name: nvidia.com/gpu
"""


def write(tmp, text):
    path = os.path.join(tmp, "config.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def test_two_profiles_each_pod_with_its_own():
    tmp = tempfile.mkdtemp(prefix="gpusched-config-")
    cfg = write(tmp, CONFIG)
    with FakeApiServer() as api:
        api.add(node("g1", gpus=8))
        api.add(node("g2", gpus=8))
        # g1 already runs 4 of its 8 GPUs
        api.add(pod("running", scheduler="gpu-binpack", gpus=4, node_name="g1"))
        for i in range(2):
            api.add(pod("pack%d" % i, scheduler="gpu-binpack", gpus=1))
            api.add(pod("spread%d" % i, scheduler="gpu-spread", gpus=1))
        api.add(pod("not-ours", scheduler="gpusched", gpus=1))
        api.add(pod("too-big", scheduler="gpu-spread", gpus=9))
        sv = Serve(api, ["--config", cfg, "-v", "2"], tmpdir=tmp)
        try:
            util.check_eq(sv.grep(r'schedulerName="([^"]+)"'), ("gpu-binpack",),
                          "the first profile names the scheduler")
            lease = wait_for("the lease of the file's resourceName",
                             lambda: api.get("leases", "gpu-schedulers", "kube-system"))
            util.check_eq(lease["spec"].get("leaseDurationSeconds"), 4, "leaseDurationSeconds")
            wait_for("the 4 pending pods bound", lambda: len(bound(api)) == 5)
            b = bound(api)
            # MostAllocated packs onto the busier node, LeastAllocated spreads to the idle one
            util.check_eq((b["pack0"], b["pack1"]), ("g1", "g1"), "gpu-binpack placements")
            util.check_eq((b["spread0"], b["spread1"]), ("g2", "g2"), "gpu-spread placements")
            # each pod's events are reported by its own profile, as kube-scheduler's are
            evs = wait_for("4 Scheduled events", lambda: len(events(api, "Scheduled")) == 4 and events(api, "Scheduled"))
            by = {e["regarding"]["name"]: e["reportingController"] for e in evs}
            util.check_eq(by, {"pack0": "gpu-binpack", "pack1": "gpu-binpack",
                               "spread0": "gpu-spread", "spread1": "gpu-spread"}, "reportingController")
            ev = wait_for("too-big reported", lambda: events(api, "FailedScheduling"))[0]
            util.check_eq((ev["regarding"]["name"], ev["reportingController"]), ("too-big", "gpu-spread"),
                          "FailedScheduling event")
            time.sleep(0.5)
            if "not-ours" in bound(api):
                raise AssertionError("a pod of another schedulerName was bound")
        finally:
            util.check_eq(sv.stop(), 0, "exit status")


def test_bad_config_is_one_line_exit_2():
    tmp = tempfile.mkdtemp(prefix="gpusched-config-")
    gs = util.binary("gpusched")
    bad = CONFIG.replace("        type: MostAllocated", "        type: MostAllocated\n        tpye: x")
    for text, args, msg in (
            (bad, [], "config.yaml: line 21: profiles[0].pluginConfig[0].args.scoringStrategy.tpye: "
                      "unknown field \"tpye\""),
            (CONFIG.replace("leaseDuration: 4s", "leaseDuration: soon"), [],
             "line 5: leaderElection.leaseDuration: time: invalid duration \"soon\""),
            (CONFIG, ["--profile", "gpu"], "--config cannot be used with --profile"),
            (CONFIG, ["--scheduler-name", "x"], "--config cannot be used with --scheduler-name")):
        cfg = write(tmp, text)
        p = util.run([gs, "serve", "--config", cfg, "--kubeconfig", "/nonexistent", "--metrics-addr",
                      "0"] + args)
        util.check_eq(p.returncode, 2, "exit status for %r" % msg)
        if msg not in p.stderr or len(p.stderr.strip().splitlines()) != 1:
            raise AssertionError("stderr: %r, want %r" % (p.stderr, msg))
