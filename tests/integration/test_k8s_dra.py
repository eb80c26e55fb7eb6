"""gpulabel's DRA mode against the real kube-apiserver v1.37.2 (a local control plane,
k8s_util), with the ServiceAccount and RBAC of deploy/gpulabel/rbac.yaml and dra.yaml and a
token bound to the node, as a DaemonSet pod's is:

- the pool: one ResourceSlice per node (named by the resourceslice controller's scheme, owner
  reference to the Node) with NVIDIA's DRA driver's attributes, typed, and memory; MIG devices
  with their counters in a slice of their own (the server's validation is the judge);
- no write when nothing changed (the audit log counts them); a GPU going away and coming back
  changes the slice within the sleep interval, the pool's generation growing; a stale slice
  of the pool (another generation, a name not ours) is removed;
- XID 79 taints the GPU's device (gpu.nvidia.com/xid=79) with a Warning Event on the Node, and
  the taint goes when the GPU heals, with a Normal Event; a lost GPU is tainted gpu-lost;
- the device-plugin mode removes the node's slices (never both for one GPU);
- least privilege: the ValidatingAdmissionPolicy of dra.yaml refuses node A's token on node
  B's slices, for create, update and delete."""
import json
import os
import signal
import subprocess
import time

import k8s_util
import util

NS, SA = "kube-system", "gpulabel"
DRIVER = "gpu.nvidia.com"
M40 = 'device name="Tesla M40" memory=12802064384 cc=5.2\n'
A100 = 'device name="NVIDIA A100-SXM4-40GB" memory=42949672960 cc=8.0'
SLICES = "/apis/resource.k8s.io/v1/resourceslices"

_tmp = k8s_util.tmpdir("k8s-dra-tmp-")
_setup = {}


def setup():
    if not _setup:
        c = k8s_util.cluster("dra")
        c.apply_file("deploy/gpulabel/rbac.yaml")
        c.apply_file("deploy/gpulabel/admission-policy.yaml")  # the Events' policy too
        c.apply_file("deploy/gpulabel/dra.yaml")
        _setup["c"] = c
    return _setup["c"]


def node_token(c, node):
    """A token of gpulabel's ServiceAccount bound to Node node: the API server adds the node's
    name to the token's user (authentication.kubernetes.io/node-name), as for a pod's token."""
    return c.kubectl("create", "token", SA, "-n", NS, "--duration", "1h",
                     "--bound-object-kind", "Node", "--bound-object-name", node).strip()


class Agent:
    def __init__(self, name, gpus=M40, node=None):
        self.c = setup()
        self.name = name
        self.c.create_node(k8s_util.gpu_node(name, gpus=0))
        self.dir = os.path.join(_tmp, name)
        for d in ("reg", "plugins", "cdi"):
            os.makedirs(os.path.join(self.dir, d), exist_ok=True)
        self.nvml = os.path.join(self.dir, "nvml.conf")
        self.events = os.path.join(self.dir, "events")
        open(self.events, "w").close()
        self.set_gpus(gpus)
        self.kubeconfig = self.c.write_kubeconfig(os.path.join(self.dir, "kubeconfig"),
                                                  token=node_token(self.c, node or name))
        self.p = None

    def set_gpus(self, text):
        tmp = self.nvml + ".tmp"
        with open(tmp, "w") as f:
            f.write("driver=550.107.02\ncuda=12040\n" + text)
        os.rename(tmp, self.nvml)

    def inject(self, line):
        with open(self.events, "a") as f:
            f.write(line + "\n")

    def start(self, *extra, mode="dra"):
        argv = [util.binary("gpulabel"), "--kubeconfig", self.kubeconfig, "--node-name", self.name,
                "--nvml-lib", util.fake_nvml(), "--mode", mode, "--sleep-interval", "1s",
                "--kubelet-registrar-dir", os.path.join(self.dir, "reg"),
                "--kubelet-plugins-dir", os.path.join(self.dir, "plugins"),
                "--cdi-root", os.path.join(self.dir, "cdi")] + list(extra)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("GPULABEL_") and k not in ("NODE_NAME", "KUBECONFIG")}
        env.update(FAKE_NVML_CONFIG=self.nvml, FAKE_NVML_EVENTS=self.events)
        self.p = k8s_util.Process(argv, os.path.join(self.dir, "gpulabel-%d.log" % time.time_ns()),
                                  env=env)
        return self.p

    def stop(self):
        if self.p:
            self.p.stop()

    def slices(self):
        return [s for s in self.c.items(SLICES) if s["spec"].get("nodeName") == self.name]

    def devices(self):
        return {d["name"]: d for s in self.slices() for d in s["spec"].get("devices", [])}

    def wait_devices(self, pred, what):
        k8s_util.wait_for(what, lambda: (self.p.alive() if self.p else False) or pred(self.devices()))
        return self.devices()

    def writes(self):
        """The slice writes the agent made (create, update, delete), from the audit log."""
        return [e for e in self.c.audit(user=k8s_util.sa_user(NS, SA), resource="resourceslices")
                if e["verb"] in ("create", "update", "delete")
                and e["responseStatus"]["code"] < 300
                and (self.name in (e.get("objectRef") or {}).get("name", "") or
                     e["verb"] == "create")]


def test_pool_of_one_node_as_nvidias_driver_publishes_it():
    a = Agent("dra-pool", gpus=M40 + "%s\n" % A100)
    try:
        a.start()
        devs = a.wait_devices(lambda d: set(d) == {"gpu-0", "gpu-1"}, "two GPUs published")
        node = a.c.get("/api/v1/nodes/" + a.name)
        [s] = a.slices()
        util.check_eq(s["metadata"]["ownerReferences"],
                      [{"apiVersion": "v1", "kind": "Node", "name": a.name,
                        "uid": node["metadata"]["uid"], "controller": True}], "owner reference")
        if not s["metadata"]["name"].startswith("00000-gpu.nvidia.com-dra-pool-"):
            raise AssertionError("slice name %r" % s["metadata"]["name"])
        util.check_eq((s["spec"]["driver"], s["spec"]["nodeName"], s["spec"]["pool"]),
                      (DRIVER, a.name, {"name": a.name, "generation": 1, "resourceSliceCount": 1}),
                      "driver, node, pool")
        util.check_eq(devs["gpu-0"]["attributes"], {
            "type": {"string": "gpu"},
            "uuid": {"string": "GPU-00000000-fa4e-4e00-8000-000000000000"},
            "productName": {"string": "Tesla M40"},
            "brand": {"string": "Tesla"},
            "architecture": {"string": "Maxwell"},
            "cudaComputeCapability": {"version": "5.2.0"},
            "driverVersion": {"version": "550.107.2"},
            "cudaDriverVersion": {"version": "12.4.0"},
            "resource.kubernetes.io/pciBusID": {"string": "0000:00:08.0"},
        }, "gpu-0's attributes")
        util.check_eq(devs["gpu-0"]["capacity"], {"memory": {"value": "12209Mi"}}, "capacity")
        util.check_eq(devs["gpu-1"]["attributes"]["architecture"], {"string": "Ampere"}, "gpu-1")
        util.check_eq(devs["gpu-1"]["capacity"], {"memory": {"value": "40Gi"}}, "gpu-1's memory")
    finally:
        a.stop()


def test_mig_devices_consume_their_gpus_counters():
    a = Agent("dra-mig", gpus="%s mig=enabled mig_devices=1g.5gb+1g.5gb+3g.20gb\n%s\n" % (A100, A100))
    try:
        a.start()
        devs = a.wait_devices(lambda d: len(d) == 4, "three MIG devices and a GPU")
        util.check_eq(sorted(devs), ["gpu-0-mig-1g5gb-19-0", "gpu-0-mig-1g5gb-19-1",
                                     "gpu-0-mig-3g20gb-9-2", "gpu-1"], "device names")
        m = devs["gpu-0-mig-3g20gb-9-2"]
        util.check_eq({k: m["attributes"][k] for k in ("type", "parentUUID", "profile")},
                      {"type": {"string": "mig"},
                       "parentUUID": {"string": "GPU-00000000-fa4e-4e00-8000-000000000000"},
                       "profile": {"string": "3g.20gb"}}, "MIG attributes")
        util.check_eq(m["consumesCounters"], [{"counterSet": "gpu-0-counter-set", "counters": {
            "multiprocessors": {"value": "42"}, "copy-engines": {"value": "3"},
            "decoders": {"value": "1"}, "encoders": {"value": "0"}, "jpeg-engines": {"value": "0"},
            "ofa-engines": {"value": "0"}, "memory": {"value": "20224Mi"},
            "memory-slice-2": {"value": "1"}, "memory-slice-3": {"value": "1"},
            "memory-slice-4": {"value": "1"}}}], "what the 3g.20gb device consumes")
        counters = [s for s in a.slices() if s["spec"].get("sharedCounters")]
        util.check_eq(len(counters), 1, "one slice of counters")
        [cs] = counters[0]["spec"]["sharedCounters"]
        util.check_eq((cs["name"], cs["counters"]["multiprocessors"], cs["counters"]["memory-slice-4"]),
                      ("gpu-0-counter-set", {"value": "70"}, {"value": "1"}), "the counter set")
        util.check_eq(sorted(s["spec"]["pool"]["resourceSliceCount"] for s in a.slices()), [3, 3, 3],
                      "counters, GPU 0's devices, GPU 1's device: three slices")
    finally:
        a.stop()


def test_no_write_when_nothing_changed_and_gpus_going_and_coming():
    a = Agent("dra-steady", gpus="%s repeat=2\n" % A100)
    try:
        a.start("-v", "2")
        a.wait_devices(lambda d: set(d) == {"gpu-0", "gpu-1"}, "two GPUs")
        k8s_util.wait_for("a cycle that finds nothing to write",
                          lambda: a.p.alive() or "is up to date; nothing written" in a.p.log())
        writes = len(a.writes())
        rv = a.slices()[0]["metadata"]["resourceVersion"]
        n = a.p.log().count("is up to date; nothing written")
        k8s_util.wait_for("five more cycles",
                          lambda: a.p.alive() or a.p.log().count("nothing written") >= n + 5)
        util.check_eq(len(a.writes()), writes, "writes in five steady cycles")
        util.check_eq(a.slices()[0]["metadata"]["resourceVersion"], rv, "resourceVersion")
        a.set_gpus("%s\n" % A100)  # one GPU goes away
        a.wait_devices(lambda d: set(d) == {"gpu-0"}, "one GPU left")
        util.check_eq(a.slices()[0]["spec"]["pool"]["generation"], 2, "generation after a change")
        a.set_gpus("%s repeat=2\n" % A100)  # and comes back
        a.wait_devices(lambda d: set(d) == {"gpu-0", "gpu-1"}, "both GPUs again")
        util.check_eq([s["spec"]["pool"]["generation"] for s in a.slices()], [3], "generation")
        # a stale slice of the pool (an older generation, a name not of the scheme) is removed
        a.c.create(SLICES, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                            "metadata": {"name": "stale-dra-steady"},
                            "spec": {"driver": DRIVER, "nodeName": a.name, "pool": {
                                "name": a.name, "generation": 1, "resourceSliceCount": 1},
                                "devices": [{"name": "gpu-7"}]}})
        k8s_util.wait_for("the stale slice removed", lambda: a.p.alive() or
                          [s["metadata"]["name"] for s in a.slices()
                           if s["metadata"]["name"] == "stale-dra-steady"] == [])
        util.check_eq(set(a.devices()), {"gpu-0", "gpu-1"}, "devices after the cleanup")
    finally:
        a.stop()


def uuid(i):
    return "GPU-00000000-fa4e-4e00-8000-%012x" % i


def gpu_events(a):
    """The GPU health Events (core v1, namespace default) about a's Node."""
    return [e for e in a.c.items("/api/v1/namespaces/default/events")
            if e["involvedObject"].get("name") == a.name and e.get("reason") in ("GPUUnhealthy", "GPUHealthy")]


def test_xid_taints_and_the_healed_gpu_loses_its_taint():
    # a Warning Event with the taint, a Normal Event when it goes (the one DRA container has
    # the token: the Events' policy lets it write about its own Node)
    a = Agent("dra-taint", gpus="%s repeat=2\n" % A100)
    try:
        a.start("--health-recovery-period", "2s")
        a.wait_devices(lambda d: set(d) == {"gpu-0", "gpu-1"}, "two GPUs")
        a.inject("xid 1 79")
        devs = a.wait_devices(lambda d: d["gpu-1"].get("taints"), "gpu-1 tainted")
        [t] = devs["gpu-1"]["taints"]
        util.check_eq((t["key"], t["value"], t["effect"]), ("gpu.nvidia.com/xid", "79", "NoSchedule"),
                      "the taint")
        util.check_eq(devs["gpu-0"].get("taints"), None, "gpu-0 untainted")
        evs = [e for e in a.c.items("/api/v1/namespaces/default/events")
               if e.get("reason") == "GPUUnhealthy" and e["involvedObject"]["name"] == a.name]
        if not any("tainted gpu.nvidia.com/xid=79" in e["message"] for e in evs):
            raise AssertionError("no Warning event: %r" % [e["message"] for e in evs])
        a.wait_devices(lambda d: not d["gpu-1"].get("taints"), "gpu-1 healed")
        evs = k8s_util.wait_for("the Normal Event", lambda: a.p.alive() or [
            e for e in gpu_events(a) if e["reason"] == "GPUHealthy"])
        util.check_eq([(e["type"], e["message"]) for e in evs],
                      [("Normal", "GPU 1 (%s) is healthy again: no critical event for the recovery "
                        "period and NVML answers; its DRA devices' taints are removed" % uuid(1))],
                      "the Normal Event")
        util.check_eq(sorted(e["reason"] for e in gpu_events(a)), ["GPUHealthy", "GPUUnhealthy"],
                      "one Event each")
        a.inject("lost 0")
        a.wait_devices(lambda d: [t["key"] for t in d["gpu-0"].get("taints", [])] ==
                       ["gpu.nvidia.com/gpu-lost"], "gpu-0 lost")
        k8s_util.wait_for("the lost GPU's Warning", lambda: a.p.alive() or [
            e for e in gpu_events(a) if e["type"] == "Warning" and "GPU 0 " in e["message"]
            and "tainted gpu.nvidia.com/gpu-lost" in e["message"]])
    finally:
        a.stop()


def test_device_plugin_mode_removes_the_nodes_slices():
    a = Agent("dra-switch")
    try:
        a.start()
        a.wait_devices(lambda d: set(d) == {"gpu-0"}, "one GPU")
        a.stop()
        dp = os.path.join(a.dir, "device-plugins")
        os.makedirs(dp, exist_ok=True)
        a.start("--device-plugin-dir", dp, mode="device-plugin")
        k8s_util.wait_for("the slices gone", lambda: a.p.alive() or a.slices() == [])
    finally:
        a.stop()


def test_mode_auto_follows_the_gpu_operator_label():
    # --mode auto: dra on a Node labelled nvidia.com/gpu.deploy.dra-driver=true (read at
    # start), the device plugin otherwise (and then the node's slices go)
    a = Agent("dra-auto")
    try:
        a.c.kubectl("label", "node", "dra-auto", "nvidia.com/gpu.deploy.dra-driver=true")
        a.start(mode="auto")
        a.wait_devices(lambda d: set(d) == {"gpu-0"}, "the slice in auto mode on a labelled node")
        if "(--mode auto: the node's label nvidia.com/gpu.deploy.dra-driver)" not in a.p.log():
            raise AssertionError("no mode line: %r" % a.p.log()[-1500:])
        a.stop()
        a.c.kubectl("label", "node", "dra-auto", "nvidia.com/gpu.deploy.dra-driver-")
        dp = os.path.join(a.dir, "device-plugins")
        os.makedirs(dp, exist_ok=True)
        a.start("--device-plugin-dir", dp, mode="auto")
        k8s_util.wait_for("the slices gone", lambda: a.p.alive() or a.slices() == [])
        k8s_util.wait_for("the mode line", lambda: a.p.alive() or "offering the GPUs through the device "
                          "plugin (--mode auto: no label nvidia.com/gpu.deploy.dra-driver on the node)"
                          in a.p.log())
    finally:
        a.stop()


def test_node_a_may_not_write_node_b_slices():
    # the agent of node dra-a runs with dra-a's token but says it is dra-b
    b = Agent("dra-b")
    a = Agent("dra-a")
    liar = Agent("dra-liar", node="dra-a")  # --node-name dra-liar, token of dra-a
    try:
        liar.start()
        k8s_util.wait_for("the refusal", lambda: liar.p.alive() or "may write only" in liar.p.log())
        log = liar.p.log()
        for want in ("DRA: cannot publish the ResourceSlices: cannot create ResourceSlice "
                     "00000-gpu.nvidia.com-dra-liar-: ",
                     "is forbidden: ValidatingAdmissionPolicy 'gpulabel-resourceslices' with binding "
                     "'gpulabel-resourceslices' denied request: gpulabel on node dra-a may write "
                     "only that node's ResourceSlices, not one of node 'dra-liar'"):
            if want not in log:
                raise AssertionError("no %r in %r" % (want, log[-1500:]))
        util.check_eq(liar.slices(), [], "no slice for the liar")
        # the same token may write its own node's slices
        a.start()
        a.wait_devices(lambda d: set(d) == {"gpu-0"}, "node dra-a's own slice")
        a.stop()
        # and may not update or delete node dra-b's, whoever made them
        b.start()
        [bs] = b.wait_devices(lambda d: set(d) == {"gpu-0"}, "node dra-b's slice") and b.slices()
        b.stop()
        kc = a.kubeconfig
        bs["spec"]["devices"][0]["name"] = "gpu-9"
        bs.update(apiVersion="resource.k8s.io/v1", kind="ResourceSlice")
        p = a.c.kubectl("replace", "-f", "-", input=json.dumps(bs), kubeconfig=kc, check=False)
        if p.returncode == 0 or "may write only that node's ResourceSlices, not one of node 'dra-b'" not in p.stderr:
            raise AssertionError("update of dra-b's slice with dra-a's token: %s %s" % (p.stdout, p.stderr))
        p = a.c.kubectl("delete", "resourceslice", bs["metadata"]["name"], kubeconfig=kc, check=False)
        if p.returncode == 0 or "may write only that node's ResourceSlices, not one of node 'dra-b'" not in p.stderr:
            raise AssertionError("delete of dra-b's slice with dra-a's token: %s %s" % (p.stdout, p.stderr))
        # and a token bound to no node may write none
        kc2 = a.c.write_kubeconfig(os.path.join(_tmp, "kc-unbound"), token=a.c.token(NS, SA))
        p = a.c.kubectl("delete", "resourceslice", bs["metadata"]["name"], kubeconfig=kc2, check=False)
        if p.returncode == 0 or "gpulabel's token names no node" not in p.stderr:
            raise AssertionError("delete with an unbound token: %s %s" % (p.stdout, p.stderr))
        util.check_eq(len(b.slices()), 1, "node dra-b's slice still there")
    finally:
        for x in (liar, a, b):
            x.stop()
