# run.py: python /usr/bin/python3
"""gpulabel as the kubelet's DRA plugin (--mode dra), against a fake kubelet on the real gRPC
stack (tests/kubelet/fake_dra_kubelet.py) and the API server double for the ResourceClaims:
registration through the plugin registry, NodePrepareResources writing the CDI spec and
answering with its CDI names, NodeUnprepareResources removing it, both idempotent, prepared
claims surviving an agent restart, a kubelet restart, the sockets' modes and their return
when removed, and bad input (an undecodable request, a claim that is not allocated, a
malformed allocation, an unknown device, another node's pool, a UID that is not the claim's,
a CDI directory that cannot be written): each a clear error, nothing half-written, the agent
serving on. The ResourceSlices themselves are checked on the real API server
(test_k8s_dra.py)."""
import json
import os
import shutil
import signal
import time

import plugin_util as pu
import util
from plugin_util import A100, WAIT, uuid

SKIP = pu.grpc_skip("dra_pb2")
if not SKIP:
    import grpc
    from fake_dra_kubelet import FakeDraKubelet, V1BETA1  # noqa: E402

DRIVER = "gpu.nvidia.com"
NODE = "gpu-1"
GPUS = "device %s repeat=2\ndevice %s mig=enabled mig_devices=1g.5gb+1g.5gb\n" % (A100, A100)


class Agent(pu.Node):
    """A node's directories, the API double with its Node, the fake kubelet, and gpulabel."""

    def __init__(self, gpus=GPUS, kubelet=True):
        super().__init__("gpulabel-dra-", gpus)
        self.reg = os.path.join(self.dir, "plugins_registry")
        self.plugins = os.path.join(self.dir, "plugins")
        self.cdi = os.path.join(self.dir, "cdi")
        self.devroot = os.path.join(self.dir, "dev")
        for d in (self.reg, self.plugins, self.devroot):
            os.makedirs(d)
        for n in ("nvidia0", "nvidiactl"):  # device nodes the CDI spec names when present
            open(os.path.join(self.devroot, n), "w").close()
        self.kubeconfig = self.start_api(NODE)
        self.kubelet = FakeDraKubelet(self.reg, util.BUILD)
        if kubelet:
            self.kubelet.start()

    def start(self, *extra, by_env=False):
        """The agent in DRA mode; by_env: the mode and directories from the environment
        (GPULABEL_*) rather than flags."""
        dirs = {"mode": "dra", "kubelet-registrar-dir": self.reg, "kubelet-plugins-dir": self.plugins,
                "cdi-root": self.cdi}
        argv = [util.binary("gpulabel"), "--nvml-lib", util.fake_nvml(), "--kubeconfig",
                self.kubeconfig, "--node-name", NODE, "--sleep-interval", "1s"]
        env = pu.agent_env(FAKE_NVML_CONFIG=self.nvml, FAKE_NVML_EVENTS=self.events,
                           GPULABEL_DEV_ROOT=self.devroot)
        for k, v in dirs.items():
            if by_env:
                env["GPULABEL_" + k.upper().replace("-", "_")] = v
            else:
                argv += ["--" + k, v]
        return self.spawn(argv + list(extra), env, preexec_fn=lambda: os.umask(0))

    def claim(self, name, results, ns="default"):
        """A ResourceClaim with allocation results [(request, pool, device, driver)]; its UID."""
        res = [{"request": r, "pool": pool, "device": dev, "driver": drv}
               for r, pool, dev, drv in results]
        self.api.add({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                      "metadata": {"name": name, "namespace": ns},
                      "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                          "deviceClassName": DRIVER}}]}},
                      "status": {"allocation": {"devices": {"results": res}}}})
        return self.api.get("resourceclaims", name, ns)["metadata"]["uid"]

    def cdi_files(self):
        try:
            return sorted(os.listdir(self.cdi))
        except OSError:
            return []

    def checkpoint(self):
        with open(os.path.join(self.plugins, DRIVER, "checkpoint.json")) as f:
            return json.load(f)


def run(fn, **kw):
    pu.run(Agent(**kw), fn)


def wait_devices(a, n):
    """Until the plugin knows the node's devices (the first detection is over)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if len(a.api.list("resourceslices")) and sum(
                len(s["spec"].get("devices", [])) for s in a.api.list("resourceslices")) == n:
            return
        time.sleep(0.05)
    raise AssertionError("no slices with %d devices: %r" % (n, a.api.list("resourceslices")))


def test_registers_through_the_plugin_registry():
    def body(a):
        p = a.start()
        r = a.kubelet.wait_registration()
        util.check_eq(os.path.basename(r.path), DRIVER + "-reg.sock", "registration socket")
        util.check_eq((r.info.type, r.info.name, r.info.endpoint, list(r.info.supported_versions)),
                      ("DRAPlugin", DRIVER, os.path.join(a.plugins, DRIVER, "dra.sock"),
                       ["v1.DRAPlugin", "v1beta1.DRAPlugin"]), "PluginInfo")
        for path in (r.path, r.info.endpoint):
            util.check_eq(oct(os.stat(path).st_mode & 0o777), "0o600",
                          "mode of %s under umask 000" % path)
        a.wait_log(p, "DRA plugin: registered gpu.nvidia.com with the kubelet")
    run(body)


def test_mode_and_directories_from_the_environment():
    # GPULABEL_MODE, GPULABEL_KUBELET_REGISTRAR_DIR, GPULABEL_KUBELET_PLUGINS_DIR and
    # GPULABEL_CDI_ROOT as the DaemonSet sets them: the same registration, socket and spec
    def body(a):
        a.start(by_env=True)
        r = a.kubelet.wait_registration()
        util.check_eq((os.path.dirname(r.path), r.info.endpoint),
                      (a.reg, os.path.join(a.plugins, DRIVER, "dra.sock")), "the sockets' places")
        wait_devices(a, 4)
        uid = a.claim("c1", [("gpu", NODE, "gpu-0", DRIVER)])
        util.check_eq(a.kubelet.prepare(("default", "c1", uid))[uid].error, "", "prepare")
        util.check_eq(len(a.cdi_files()), 1, "one CDI spec under GPULABEL_CDI_ROOT")
        util.check_eq(list(a.checkpoint()["claims"]), [uid], "the checkpoint in the plugins dir")
    run(body)


def test_driver_name_flag():
    # --driver-name: the registration, the socket's directory and the slices' driver
    def body(a):
        a.start("--driver-name", "gpu.example.com")
        r = a.kubelet.wait_registration()
        util.check_eq((os.path.basename(r.path), r.info.name, r.info.endpoint),
                      ("gpu.example.com-reg.sock", "gpu.example.com",
                       os.path.join(a.plugins, "gpu.example.com", "dra.sock")), "registration")
        wait_devices(a, 4)
        util.check_eq(sorted({s["spec"]["driver"] for s in a.api.list("resourceslices")}),
                      ["gpu.example.com"], "the slices' driver")
    run(body)


def test_prepare_writes_the_cdi_spec_and_unprepare_removes_it():
    def body(a):
        p = a.start()
        wait_devices(a, 4)
        uid = a.claim("c1", [("gpu", NODE, "gpu-0", DRIVER), ("gpu", NODE, "gpu-2-mig-1g5gb-19-1", DRIVER),
                             ("other", NODE, "x-0", "other.example.com")])
        got = a.kubelet.prepare(("default", "c1", uid))
        util.check_eq(list(got), [uid], "claims answered")
        r = got[uid]
        util.check_eq(r.error, "", "error")
        util.check_eq([(list(d.request_names), d.pool_name, d.device_name, list(d.cdi_device_ids))
                       for d in r.devices],
                      [(["gpu"], NODE, "gpu-0", ["k8s.gpu.nvidia.com/claim=%s-gpu-0" % uid]),
                       (["gpu"], NODE, "gpu-2-mig-1g5gb-19-1",
                        ["k8s.gpu.nvidia.com/claim=%s-gpu-2-mig-1g5gb-19-1" % uid])], "devices")
        name = "k8s.gpu.nvidia.com-claim_%s.json" % uid
        util.check_eq(a.cdi_files(), [name], "CDI specs")
        with open(os.path.join(a.cdi, name)) as f:
            spec = json.load(f)
        util.check_eq(spec["kind"], "k8s.gpu.nvidia.com/claim", "kind")
        util.check_eq([(d["name"], d["containerEdits"]) for d in spec["devices"]],
                      [("%s-gpu-0" % uid, {"env": ["NVIDIA_VISIBLE_DEVICES=" + uuid(0)],
                                           "deviceNodes": [{"path": "/dev/nvidia0"}]}),
                       ("%s-gpu-2-mig-1g5gb-19-1" % uid,
                        {"env": ["NVIDIA_VISIBLE_DEVICES=MIG-00000000-fa4e-4e00-9000-000200000001"],
                         "deviceNodes": []})], "CDI devices")
        util.check_eq(spec["containerEdits"], {"deviceNodes": [{"path": "/dev/nvidiactl"}]},
                      "common edits")
        util.check_eq(oct(os.stat(os.path.join(a.cdi, name)).st_mode & 0o777), "0o644", "mode")
        # idempotent: the same answer again, nothing new written
        again = a.kubelet.prepare(("default", "c1", uid))
        util.check_eq(again[uid], r, "prepare again")
        util.check_eq(list(a.checkpoint()["claims"]), [uid], "checkpoint")
        u = a.kubelet.unprepare(("default", "c1", uid))
        util.check_eq((list(u), u[uid].error), ([uid], ""), "unprepare")
        util.check_eq(a.cdi_files(), [], "CDI specs after unprepare")
        util.check_eq(a.checkpoint()["claims"], {}, "checkpoint after unprepare")
        # the checkpoint is rewritten through one spare file, exchanged with it: two files, and
        # no new inode for any later write (a create costs ms on a busy ext4)
        d = os.path.join(a.plugins, DRIVER)
        inodes = lambda: sorted(os.stat(os.path.join(d, f)).st_ino  # noqa: E731
                                for f in os.listdir(d) if f.startswith("checkpoint.json"))
        util.check_eq(sorted(f for f in os.listdir(d) if f.startswith("checkpoint.json")),
                      ["checkpoint.json", "checkpoint.json.spare.%d" % p.pid], "checkpoint files")
        before = inodes()
        for _ in range(2):
            a.kubelet.prepare(("default", "c1", uid))
            a.kubelet.unprepare(("default", "c1", uid))
        util.check_eq(inodes(), before, "the checkpoint's inodes after two more prepares")
        util.check_eq(a.checkpoint()["claims"], {}, "checkpoint after them")
        util.check_eq(oct(os.stat(os.path.join(d, "checkpoint.json")).st_mode & 0o777), "0o600",
                      "checkpoint mode")
        u = a.kubelet.unprepare(("default", "c1", uid))
        util.check_eq(u[uid].error, "", "unprepare again")
        # v1beta1 speaks the same messages
        r = a.kubelet.prepare(("default", "c1", uid), version=V1BETA1)
        util.check_eq([d.device_name for d in r[uid].devices], ["gpu-0", "gpu-2-mig-1g5gb-19-1"],
                      "v1beta1")
    run(body)


def test_prepared_claims_survive_an_agent_restart():
    def body(a):
        p = a.start()
        wait_devices(a, 4)
        uid = a.claim("c1", [("gpu", NODE, "gpu-1", DRIVER)])
        first = a.kubelet.prepare(("default", "c1", uid))[uid]
        util.check_eq(first.error, "", "error")
        spec = os.path.join(a.cdi, "k8s.gpu.nvidia.com-claim_%s.json" % uid)
        with open(spec) as f:
            text = f.read()
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=10)
        util.check_eq(sorted(f for f in os.listdir(os.path.join(a.plugins, DRIVER))
                             if f.startswith("checkpoint.json")), ["checkpoint.json"],
                      "the checkpoint without its spare after the agent stopped")
        a.api.delete("resourceclaims", "c1", "default")  # the answer must come from the checkpoint
        p = a.start()
        a.kubelet.restart()  # the plugin's sockets are new ones
        a.kubelet.wait_registration(2)
        again = a.kubelet.prepare(("default", "c1", uid))[uid]
        util.check_eq(again, first, "prepare after the restart")
        if "1 prepared claims from the checkpoint" not in a.stderr(p):
            raise AssertionError("no checkpoint log line: %r" % a.stderr(p)[-800:])
        # the node rebooted: /var/run (the CDI root) is empty, the checkpoint is not; the
        # kubelet prepares again and the spec is written again
        os.unlink(spec)
        util.check_eq(a.kubelet.prepare(("default", "c1", uid))[uid], first, "after the spec was lost")
        with open(spec) as f:
            util.check_eq(f.read(), text, "the spec written again")
        u = a.kubelet.unprepare(("default", "c1", uid))
        util.check_eq(u[uid].error, "", "unprepare after the restart")
        util.check_eq(a.cdi_files(), [], "CDI specs")
    run(body)


def test_kubelet_restart_registers_again():
    def body(a):
        a.start()
        a.kubelet.wait_registration()
        a.kubelet.restart()
        a.kubelet.wait_registration(2)
    run(body)


def test_registration_socket_removed_comes_back():
    def body(a):
        p = a.start()
        r = a.kubelet.wait_registration()
        os.unlink(r.path)
        a.kubelet.wait_registration(2)
        if "DRA plugin: a socket of %s or %s was removed; serving them again" % (
                r.path, r.info.endpoint) not in a.stderr(p):
            raise AssertionError("no log line: %r" % a.stderr(p)[-800:])
    run(body)


def test_bad_input_is_a_clear_error_and_the_agent_serves_on():
    def body(a):
        p = a.start()
        wait_devices(a, 4)
        ok = a.claim("good", [("gpu", NODE, "gpu-0", DRIVER)])
        unknown = a.claim("unknown", [("gpu", NODE, "gpu-9", DRIVER)])
        other = a.claim("other-pool", [("gpu", "gpu-2", "gpu-0", DRIVER)])
        a.api.add({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                   "metadata": {"name": "pending", "namespace": "default"}, "spec": {}})
        pending = a.api.get("resourceclaims", "pending", "default")["metadata"]["uid"]
        a.api.add({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                   "metadata": {"name": "malformed", "namespace": "default"}, "spec": {},
                   "status": {"allocation": {"devices": {"results": [{"request": "gpu",
                                                                     "driver": DRIVER}]}}}})
        malformed = a.api.get("resourceclaims", "malformed", "default")["metadata"]["uid"]
        got = a.kubelet.prepare(("default", "unknown", unknown), ("default", "other-pool", other),
                                ("default", "pending", pending), ("default", "malformed", malformed),
                                ("default", "good", "0000-not-its-uid"), ("default", "gone", "u-1"),
                                ("default", "good", ok))
        util.check_eq(got[unknown].error, "ResourceClaim default/unknown: unknown device gpu-9 "
                      "(this node has 4 devices of gpu.nvidia.com)", "unknown device")
        util.check_eq(got[other].error, "ResourceClaim default/other-pool: device gpu-0 is "
                      "allocated from pool gpu-2, not from this node's (gpu-1)", "another pool")
        util.check_eq(got[pending].error, "ResourceClaim default/pending is not allocated",
                      "not allocated")
        util.check_eq(got[malformed].error, "ResourceClaim default/malformed: malformed "
                      "allocation: result 0 lacks driver, pool, device or request", "malformed")
        util.check_eq(got["0000-not-its-uid"].error, "ResourceClaim default/good has UID %s, not "
                      "0000-not-its-uid (deleted and made again?)" % ok, "UID")
        util.check_eq(got["u-1"].error, "ResourceClaim default/gone not found", "not found")
        util.check_eq(got[ok].error, "", "the good claim in the same request")
        util.check_eq(a.cdi_files(), ["k8s.gpu.nvidia.com-claim_%s.json" % ok],
                      "only the good claim's spec")
        util.check_eq(list(a.checkpoint()["claims"]), [ok], "only the good claim checkpointed")
        # an undecodable request, and a claim without a UID: the whole call fails
        try:
            a.kubelet.raw("/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources",
                          b"\x0a\xff\xff")
            raise AssertionError("an undecodable request was answered")
        except grpc.RpcError as e:
            util.check_eq((e.code(), e.details()), (grpc.StatusCode.INVALID_ARGUMENT,
                          "cannot decode the NodePrepareResourcesRequest"), "undecodable")
        try:
            a.kubelet.prepare(("default", "x", ""))
            raise AssertionError("a claim without a UID was answered")
        except grpc.RpcError as e:
            util.check_eq(e.code(), grpc.StatusCode.INVALID_ARGUMENT, "no UID")
        # the CDI directory cannot be written: an error, no spec, no checkpoint entry
        c2 = a.claim("c2", [("gpu", NODE, "gpu-1", DRIVER)])
        shutil.rmtree(a.cdi)
        with open(a.cdi, "w") as f:
            f.write("a file where the CDI directory should be\n")
        got = a.kubelet.prepare(("default", "c2", c2))
        if not got[c2].error.startswith("cannot create the CDI directory '%s': " % a.cdi) and \
                not got[c2].error.startswith("cannot write '%s/" % a.cdi):
            raise AssertionError("CDI error %r" % got[c2].error)
        util.check_eq(sorted(a.checkpoint()["claims"]), [ok], "nothing of c2 checkpointed")
        os.unlink(a.cdi)
        got = a.kubelet.prepare(("default", "c2", c2))
        util.check_eq(got[c2].error, "", "c2 once the directory is back")
        util.check_eq(p.poll(), None, "the agent still runs")
    run(body)
