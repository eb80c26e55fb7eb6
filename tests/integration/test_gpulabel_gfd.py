"""GFD's remaining labels and settings: nvidia.com/gpu.present and gpu.mode from a sysfs
fixture (--sysfs-root), gpu.present while NVML is down, GFD's environment names, and
--fail-on-init-error. Runs the real build/gpulabel against the API server double."""
import os
import shutil
import subprocess
import tempfile

import util
from fake_apiserver import FakeApiServer

SYSFS = os.path.join(util.SRC, "tests", "fixtures", "sysfs")
SYSFS_GRAPHICS = os.path.join(util.SRC, "tests", "fixtures", "sysfs-graphics")
A100 = 'device name="NVIDIA A100-SXM4-40GB" memory=42949672960 cc=8.0\n'
OWNED = "gpulabel.io/owned-labels"


class Node:
    def __init__(self, labels=None):
        self.dir = tempfile.mkdtemp(prefix="gpulabel-gfd-")
        self.api = FakeApiServer(tls=True, tokens=["tok"]).start()
        self.kubeconfig = self.api.write_kubeconfig(os.path.join(self.dir, "kubeconfig"), token="tok")
        self.api.add({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": "gpu-1", "labels": dict(labels or {})}})
        self.nvml = os.path.join(self.dir, "nvml.conf")

    def run(self, config, *args, env=None):
        with open(self.nvml, "w") as f:
            f.write("driver=550.107.02\ncuda=12040\n" + config)
        e = {k: v for k, v in os.environ.items()
             if not k.startswith(("GPULABEL_", "GFD_")) and k not in ("NODE_NAME", "KUBECONFIG")}
        e["FAKE_NVML_CONFIG"] = self.nvml
        e.update(env or {})
        argv = [util.binary("gpulabel"), "--nvml-lib", util.fake_nvml(), "--kubeconfig",
                self.kubeconfig, "--node-name", "gpu-1"] + list(args)
        return subprocess.run(argv, env=e, capture_output=True, text=True, timeout=60)

    def labels(self):
        return self.api.get("nodes", "gpu-1")["metadata"].get("labels", {})

    def owned(self):
        return self.api.get("nodes", "gpu-1")["metadata"].get("annotations", {}).get(OWNED, "")

    def close(self):
        self.api.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def with_node(fn, **kw):
    n = Node(**kw)
    try:
        fn(n)
    finally:
        n.close()


def test_present_and_compute_mode_from_sysfs():
    def body(n):
        p = n.run(A100, "--oneshot", "--schema", "gfd", "--sysfs-root", SYSFS)
        util.check_eq(p.returncode, 0, "exit status: " + p.stderr)
        util.check_eq(n.labels().get("nvidia.com/gpu.present"), "true", "gpu.present")
        util.check_eq(n.labels().get("nvidia.com/gpu.mode"), "compute", "gpu.mode")
    with_node(body)


def test_graphics_mode():
    def body(n):
        p = n.run(A100, "--oneshot", "--schema", "gfd", "--sysfs-root", SYSFS_GRAPHICS)
        util.check_eq(p.returncode, 0, "exit status: " + p.stderr)
        util.check_eq(n.labels().get("nvidia.com/gpu.mode"), "graphics", "gpu.mode")
    with_node(body)


def test_mode_unknown_without_sysfs():
    def body(n):
        p = n.run(A100, "--oneshot", "--schema", "gfd", "--sysfs-root", n.dir)
        util.check_eq(p.returncode, 0, "exit status: " + p.stderr)
        util.check_eq(n.labels().get("nvidia.com/gpu.mode"), "unknown", "gpu.mode")
        util.check_eq(n.labels().get("nvidia.com/gpu.present"), "true", "gpu.present from NVML")
    with_node(body)


def test_present_while_nvml_is_down_then_full_set():
    def body(n):
        p = n.run("init=DRIVER_NOT_LOADED\n" + A100, "--oneshot", "--schema", "gfd",
                  "--sysfs-root", SYSFS)
        util.check_eq(p.returncode, 1, "exit status with NVML down")
        if "Driver Not Loaded" not in p.stderr:
            raise AssertionError("no NVML error line: %r" % p.stderr)
        util.check_eq(n.labels(), {"nvidia.com/gpu.present": "true"}, "labels with NVML down")
        util.check_eq(n.owned(), "nvidia.com/gpu.present", "owned")
        p = n.run(A100, "--oneshot", "--schema", "gfd", "--sysfs-root", SYSFS)
        util.check_eq(p.returncode, 0, "exit status with NVML up: " + p.stderr)
        util.check_eq(n.labels().get("nvidia.com/gpu.product"), "NVIDIA-A100-SXM4-40GB", "product")
        util.check_eq(n.labels().get("nvidia.com/gpu.present"), "true", "present")
        # NVML down again: gpu.present set, the rest kept (nothing is removed)
        before = n.labels()
        p = n.run("init=DRIVER_NOT_LOADED\n", "--oneshot", "--schema", "gfd", "--sysfs-root", SYSFS)
        util.check_eq(p.returncode, 1, "exit status")
        util.check_eq(n.labels(), before, "labels kept while NVML is down")
    with_node(body)


def test_no_present_without_nvidia_pci_devices():
    def body(n):
        p = n.run("init=DRIVER_NOT_LOADED\n", "--oneshot", "--schema", "gfd", "--sysfs-root", n.dir)
        util.check_eq(p.returncode, 1, "exit status")
        util.check_eq(n.labels(), {}, "labels")
    with_node(body)


def test_fail_on_init_error_false():
    def body(n):
        p = n.run("init=DRIVER_NOT_LOADED\n", "--oneshot", "--schema", "gfd", "--sysfs-root", SYSFS,
                  "--fail-on-init-error=false")
        util.check_eq(p.returncode, 0, "exit status: " + p.stderr)
        p = n.run("init=DRIVER_NOT_LOADED\n", "--oneshot", "--schema", "gfd", "--sysfs-root", SYSFS,
                  env={"GFD_FAIL_ON_INIT_ERROR": "false"})
        util.check_eq(p.returncode, 0, "exit status with GFD_FAIL_ON_INIT_ERROR=false: " + p.stderr)
    with_node(body)


def test_foreign_present_stays_theirs():
    def body(n):
        p = n.run(A100, "--oneshot", "--schema", "gfd", "--sysfs-root", SYSFS)
        util.check_eq(p.returncode, 0, "exit status: " + p.stderr)
        if "nvidia.com/gpu.present" in n.owned().split(","):
            raise AssertionError("claimed the GPU Operator's gpu.present: %r" % n.owned())
        p = n.run(A100, "--oneshot", "--schema", "ack", "--sysfs-root", SYSFS)
        util.check_eq(n.labels().get("nvidia.com/gpu.present"), "true", "still there after gfd off")
    with_node(body, labels={"nvidia.com/gpu.present": "true"})


def test_gfd_environment_names():
    def body(n):
        # GFD_ONESHOT and GFD_OUTPUT_FILE as GFD's DaemonSet sets them; no --oneshot flag
        out = os.path.join(n.dir, "gfd")
        p = n.run(A100, "--schema", "gfd", "--sysfs-root", SYSFS,
                  env={"GFD_ONESHOT": "true", "GFD_OUTPUT_FILE": out, "GFD_NO_TIMESTAMP": "true",
                       "GFD_SLEEP_INTERVAL": "30s", "GFD_MIG_STRATEGY": "none"})
        util.check_eq(p.returncode, 0, "exit status: " + p.stderr)
        with open(out) as f:
            text = f.read()
        if "nvidia.com/gpu.product=NVIDIA-A100-SXM4-40GB\n" not in text:
            raise AssertionError("output file: %r" % text)
        p = n.run(A100, "--oneshot", env={"GFD_MIG_STRATEGY": "bogus"})
        util.check_eq(p.returncode, 2, "exit status for a bad GFD_MIG_STRATEGY")
        util.check_eq(p.stderr.strip(), "gpulabel: GFD_MIG_STRATEGY: invalid MIG strategy 'bogus' "
                      "(want none, single or mixed)", "stderr")
        # GPULABEL_* wins over GFD_*
        p = n.run(A100, "--oneshot", "-o", "-", "--no-sync",
                  env={"GFD_OUTPUT_FILE": out + ".x", "GPULABEL_OUTPUT": "-"})
        util.check_eq(os.path.exists(out + ".x"), False, "GFD_OUTPUT_FILE overridden")
    with_node(body)


MIG = ('device name="NVIDIA A100-SXM4-40GB" memory=42949672960 cc=8.0 mig=enabled '
       'mig_devices=%s repeat=2\n')


def oneshot_labels(n, config, *args):
    p = n.run(config, "--oneshot", "--no-sync", "-o", "-", "--schema", "gfd", *args)
    util.check_eq(p.returncode, 0, "exit status: " + p.stderr)
    return dict(l.split("=", 1) for l in p.stdout.splitlines())


def test_mig_single_labels():
    def body(n):
        l = oneshot_labels(n, MIG % "1g.5gb+1g.5gb+1g.5gb", "--mig-strategy", "single")
        want = {"nvidia.com/mig.strategy": "single", "nvidia.com/gpu.count": "6",
                "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb",
                "nvidia.com/gpu.memory": "4864", "nvidia.com/gpu.multiprocessors": "14",
                "nvidia.com/gpu.slices.gi": "1", "nvidia.com/gpu.slices.ci": "1",
                "nvidia.com/gpu.engines.copy": "1", "nvidia.com/gpu.engines.decoder": "0",
                "nvidia.com/gpu.replicas": "1", "nvidia.com/mig.capable": "true"}
        util.check_eq({k: l.get(k) for k in want}, want, "single labels")
        # two profiles cannot be single: GFD's INVALID
        l = oneshot_labels(n, MIG % "1g.5gb+3g.20gb", "--mig-strategy", "single")
        util.check_eq({k: l.get(k) for k in ("nvidia.com/gpu.product", "nvidia.com/gpu.count",
                                              "nvidia.com/gpu.memory", "nvidia.com/gpu.replicas")},
                      {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-INVALID",
                       "nvidia.com/gpu.count": "0", "nvidia.com/gpu.memory": "0",
                       "nvidia.com/gpu.replicas": "0"}, "invalid single")
    with_node(body)


def test_mig_mixed_labels():
    def body(n):
        l = oneshot_labels(n, MIG % "1g.5gb+2c.3g.20gb", "--mig-strategy", "mixed")
        util.check_eq(l.get("nvidia.com/mig.strategy"), "mixed", "strategy")
        util.check_eq(l.get("nvidia.com/gpu.product"), "NVIDIA-A100-SXM4-40GB", "full GPU product")
        util.check_eq(l.get("nvidia.com/mig-1g.5gb.count"), "2", "1g.5gb count")
        util.check_eq(l.get("nvidia.com/mig-1g.5gb.product"), "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "product")
        util.check_eq(l.get("nvidia.com/mig-2c.3g.20gb.slices.ci"), "2", "compute slices")
        util.check_eq(l.get("nvidia.com/mig-2c.3g.20gb.slices.gi"), "3", "GPU instance slices")
        util.check_eq(l.get("nvidia.com/mig-2c.3g.20gb.memory"), "20224", "memory")
        # strategy none: no MIG labels at all
        l = oneshot_labels(n, MIG % "1g.5gb", "--mig-strategy", "none")
        util.check_eq(sorted(k for k in l if "mig-" in k or k == "nvidia.com/mig.strategy"), [],
                      "MIG labels with none")
    with_node(body)
