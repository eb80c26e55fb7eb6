# run.py: python /usr/bin/python3
"""GPU health Events in device-plugin mode as deploy/gpulabel/daemonset.yaml lays the pod out,
on the real kube-apiserver v1.37.2 (k8s_util) with rbac.yaml and admission-policy.yaml applied.

The pod's two containers run as two processes, each with its container's environment read
from the manifest (paths and the recovery period aside): `device-plugin` (root, no token,
GPULABEL_NO_SYNC) serves the fake kubelet; `gpulabel` (the labels, the token bound to the pod
and so to its node) watches the same GPUs with the same rules. XID 79 on a GPU: the kubelet
hears Unhealthy from the plugin and the Node gets one Warning Event from the labels container,
through RBAC and the policy that limits Events to its own Node; after the recovery period the
kubelet hears Healthy and the Node gets one Normal Event. (DRA mode's Events, one container
with the token: test_k8s_dra.py's xid_taints_and_the_healed_gpu_loses_its_taint.)"""
import os
import sys

import k8s_util
import util

SKIP = None
try:
    import grpc  # noqa: F401
    import yaml
except ImportError as e:
    SKIP = "needs Debian's python3-grpcio and python3-yaml under /usr/bin/python3: %s" % e
if not SKIP and not os.path.exists(os.path.join(util.BUILD, "gen", "python", "api_pb2.py")):
    SKIP = "build/gen/python/api_pb2.py is not built (needs protoc: scripts/install-deps)"
if not SKIP:
    sys.path.insert(0, os.path.join(util.SRC, "tests", "kubelet"))
    from fake_kubelet import FakeKubelet  # noqa: E402

NS, SA, NODE = "kube-system", "gpulabel", "gpu-1"
SYSFS = os.path.join(util.SRC, "tests", "fixtures", "sysfs")
A100 = 'name="NVIDIA A100-SXM4-40GB" memory=42949672960 cc=8.0'
FOUR = "".join("device %s nvlink=%s\n" % (A100, peer) for peer in ("1+1", "0+0", "3+3", "2+2"))
_tmp = k8s_util.tmpdir("k8s-health-events-")


def uuid(i):
    return "GPU-00000000-fa4e-4e00-8000-%012x" % i


def manifest_env(container, node):
    """A container's environment as the kubelet would give it: the literal values, the node
    name and the memory limit of the Downward API."""
    with open(os.path.join(util.SRC, "deploy", "gpulabel", "daemonset.yaml")) as f:
        [ds] = [d for d in yaml.safe_load_all(f) if d and d.get("kind") == "DaemonSet"]
    [c] = [c for c in ds["spec"]["template"]["spec"]["containers"] if c["name"] == container]
    env = {}
    for e in c.get("env", []):
        if "value" in e:
            env[e["name"]] = e["value"]
        elif e["valueFrom"].get("fieldRef", {}).get("fieldPath") == "spec.nodeName":
            env[e["name"]] = node
        elif e["valueFrom"].get("resourceFieldRef", {}).get("resource") == "limits.memory":
            env[e["name"]] = c["resources"]["limits"]["memory"]
        else:
            raise AssertionError("%s: an env source the test does not know: %r" % (container, e))
    return env, c


def health(devs):
    return [d[1][0] for d in devs]  # "H"ealthy / "U"nhealthy, in device order


def gpu_events(c):
    return [e for e in c.items("/api/v1/namespaces/default/events")
            if e["involvedObject"].get("name") == NODE and e["reason"] in ("GPUUnhealthy", "GPUHealthy")]


def test_device_plugin_layout_posts_warning_and_normal_events():
    c = k8s_util.cluster("health-events")
    for f in ("deploy/gpulabel/rbac.yaml", "deploy/gpulabel/admission-policy.yaml"):
        c.apply_file(f)
    c.create_node(k8s_util.gpu_node(NODE, gpus=0))
    c.create("/api/v1/namespaces/%s/pods" % NS, {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gpulabel-x"},
        "spec": {"serviceAccountName": SA, "nodeName": NODE,
                 "containers": [{"name": "gpulabel", "image": "gpulabel:0.1"}]}})
    token = c.kubectl("create", "token", SA, "-n", NS, "--duration", "1h",
                      "--bound-object-kind", "Pod", "--bound-object-name", "gpulabel-x").strip()
    kc = c.write_kubeconfig(os.path.join(_tmp, "kubeconfig"), token=token)
    nvml, events, dp_dir = (os.path.join(_tmp, n) for n in ("nvml.conf", "events", "device-plugins"))
    with open(nvml, "w") as f:
        f.write("driver=550.107.02\ncuda=12040\n" + FOUR)
    open(events, "w").close()
    kubelet = FakeKubelet(dp_dir, util.BUILD)
    kubelet.start()
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GPULABEL_", "GFD_"))
            and k not in ("NODE_NAME", "KUBECONFIG")}
    procs = []
    try:
        for name, argv in (("gpulabel", ["--kubeconfig", kc]),
                           ("device-plugin", ["--device-plugin-dir", dp_dir, "--sysfs-root", SYSFS])):
            env, ctr = manifest_env(name, NODE)
            if name == "gpulabel":
                util.check_eq([m["mountPath"] for m in ctr.get("volumeMounts", [])],
                              ["/var/run/secrets/kubernetes.io/serviceaccount"], "the labels' mounts")
                util.check_eq(env.get("GPULABEL_DEVICE_PLUGIN"), "false", "the labels container")
            else:
                util.check_eq(env.get("GPULABEL_NO_SYNC"), "true", "the plugin container: no token")
                util.check_eq([m["name"] for m in ctr.get("volumeMounts", [])], ["device-plugins"],
                              "the plugin's mounts (no token)")
            env.pop("GPULABEL_METRICS_ADDR", None)  # fixed ports; other tests cover the probes
            # what the chart's extraEnv gives both containers alike
            env["GPULABEL_HEALTH_RECOVERY_PERIOD"] = "2s"
            env["GPULABEL_V"] = "1"  # the line that says the health watch is on
            env.update(base, FAKE_NVML_CONFIG=nvml, FAKE_NVML_EVENTS=events)
            procs.append(k8s_util.Process([util.binary("gpulabel"), "--nvml-lib", util.fake_nvml()] + argv,
                                          os.path.join(_tmp, name + ".log"), env=env))
        lab, plug = procs
        pl = kubelet.wait_registration()
        pl.wait_update(lambda d: health(d) == list("HHHH"))
        k8s_util.wait_for("the labels container watching GPU health", lambda: lab.alive() or
                          "watching GPU health for the Node's Events" in lab.log())
        k8s_util.wait_for("the Node labelled", lambda: lab.alive() or c.get("/api/v1/nodes/" + NODE)
                          ["metadata"].get("labels", {}).get("aliyun.accelerator/nvidia_count") == "4")
        with open(events, "a") as f:
            f.write("xid 2 79\n")
        pl.wait_update(lambda d: health(d) == list("HHUH"))
        [w] = k8s_util.wait_for("the Warning Event", lambda: plug.alive() or gpu_events(c))
        util.check_eq((w["type"], w["reason"], w["message"], w["source"].get("component")),
                      ("Warning", "GPUUnhealthy", "GPU 2 (%s) is unhealthy: XID 79" % uuid(2),
                       "gpulabel"), "the Warning")
        k = len(pl.updates)
        pl.wait_update(lambda d: health(d) == list("HHHH"), timeout=60, after=k)
        evs = k8s_util.wait_for("the Normal Event", lambda: lab.alive() or
                                (len(gpu_events(c)) == 2 and gpu_events(c)))
        util.check_eq(sorted((e["type"], e["reason"]) for e in evs),
                      [("Normal", "GPUHealthy"), ("Warning", "GPUUnhealthy")], "one Event each")
        # every Event write came from the labels container's token; none was refused
        creates = c.audit(verb="create", resource="events")
        mine = [e for e in creates if (e.get("objectRef") or {}).get("namespace") == "default"
                and e["user"]["username"] == k8s_util.sa_user(NS, SA)]
        util.check_eq([e["responseStatus"]["code"] for e in mine], [201, 201], "gpulabel's Event writes")
        if "cannot" in plug.log() or "error" in plug.log().lower():
            raise AssertionError("the plugin container logged a failure: %s" % plug.log()[-800:])
    finally:
        for p in procs:
            p.stop()
        kubelet.stop()
