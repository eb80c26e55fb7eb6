# run.py: python /usr/bin/python3
"""DRA end to end on the real control plane (kube-apiserver, kube-controller-manager and
kube-scheduler v1.37.2, k8s_util), with gpulabel in DRA mode on a GPU node (fake NVML,
node-bound token, deploy/gpulabel/rbac.yaml and dra.yaml) and the kubelet's DRA side played by
tests/kubelet/fake_dra_kubelet.py:

- the seed's pod in its DRA edition (a ResourceClaim selecting productName "Tesla M40"):
  kube-scheduler allocates one of the node's GPUs from gpulabel's slice and binds the pod; the
  kubelet's NodePrepareResources gets the CDI name, whose spec names the allocated GPU; the
  pod's deletion unprepares it;
- the seed's pod as it is (`nvidia.com/gpu: 1`), served from a device through the DeviceClass's
  extendedResourceName;
- a kubelet restart (registered again), an agent restart (the prepared claim answered from the
  checkpoint), and a GPU lost (its device tainted: a claim for both GPUs waits) and found again
  (the taint goes: the claim is allocated)."""
import json
import os
import sys
import time

import k8s_util
import util

SKIP = None
try:
    import grpc  # noqa: F401
except ImportError as e:
    SKIP = "needs Debian's python3-grpcio under /usr/bin/python3: %s" % e
if not SKIP and not os.path.exists(os.path.join(util.BUILD, "gen", "python", "dra_pb2.py")):
    SKIP = "build/gen/python/dra_pb2.py is not built (needs protoc)"
if not SKIP:
    sys.path.insert(0, os.path.join(util.SRC, "tests", "kubelet"))
    from fake_dra_kubelet import FakeDraKubelet  # noqa: E402

NS, SA = "kube-system", "gpulabel"
NODE = "dra-e2e"
M40 = 'device name="Tesla M40" memory=12802064384 cc=5.2 repeat=2\n'
WAIT = 60

_tmp = k8s_util.tmpdir("k8s-dra-e2e-")
_s = {}


def uuid(i):
    return "GPU-00000000-fa4e-4e00-8000-%012x" % i


def env():
    s = _s
    if s:
        return s
    c = k8s_util.cluster("dra-e2e", run_pods=True)
    c.apply_file("deploy/gpulabel/rbac.yaml")
    c.apply_file("deploy/gpulabel/admission-policy.yaml")  # the Events' policy too
    c.apply_file("deploy/gpulabel/dra.yaml")
    c.create_node(k8s_util.gpu_node(NODE, gpus=0))
    c.wait_nodes_ready([NODE])
    d = os.path.join(_tmp, "node")
    s.update(c=c, dir=d, reg=os.path.join(d, "plugins_registry"), plugins=os.path.join(d, "plugins"),
             cdi=os.path.join(d, "cdi"), nvml=os.path.join(d, "nvml.conf"), events=os.path.join(d, "events"))
    for k in ("reg", "plugins", "cdi"):
        os.makedirs(s[k], exist_ok=True)
    with open(s["nvml"], "w") as f:
        f.write("driver=550.107.02\ncuda=12040\n" + M40)
    open(s["events"], "w").close()
    token = c.kubectl("create", "token", SA, "-n", NS, "--duration", "1h", "--bound-object-kind",
                      "Node", "--bound-object-name", NODE).strip()
    s["kc"] = c.write_kubeconfig(os.path.join(d, "kubeconfig"), token=token)
    s["kubelet"] = FakeDraKubelet(s["reg"], util.BUILD)
    s["kubelet"].start()
    s["agent"] = start_agent()
    s["sched"] = k8s_util.kube_scheduler(c)
    wait_devices(lambda d: set(d) == {"gpu-0", "gpu-1"}, "the node's two GPUs published")
    s["kubelet"].wait_registration()
    return s


def start_agent():
    s = _s
    e = {k: v for k, v in os.environ.items() if not k.startswith("GPULABEL_")}
    e.update(FAKE_NVML_CONFIG=s["nvml"], FAKE_NVML_EVENTS=s["events"])
    return k8s_util.Process(
        [util.binary("gpulabel"), "--kubeconfig", s["kc"], "--node-name", NODE, "--nvml-lib",
         util.fake_nvml(), "--mode", "dra", "--sleep-interval", "1s", "--health-recovery-period", "1s",
         "--kubelet-registrar-dir", s["reg"], "--kubelet-plugins-dir", s["plugins"],
         "--cdi-root", s["cdi"]],
        os.path.join(s["dir"], "gpulabel-%d.log" % time.monotonic_ns()), env=e)


def devices():
    return {d["name"]: d for sl in _s["c"].items("/apis/resource.k8s.io/v1/resourceslices")
            if sl["spec"].get("nodeName") == NODE for d in sl["spec"].get("devices", [])}


def wait_devices(pred, what):
    k8s_util.wait_for(what, lambda: _s["agent"].alive() or pred(devices()), timeout=WAIT)


def claim_obj(name, count=1, product="Tesla M40"):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu.nvidia.com", "count": count,
                "selectors": [{"cel": {"expression":
                                       'device.attributes["gpu.nvidia.com"].productName == "%s"' % product}}]}}]}}}


def pod_obj(name, claim=None, gpus=0):
    ctr = {"name": "cuda", "image": "nvidia/cuda:12.4.0-base-ubuntu22.04", "command": ["sleep", "3600"],
           "resources": {}}
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
         "spec": {"containers": [ctr], "terminationGracePeriodSeconds": 0}}
    if claim:
        p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
        ctr["resources"]["claims"] = [{"name": "gpu"}]
    if gpus:
        ctr["resources"]["limits"] = {"nvidia.com/gpu": str(gpus)}
    return p


def bound(name):
    def check():
        _s["sched"].alive()
        p = _s["c"].get_or_none("/api/v1/namespaces/default/pods/" + name)
        return p if p and p["spec"].get("nodeName") else None
    try:
        k8s_util.wait_for("pod %s bound" % name, check, timeout=WAIT)
    except AssertionError as e:
        p = _s["c"].get_or_none("/api/v1/namespaces/default/pods/" + name) or {}
        raise AssertionError("%s: conditions %r; kube-scheduler: %s" % (
            e, p.get("status", {}).get("conditions"), " | ".join(_s["sched"].log().splitlines()[-8:])))
    return _s["c"].get("/api/v1/namespaces/default/pods/" + name)


def claim(name):
    return _s["c"].get("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/" + name)


def allocated(cl):
    return [(r["driver"], r["pool"], r["device"]) for r in
            cl.get("status", {}).get("allocation", {}).get("devices", {}).get("results", [])]


def cdi_spec(uid):
    with open(os.path.join(_s["cdi"], "k8s.gpu.nvidia.com-claim_%s.json" % uid)) as f:
        return json.load(f)


def prepare_and_check(cl):
    """The kubelet's NodePrepareResources for claim cl: the CDI name, and its spec naming the
    allocated GPU. Returns the device's name."""
    uid = cl["metadata"]["uid"]
    [(drv, pool, dev)] = allocated(cl)
    util.check_eq((drv, pool), ("gpu.nvidia.com", NODE), "allocated from gpulabel's pool")
    r = _s["kubelet"].prepare(("default", cl["metadata"]["name"], uid))[uid]
    util.check_eq(r.error, "", "NodePrepareResources")
    util.check_eq([(d.device_name, list(d.cdi_device_ids)) for d in r.devices],
                  [(dev, ["k8s.gpu.nvidia.com/claim=%s-%s" % (uid, dev)])], "prepared devices")
    spec = cdi_spec(uid)
    util.check_eq([(d["name"], d["containerEdits"]["env"]) for d in spec["devices"]],
                  [("%s-%s" % (uid, dev), ["NVIDIA_VISIBLE_DEVICES=" + uuid(int(dev[4:]))])],
                  "the CDI spec names the allocated GPU")
    return dev


def delete_and_unprepare(pod, cl):
    c = _s["c"]
    c.delete("/api/v1/namespaces/default/pods/" + pod, grace=0)
    k8s_util.wait_for("pod %s gone" % pod,
                      lambda: not c.get_or_none("/api/v1/namespaces/default/pods/" + pod), timeout=WAIT)
    uid = cl["metadata"]["uid"]
    r = _s["kubelet"].unprepare(("default", cl["metadata"]["name"], uid))
    util.check_eq(r[uid].error, "", "NodeUnprepareResources")
    if os.path.exists(os.path.join(_s["cdi"], "k8s.gpu.nvidia.com-claim_%s.json" % uid)):
        raise AssertionError("the CDI spec outlived the unprepare")


def forget_claim(name):
    """Deletes a claim and waits until it is gone (the resource-claim controller drops its
    finalizer once no pod uses it): its devices are free again."""
    c = _s["c"]
    path = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/" + name
    c.delete(path)
    k8s_util.wait_for("claim %s gone" % name, lambda: not c.get_or_none(path), timeout=WAIT)


def test_seed_pod_dra_edition_claim_allocated_prepared_unprepared():
    s = env()
    c = s["c"]
    c.create("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims", claim_obj("seed-gpu"))
    c.create("/api/v1/namespaces/default/pods", pod_obj("seed-dra", claim="seed-gpu"))
    p = bound("seed-dra")
    util.check_eq(p["spec"]["nodeName"], NODE, "the node")
    cl = claim("seed-gpu")
    prepare_and_check(cl)
    delete_and_unprepare("seed-dra", cl)
    forget_claim("seed-gpu")


def test_seed_pod_nvidia_gpu_1_through_the_device_class():
    s = env()
    c = s["c"]
    c.create("/api/v1/namespaces/default/pods", pod_obj("seed-ext", gpus=1))
    p = bound("seed-ext")
    util.check_eq(p["spec"]["nodeName"], NODE, "the node")
    k8s_util.wait_for("the pod's extended-resource claim", lambda: c.get(
        "/api/v1/namespaces/default/pods/seed-ext").get("status", {}).get("extendedResourceClaimStatus"),
        timeout=WAIT)
    st = c.get("/api/v1/namespaces/default/pods/seed-ext")["status"]["extendedResourceClaimStatus"]
    cl = claim(st["resourceClaimName"])
    prepare_and_check(cl)
    delete_and_unprepare("seed-ext", cl)
    # the scheduler's claim for the extended resource goes with its pod
    k8s_util.wait_for("the extended-resource claim gone", lambda: not c.get_or_none(
        "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/" + st["resourceClaimName"]),
        timeout=WAIT)


def test_kubelet_restart_agent_restart_and_a_gpu_lost_and_healed():
    s = env()
    c = s["c"]
    # the kubelet restarts: the plugin is registered again
    n = len(s["kubelet"].registrations)
    s["kubelet"].restart()
    s["kubelet"].wait_registration(n + 1)
    # a claim prepared before the agent restarts is answered from the checkpoint after
    c.create("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims", claim_obj("keep"))
    c.create("/api/v1/namespaces/default/pods", pod_obj("keep", claim="keep"))
    bound("keep")
    cl = claim("keep")
    prepare_and_check(cl)
    s["agent"].stop()
    s["agent"] = start_agent()
    s["kubelet"].restart()  # the agent's sockets are new
    s["kubelet"].wait_registration(n + 2)
    uid = cl["metadata"]["uid"]
    r = s["kubelet"].prepare(("default", "keep", uid))[uid]
    util.check_eq([d.device_name for d in r.devices], [allocated(cl)[0][2]], "after the agent restart")
    if "1 prepared claims from the checkpoint" not in s["agent"].log():
        raise AssertionError("the checkpoint was not read: %s" % s["agent"].log()[-1000:])
    delete_and_unprepare("keep", cl)
    forget_claim("keep")
    # GPU 1 lost: its device is tainted, and a claim for both GPUs cannot be allocated
    with open(s["events"], "a") as f:
        f.write("lost 1\n")
    wait_devices(lambda d: [t["key"] for t in d["gpu-1"].get("taints", [])] == ["gpu.nvidia.com/gpu-lost"],
                 "gpu-1 tainted gpu-lost")
    c.create("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims", claim_obj("both", count=2))
    c.create("/api/v1/namespaces/default/pods", pod_obj("both", claim="both"))
    k8s_util.wait_for("the scheduler's verdict on pod both", lambda: [
        x for x in c.get("/api/v1/namespaces/default/pods/both").get("status", {}).get("conditions", [])
        if x["type"] == "PodScheduled" and x["status"] == "False"], timeout=WAIT)
    util.check_eq(c.get("/api/v1/namespaces/default/pods/both")["spec"].get("nodeName"), None,
                  "no node while gpu-1 is tainted")
    # found again: the taint goes after the recovery period, and the claim is allocated
    with open(s["events"], "a") as f:
        f.write("found 1\n")
    wait_devices(lambda d: not d["gpu-1"].get("taints"), "gpu-1 healed")
    bound("both")
    cl = claim("both")
    util.check_eq(sorted(r[2] for r in allocated(cl)), ["gpu-0", "gpu-1"], "both GPUs")
    c.delete("/api/v1/namespaces/default/pods/both", grace=0)
    k8s_util.wait_for("pod both gone",
                      lambda: not c.get_or_none("/api/v1/namespaces/default/pods/both"), timeout=WAIT)
    forget_claim("both")
