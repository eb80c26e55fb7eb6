"""gpusched serve --profile gpu on the real control plane (k8s_util: kube-apiserver and
kube-controller-manager v1.37.2, whose resource-claim controller makes template claims): our
GPUPlacement score counts a node's DRA GPUs (the devices the DeviceClass serving
nvidia.com/gpu selects, those claims hold as in use) beside a device plugin's, as simulate
does (tests/scenarios/gpu-profile-dra-mixed). kube-scheduler has no GPUPlacement, so the
placements are the formula's, worked by hand:

- nodes: dp (a device plugin's 4 nvidia.com/gpu), dra-a and dra-b (4 GPUs each in a
  ResourceSlice, 16 cpu), cpu (no GPU, 4 cpu);
- first: a 1-GPU pod pinned to dra-a (its extended-resource claim holds one device there);
- then, one at a time, each once the previous is bound: "pack" (nvidia.com/gpu 1): dra-a
  2/4 -> 50 over dp and dra-b 1/4 -> 25 (counting no DRA device, dp wins); "claim" (a
  template claim of one device of the class): dra-a 3/4 -> 75 over dra-b 1/4 (counting no
  claim, a pod without GPUs: dra-b, the emptier); "web" (no GPU): 0 on the three GPU nodes,
  100 on cpu (counting no DRA device, 100 on the DRA nodes too, which have more room).
Without the DRA devices counted (gpusched before this test) serve placed pack on dp, claim on
dra-b and web on dra-a.
"""
import json

import k8s_util
import util
from k8s_util import wait_for
from serve_util import Serve

NS_SA, SA = "kube-system", "gpusched"
NS = "gpuplace"
DRIVER = "gpu.example.com"
RES = "/apis/resource.k8s.io/v1"

_tmp = k8s_util.tmpdir("k8s-serve-gpuplace-")


def world(c):
    c.apply_file("deploy/gpusched/rbac.yaml")
    c.create_node(k8s_util.gpu_node("gp-dp", gpus=4, cpu="16"))
    for n in ("gp-dra-a", "gp-dra-b"):
        c.create_node(k8s_util.gpu_node(n, gpus=0, cpu="16"))
    c.create_node(k8s_util.gpu_node("gp-cpu", gpus=0, cpu="4"))
    c.apply([{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gp-gpu"},
              "spec": {"extendedResourceName": "nvidia.com/gpu",
                       "selectors": [{"cel": {"expression": "device.driver == '%s'" % DRIVER}}]}}])
    for n in ("gp-dra-a", "gp-dra-b"):
        c.create(RES + "/resourceslices",
                 {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                  "metadata": {"name": n + "-gpus"},
                  "spec": {"driver": DRIVER, "nodeName": n,
                           "pool": {"name": n, "generation": 1, "resourceSliceCount": 1},
                           "devices": [{"name": "gpu-%d" % i} for i in range(4)]}})
    c.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    wait_for("the default ServiceAccount of " + NS,
             lambda: c.get_or_none("/api/v1/namespaces/%s/serviceaccounts/default" % NS))
    c.create(RES + "/namespaces/%s/resourceclaimtemplates" % NS,
             {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
              "metadata": {"name": "one-gpu"},
              "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                  "deviceClassName": "gp-gpu", "allocationMode": "ExactCount", "count": 1}}]}}}})


def pod(name, resources, node=None, claims=None):
    spec = {"schedulerName": "gpusched", "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": resources}]}
    if node:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node}
    if claims:
        spec["resourceClaims"] = claims
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def bound_to(c, name):
    p = c.get_or_none("/api/v1/namespaces/%s/pods/%s" % (NS, name))
    return p and p["spec"].get("nodeName")


def test_serve_gpu_profile_packs_dra_gpus_like_device_plugin_gpus():
    c = k8s_util.cluster("serve-gpuplace")
    world(c)
    kc = c.sa_kubeconfig(NS_SA, SA)
    sv = Serve(None, ["-v", "5", "--profile", "gpu"], _tmp, name="gpuplace", kubeconfig=kc,
               wrap=k8s_util.PDEATHSIG)
    gpu = {"requests": {"cpu": "100m"}, "limits": {"nvidia.com/gpu": "1"}}
    pods = [("first", pod("first", gpu, node="gp-dra-a"), "gp-dra-a"),
            ("pack", pod("pack", gpu), "gp-dra-a"),
            ("claim", pod("claim", {"requests": {"cpu": "100m"}, "claims": [{"name": "gpu"}]},
                          claims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]), "gp-dra-a"),
            ("web", pod("web", {"requests": {"cpu": "1", "memory": "1Gi"}}), "gp-cpu")]
    try:
        got = {}
        for name, obj, _ in pods:
            c.create("/api/v1/namespaces/%s/pods" % NS, obj)
            got[name] = wait_for("%s bound (gpusched's log: %s)" % (name, sv.log_tail),
                                 lambda name=name: sv._dead() or bound_to(c, name), timeout=60)
        util.check_eq(got, {name: want for name, _, want in pods},
                      "placements under --profile gpu")
        # the DRA pods' devices: all on dra-a (gpu-0..2 in some order)
        held = sorted(r["pool"] + "/" + r["device"]
                      for cl in c.items(RES + "/namespaces/%s/resourceclaims" % NS)
                      for r in ((cl.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results", []))
        util.check_eq([h.split("/")[0] for h in held], ["gp-dra-a"] * 3,
                      "the devices of the claims (%s)" % json.dumps(held))
    finally:
        sv.stop()
