"""gpulabel against the real kube-apiserver (a local control plane, k8s_util), authenticated
with a token of the DaemonSet's own ServiceAccount and authorized by deploy/gpulabel/rbac.yaml
as it ships: first labelling, no write when nothing changed, stale labels removed, foreign
labels untouched (`--oneshot` and the daemon), and a ServiceAccount without the ClusterRole
refused with one line naming the 403. Writes are counted in the API server's audit log."""
import json
import os
import signal
import subprocess
import time

import k8s_util
import util

NS, SA = "kube-system", "gpulabel"  # deploy/gpulabel/
M40 = 'device name="Tesla M40" memory=12802064384 cc=5.2\n'
M40_LABELS = {"aliyun.accelerator/nvidia_count": "1",
              "aliyun.accelerator/nvidia_mem": "12209MiB",
              "aliyun.accelerator/nvidia_name": "Tesla-M40"}
A100X2 = 'device name="NVIDIA A100-SXM4-40GB" memory=42949672960 cc=8.0 repeat=2\n'
A100X2_LABELS = {"aliyun.accelerator/nvidia_count": "2",
                 "aliyun.accelerator/nvidia_mem": "40960MiB",
                 "aliyun.accelerator/nvidia_name": "NVIDIA-A100-SXM4-40GB"}
OWNED = "gpulabel.io/owned-labels"
FOREIGN = {"team.example.com/owner": "ml", "nvidia.com/gpu.present": "true"}

_tmp = k8s_util.tmpdir("k8s-gpulabel-tmp-")
_setup = {}


def setup():
    """The cluster with deploy/gpulabel/rbac.yaml applied and a kubeconfig of its
    ServiceAccount's token."""
    if not _setup:
        c = k8s_util.cluster("gpulabel")
        c.apply_file("deploy/gpulabel/rbac.yaml")
        _setup["c"] = c
        _setup["kc"] = c.sa_kubeconfig(NS, SA)
    return _setup["c"], _setup["kc"]


class Node:
    """One Node of the cluster for one test, and the fake NVML config gpulabel sees on it."""

    def __init__(self, name, gpus=M40):
        self.c, self.kubeconfig = setup()
        self.name = name
        n = k8s_util.gpu_node(name, labels=FOREIGN)
        self.c.create_node(n)
        self.nvml_config = os.path.join(_tmp, name + ".nvml")
        self.set_gpus(gpus)

    def set_gpus(self, text):
        tmp = self.nvml_config + ".tmp"
        with open(tmp, "w") as f:
            f.write("driver=550.107.02\ncuda=12040\n" + text)
        os.rename(tmp, self.nvml_config)

    def argv(self, *extra, kubeconfig=None):
        return [util.binary("gpulabel"), "--kubeconfig", kubeconfig or self.kubeconfig,
                "--node-name", self.name, "--nvml-lib", util.fake_nvml()] + list(extra)

    def env(self):
        e = {k: v for k, v in os.environ.items()
             if not k.startswith("GPULABEL_") and k not in ("NODE_NAME", "KUBECONFIG")}
        e["FAKE_NVML_CONFIG"] = self.nvml_config
        return e

    def oneshot(self, kubeconfig=None):
        return subprocess.run(self.argv("--oneshot", kubeconfig=kubeconfig), env=self.env(),
                              capture_output=True, text=True, timeout=60)

    def get(self):
        return self.c.get("/api/v1/nodes/" + self.name)

    def labels(self):
        return self.get()["metadata"].get("labels") or {}

    def requests(self, verb=None):
        """The requests gpulabel's ServiceAccount made for this Node, from the audit log."""
        return [e for e in self.c.audit(user=k8s_util.sa_user(NS, SA), resource="nodes", verb=verb)
                if e["objectRef"].get("name") == self.name]

    def patches(self):
        return [e for e in self.requests() if e["verb"] != "get"]


def base_labels(name):
    return {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}


def check_oneshot(n, what):
    p = n.oneshot()
    util.check_eq(p.returncode, 0, "%s: exit status (stderr: %s)" % (what, p.stderr))
    return p


def test_oneshot_first_labelling_then_no_write():
    n = Node("gpu-oneshot")
    check_oneshot(n, "first run")
    node = n.get()
    util.check_eq(node["metadata"]["labels"], dict(base_labels(n.name), **FOREIGN, **M40_LABELS), "labels")
    util.check_eq(node["metadata"]["annotations"].get(OWNED), ",".join(sorted(M40_LABELS)), "ownership")
    util.check_eq([(e["verb"], e["objectRef"].get("subresource", ""), e["responseStatus"]["code"])
                   for e in n.requests()], [("get", "", 200), ("patch", "", 200)], "requests of the first run")
    rv = node["metadata"]["resourceVersion"]
    check_oneshot(n, "second run")
    util.check_eq(n.get()["metadata"]["resourceVersion"], rv, "resourceVersion after an unchanged run")
    util.check_eq(len(n.patches()), 1, "writes after an unchanged run")


def test_oneshot_stale_labels_removed_foreign_untouched():
    n = Node("gpu-stale")
    check_oneshot(n, "first run")
    # someone else's label, added after gpulabel's first run, stays through every change
    n.c.patch("/api/v1/nodes/" + n.name, {"metadata": {"labels": {"example.com/rack": "r7"}}}, "merge")
    n.set_gpus(A100X2)
    check_oneshot(n, "after the GPUs changed")
    want = dict(base_labels(n.name), **FOREIGN, **{"example.com/rack": "r7"})
    util.check_eq(n.labels(), dict(want, **A100X2_LABELS), "labels for two A100s")
    n.set_gpus("")
    check_oneshot(n, "without GPUs")
    node = n.get()
    util.check_eq(node["metadata"]["labels"], want, "labels once the GPUs are gone")
    util.check_eq((node["metadata"].get("annotations") or {}).get(OWNED), None, "ownership annotation")
    util.check_eq(len(n.patches()), 3, "writes: one per change")


def test_daemon_labels_keeps_quiet_and_follows_changes():
    n = Node("gpu-daemon")
    err = open(os.path.join(_tmp, "daemon.log"), "w+")
    p = subprocess.Popen(n.argv("--sleep-interval", "200ms", "-v", "2"), env=n.env(),
                         stdout=subprocess.DEVNULL, stderr=err)
    try:
        def log():
            err.flush()
            with open(err.name) as f:
                return f.read()

        def alive():
            if p.poll() is not None:
                raise AssertionError("gpulabel exited %s: %s" % (p.returncode, log()))
        k8s_util.wait_for("the first labels", lambda: alive() or
                          n.labels().get("aliyun.accelerator/nvidia_name") == "Tesla-M40")
        rv = n.get()["metadata"]["resourceVersion"]
        writes = len(n.patches())
        gets = len(n.requests("get"))
        k8s_util.wait_for("ten more cycles", lambda: alive() or len(n.requests("get")) >= gets + 10)
        util.check_eq(len(n.patches()), writes, "writes in ten steady cycles")
        util.check_eq(n.get()["metadata"]["resourceVersion"], rv, "resourceVersion in the steady state")
        n.set_gpus(A100X2)
        k8s_util.wait_for("labels for two A100s", lambda: alive() or
                          n.labels().get("aliyun.accelerator/nvidia_count") == "2")
        util.check_eq(n.labels(), dict(base_labels(n.name), **FOREIGN, **A100X2_LABELS), "labels")
        # a label of ours removed by hand comes back; the foreign ones are never touched
        n.c.patch("/api/v1/nodes/" + n.name,
                  {"metadata": {"labels": {"aliyun.accelerator/nvidia_mem": None}}}, "merge")
        k8s_util.wait_for("the removed label back", lambda: alive() or
                          n.labels().get("aliyun.accelerator/nvidia_mem") == "40960MiB")
        p.send_signal(signal.SIGTERM)
        util.check_eq(p.wait(30), 0, "exit status after SIGTERM (log: %s)" % log())
        for e in n.patches():
            util.check_eq(e["responseStatus"]["code"], 200, "answer to a write")
        util.check_eq(n.labels(), dict(base_labels(n.name), **FOREIGN, **A100X2_LABELS), "labels at the end")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        err.close()


def test_daemon_json_log_lines():
    # --logging-format json against the real API server: every stderr line is one JSON
    # object as component-base's JSON logger writes it (ts, caller, msg, v)
    n = Node("gpu-json")
    err = open(os.path.join(_tmp, "daemon-json.log"), "w+")
    before = time.time()
    p = subprocess.Popen(n.argv("--sleep-interval", "200ms", "-v", "2", "--logging-format", "json"),
                         env=n.env(), stdout=subprocess.DEVNULL, stderr=err)
    try:
        def log():
            err.flush()
            with open(err.name) as f:
                return f.read()
        k8s_util.wait_for("the first labels", lambda: p.poll() is not None or
                          n.labels().get("aliyun.accelerator/nvidia_name") == "Tesla-M40")
        k8s_util.wait_for("the labelled line", lambda: p.poll() is not None or "labelled node" in log())
        p.send_signal(signal.SIGTERM)
        util.check_eq(p.wait(30), 0, "exit status after SIGTERM (log: %s)" % log())
        after = time.time()
        objs = []
        for line in log().splitlines():
            try:
                obj = json.loads(line)
            except ValueError:
                raise AssertionError("not a JSON line: %r" % line)
            if list(obj)[:3] != ["ts", "caller", "msg"] or not (before - 1) * 1000 <= obj["ts"] <= (after + 1) * 1000:
                raise AssertionError("not ts (in the run), caller, msg first: %r" % line)
            objs.append(obj)
        labelled = [o for o in objs if o["msg"].startswith('labelled node "gpu-json"')]
        util.check_eq([(o["v"], o["caller"].split(":")[0]) for o in labelled], [(0, "labeler/daemon.c")],
                      "the labelled line")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        err.close()


def test_serviceaccount_without_the_clusterrole_gets_one_403_line():
    n = Node("gpu-forbidden")
    kc = n.c.sa_kubeconfig(NS, "not-gpulabel")
    p = n.oneshot(kubeconfig=kc)
    util.check_eq(p.returncode, 1, "exit status")
    # the fake NVML announces itself on a line of its own; the failure is the one other line
    lines = [line for line in p.stderr.splitlines() if line.strip() and "simulated NVML" not in line]
    util.check_eq(len(lines), 1, "error lines (%r)" % p.stderr)
    want = ('gpulabel: cannot get node "gpu-forbidden": forbidden: nodes "gpu-forbidden" is '
            'forbidden: User "system:serviceaccount:kube-system:not-gpulabel" cannot get resource '
            '"nodes" in API group "" at the cluster scope (check the ClusterRole allows get,patch on nodes)')
    util.check_eq(lines[0], want, "the 403 line")
    util.check_eq(n.labels(), dict(base_labels(n.name), **FOREIGN), "labels")
