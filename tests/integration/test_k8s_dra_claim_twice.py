"""A pod naming one ResourceClaim twice, on the real control plane (k8s_util: kube-apiserver,
kube-controller-manager and kube-scheduler v1.37.2). The objects of
tests/scenarios/dra-claim-named-twice are created in the API and its pods one at a time, each
once the previous one has its outcome (bound; or failed, then deleted, as the differential
test's oracle deletes a pod after its turn). Each outcome must be what `gpusched simulate`
answers for the same objects with the uids the API server gave the pods: a bound pod's node
and its claims' devices, a failed pod's message (its PodScheduled condition, the
FailedScheduling text). The first pod is left to kube-scheduler's backoff once: its next
attempt must fail as simulate says a pod naming the claim, allocated by then, twice fails.
docs/dra.md has the why (PreBind writes each entry from PreFilter's copy of the claim)."""
import copy
import json
import os
import subprocess
import time

import k8s_util
import util
from k8s_util import wait_for

CASE = os.path.join("tests", "scenarios", "dra-claim-named-twice")
RES = "/apis/resource.k8s.io/v1"

_tmp = k8s_util.tmpdir("k8s-dra-twice-")


def path_of(o):
    kind, name = o["kind"], o["metadata"]["name"]
    if kind == "Pod":
        return "/api/v1/namespaces/%s/pods" % o["metadata"]["namespace"]
    if kind == "ResourceClaim":
        return RES + "/namespaces/%s/resourceclaims" % o["metadata"]["namespace"]
    return RES + "/" + {"DeviceClass": "deviceclasses", "ResourceSlice": "resourceslices"}[kind]


def simulate(objs):
    """gpusched simulate -o json of objs (one JSON document each)."""
    f = os.path.join(_tmp, "in-%d.yaml" % time.monotonic_ns())
    with open(f, "w") as out:
        out.write("\n---\n".join(json.dumps(o) for o in objs))
    p = subprocess.run([util.binary("gpusched"), "simulate", "-f", f, "-o", "json"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def condition(pod):
    for cnd in (pod.get("status") or {}).get("conditions") or []:
        if cnd["type"] == "PodScheduled" and cnd["status"] == "False":
            return cnd.get("message")
    return None


def devices(c, pod):
    """The devices of a bound pod's claims, as simulate -o json lists them."""
    ns = pod["metadata"]["namespace"]
    out = []
    for pc in pod["spec"]["resourceClaims"]:
        cl = c.get(RES + "/namespaces/%s/resourceclaims/%s" % (ns, pc["resourceClaimName"]))
        for r in cl["status"]["allocation"]["devices"]["results"]:
            out.append({"claim": ns + "/" + cl["metadata"]["name"], "request": r["request"],
                        "driver": r["driver"], "pool": r["pool"], "device": r["device"]})
    return out


def test_pod_naming_one_claim_twice_as_simulate_answers():
    c = k8s_util.cluster("dra-twice")
    objs = c.objects(os.path.join(CASE, "cluster.yaml"))
    pods = [o for o in objs if o["kind"] == "Pod"]
    for o in objs:
        if o["kind"] == "Node":
            c.create_node(o)
        elif o["kind"] != "Pod":
            c.create(path_of(o), o)
    wait_for("the default ServiceAccount",
             lambda: c.get_or_none("/api/v1/namespaces/default/serviceaccounts/default"))
    ks = k8s_util.kube_scheduler(c)
    real, uids, retry = {}, {}, None
    try:
        for src in pods:
            pod = copy.deepcopy(src)
            del pod["metadata"]["uid"]
            pod["spec"]["terminationGracePeriodSeconds"] = 0
            name = pod["metadata"]["name"]
            at = path_of(pod) + "/" + name
            t0 = time.monotonic()
            uids[name] = c.create(path_of(pod), pod)["metadata"]["uid"]

            def outcome():
                p = c.get(at)
                return p if p["spec"].get("nodeName") or condition(p) else None
            p = wait_for("an outcome of pod " + name, outcome)
            print("%s: %s after %.2f s" % (name, p["spec"].get("nodeName") or condition(p),
                                          time.monotonic() - t0))
            if p["spec"].get("nodeName"):
                real[name] = ("scheduled", p["spec"]["nodeName"], devices(c, p))
                continue
            real[name] = ("unschedulable", condition(p))
            if name == "twice":
                # the claim as the failed PreBind left it, and the next attempt's answer
                shared = c.get(RES + "/namespaces/default/resourceclaims/shared")
                first = condition(p)
                later = wait_for("the retry of " + name,
                                 lambda: (condition(c.get(at)) or first) != first and c.get(at))
                print("%s: retried after %.2f s: %s" % (name, time.monotonic() - t0, condition(later)))
                retry = (shared, condition(later))
            c.delete(at, grace=0)
            wait_for(name + " gone", lambda: c.get_or_none(at) is None)
    finally:
        ks.stop()

    # simulate, with the uids the API server gave
    mine = copy.deepcopy(objs)
    for o in mine:
        if o["kind"] == "Pod":
            o["metadata"]["uid"] = uids[o["metadata"]["name"]]
    sim = simulate(mine)
    want = {}
    for s in sim["scheduled"]:
        want[s["pod"].split("/")[1]] = ("scheduled", s["node"], s["claims"])
    for u in sim["unschedulable"]:
        want[u["pod"].split("/")[1]] = ("unschedulable", u["message"])
    assert real == want, (real, want)

    # the first entry's allocation stays (gpu-0), nobody reserved, the finalizer kept
    shared, again = retry
    assert [r["device"] for r in shared["status"]["allocation"]["devices"]["results"]] == ["gpu-0"], shared
    assert not shared["status"].get("reservedFor"), shared
    assert "resource.kubernetes.io/delete-protection" in shared["metadata"].get("finalizers", []), shared
    # the retry: simulate of the pod alone, the claim as the API server stored it
    alone = [o for o in mine if o["kind"] != "Pod" or o["metadata"]["name"] == "twice"]
    for o in alone:
        if o["kind"] == "ResourceClaim" and o["metadata"]["name"] == "shared":
            o["status"] = {"allocation": shared["status"]["allocation"]}
    sim = simulate(alone)
    assert not sim["scheduled"], sim
    assert [u["message"] for u in sim["unschedulable"]] == [again], (sim, again)
