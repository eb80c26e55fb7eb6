"""gpusched serve and Dynamic Resource Allocation on the real control plane (k8s_util: the real
kube-apiserver, kube-controller-manager with the resource-claim controller), judged by the real
kube-scheduler v1.37.2: the same pods, once under each, on twin nodes and devices of their own
(prefix "ks-" for kube-scheduler, "gs-" for gpusched), must end the same way:

- a pod with a ResourceClaim, a pod with a ResourceClaimTemplate (its claim made by the
  resource-claim controller), two pods created together whose claims want the one device of
  its kind (the second must not get it while the first's allocation is in flight), and a pod
  whose bind the API server refuses (a ValidatingAdmissionPolicy): PreBind allocated and
  reserved its claim, Unreserve took the reservation back, the allocation stays;
- placements, each claim's status.allocation (results, config, node selector; the timestamp
  only as present), its finalizers and reservedFor, and the FailedScheduling message of the
  pod left without a device.
gpusched runs with deploy/gpusched/rbac.yaml's role and must not be refused anything.

Extended resources that a DeviceClass serves (nvidia.com/gpu by extendedResourceName, an
implicit deviceclass.resource.kubernetes.io/<class> name), pods on nodes of their own: the claim
PreBind creates (generateName, annotation, owner, requests, allocation, reservedFor), the pod's
status.extendedResourceClaimStatus, no claim where a device plugin serves the resource, the
claim deleted after a refused bind, one left over deleted by PostFilter.
"""
import copy
import json
import os

import k8s_util
import util
from k8s_util import wait_for
from serve_util import Serve

NS_SA, SA = "kube-system", "gpusched"
DRIVER = "gpu.example.com"  # behind the prefix: "ks-gpu.example.com"

_tmp = k8s_util.tmpdir("k8s-serve-dra-tmp-")
_state = {}


def setup():
    if not _state:
        c = k8s_util.cluster("serve-dra")
        c.apply_file("deploy/gpusched/rbac.yaml")
        kc = c.sa_kubeconfig(NS_SA, SA)
        # the bind of any pod named bind-fails is refused by the API server
        c.apply([{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
                  "metadata": {"name": "no-bind-fails"},
                  "spec": {"failurePolicy": "Fail",
                           "matchConstraints": {"resourceRules": [{
                               "apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                               "resources": ["pods/binding"]}]},
                           "validations": [{"expression": "object.metadata.name != 'bind-fails'",
                                            "message": "binding bind-fails is refused"}]}},
                 {"apiVersion": "admissionregistration.k8s.io/v1",
                  "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "no-bind-fails"},
                  "spec": {"policyName": "no-bind-fails", "validationActions": ["Deny"]}}])
        policy_in_effect(c)
        for prefix in ("ks-", "gs-"):
            world(c, prefix)
        _state["c"], _state["kc"] = c, kc
    return _state["c"], _state["kc"]


def policy_in_effect(c):
    """The API server loads admission policies in the background: wait until a dry-run bind of
    a probe pod named bind-fails is refused (else the first scheduler's bind could land)."""
    namespace(c, "vap-probe")
    c.create("/api/v1/namespaces/vap-probe/pods",
             {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bind-fails"},
              "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}})

    def refused():
        st, out = c.request("POST", "/api/v1/namespaces/vap-probe/pods/bind-fails/binding?dryRun=All",
                            {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "bind-fails"},
                             "target": {"apiVersion": "v1", "kind": "Node", "name": "nowhere"}},
                            ok=(200, 201, 403, 404, 422))
        return st in (403, 422) and "no-bind-fails" in json.dumps(out)
    wait_for("the ValidatingAdmissionPolicy in effect", refused)


def device(name, model):
    return {"name": name, "attributes": {"model": {"string": model}, "index": {"int": int(name[-1])}},
            "capacity": {"memory": {"value": "16Gi"}}}


def world(c, p):
    """Two nodes, a DeviceClass with a config, a slice per node: p+"a" has three small GPUs,
    p+"b" one big, one small and one fpga."""
    for n in ("a", "b"):
        c.create_node(k8s_util.gpu_node(p + n, gpus=0, labels={"dra-test": p.strip("-")}))
    c.apply([{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": p + "gpu"},
              "spec": {"selectors": [{"cel": {"expression": "device.driver == '%s'" % (p + DRIVER)}}],
                       "config": [{"opaque": {"driver": p + DRIVER, "parameters": {"class": "x"}}}]}}])
    devs = {"a": [device("a0", "small"), device("a1", "small"), device("a2", "small")],
            "b": [device("b0", "big"), device("b1", "small"), device("b2", "fpga")]}
    for n in ("a", "b"):
        c.create("/apis/resource.k8s.io/v1/resourceslices",
                 {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                  "metadata": {"name": p + n + "-" + DRIVER},
                  "spec": {"driver": p + DRIVER, "nodeName": p + n,
                           "pool": {"name": p + n, "generation": 1, "resourceSliceCount": 1},
                           "devices": devs[n]}})


def claim_spec(p, model, count=1, config=False):
    spec = {"devices": {"requests": [{"name": "gpus", "exactly": {
        "deviceClassName": p + "gpu", "count": count, "allocationMode": "ExactCount",
        "selectors": [{"cel": {"expression": "device.attributes['%s'].model == '%s'" % (p + DRIVER, model)}}]}}]}}
    if config:
        spec["devices"]["config"] = [{"requests": ["gpus"],
                                      "opaque": {"driver": p + DRIVER, "parameters": {"claim": "yes"}}}]
    return spec


def pod(name, scheduler, claims, node=None):
    spec = {"schedulerName": scheduler, "terminationGracePeriodSeconds": 0,
            "resourceClaims": claims,
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": "100m"},
                                          "claims": [{"name": cl["name"]} for cl in claims]}}]}
    if node:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def namespace(c, ns):
    c.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    wait_for("the default ServiceAccount of " + ns,
             lambda: c.get_or_none("/api/v1/namespaces/%s/serviceaccounts/default" % ns))


def claims_path(ns):
    return "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims" % ns


def create_pods(c, ns, p, scheduler):
    """The claims, the template and the pods; the two rivals are created one after the other
    before the scheduler starts, so that both wait when it does."""
    for name, model, cfg in (("single", "big", True), ("rival-1", "fpga", False),
                             ("rival-2", "fpga", False), ("doomed", "small", False)):
        # compact JSON, as kubectl and client-go send it: the API server keeps opaque parameters
        # as sent, and a JSON client's later write of the claim (gpusched's finalizer patch)
        # would otherwise be refused, "spec: field is immutable" (docs/serve.md)
        c.request("POST", claims_path(ns), json.dumps(
            {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
             "spec": claim_spec(p, model, config=cfg)}, separators=(",", ":")))
    c.create("/apis/resource.k8s.io/v1/namespaces/%s/resourceclaimtemplates" % ns,
             {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
              "metadata": {"name": "two-small"}, "spec": {"spec": claim_spec(p, "small", count=2)}})
    pods = [pod("claim-pod", scheduler, [{"name": "gpu", "resourceClaimName": "single"}]),
            pod("tmpl-pod", scheduler, [{"name": "gpus", "resourceClaimTemplateName": "two-small"}]),
            pod("rival-1", scheduler, [{"name": "gpu", "resourceClaimName": "rival-1"}]),
            pod("rival-2", scheduler, [{"name": "gpu", "resourceClaimName": "rival-2"}]),
            pod("bind-fails", scheduler, [{"name": "gpu", "resourceClaimName": "doomed"}], node=p + "b")]
    for x in pods:
        c.create("/api/v1/namespaces/%s/pods" % ns, x)
    # the template's claim, made by the resource-claim controller
    wait_for("tmpl-pod's claim", lambda: any(
        (s.get("resourceClaimName") or "") for s in
        (c.get("/api/v1/namespaces/%s/pods/tmpl-pod" % ns).get("status") or {}).get("resourceClaimStatuses") or []))


RIVALS = ("rival-1", "rival-2")


def rivals(placed):
    """(winner, loser) of the two rivals for the one fpga, or None while neither is bound.
    Which one wins is not fixed in kube-scheduler: the two are alike but for their names and
    both wait when it starts, and it queues the pods that exist at its start in the order its
    pod informer hands them over, which varies from run to run (client-go's watch-list gathers
    the initial objects in a map and hands over the map's iteration order: a rotation of name
    order that starts at a random slot). Its -v=3 log shows it: "Handlers synced" (every
    ResourceSlice synced) before the first attempt, then the rivals tried in the order of their
    "Add event for unscheduled pod" lines; rival-2 first in 6 of 17 runs on an idle machine.
    So the runs are compared by role, winner and loser, not by name."""
    won = [n for n in RIVALS if placed.get(n)]
    if len(won) > 1:
        raise AssertionError("both rivals bound: %s" % placed)
    if not won:
        return None
    return won[0], RIVALS[1 - RIVALS.index(won[0])]


def observe(c, ns, p):
    """The run's outcome, with the prefix taken out of names, once it has settled, else None
    (_state["unmet"] says what it waits for): three pods bound (one of them a rival), the other
    rival failed, the doomed claim allocated and (between two attempts) reserved for nobody.
    The outcome is made of the very reads that found it settled: each new attempt of bind-fails
    reserves the doomed claim again for a moment, which a later read could catch."""
    pods = {x["metadata"]["name"]: x for x in c.pods(ns)}
    placed = {n: x["spec"].get("nodeName") for n, x in pods.items()}
    _state["unmet"] = "placements %s" % placed
    if not all(placed.get(n) for n in ("claim-pod", "tmpl-pod")):
        return None
    roles = rivals(placed)
    if not roles:
        return None
    if placed.get("bind-fails"):
        raise AssertionError("bound: %s" % placed)
    winner, loser = roles
    _state["unmet"] = "%s's FailedScheduling event" % loser
    ev = [e for e in c.events(ns, "FailedScheduling") if e["regarding"]["name"] == loser]
    if not ev:
        return None
    claims = {x["metadata"]["name"]: x for x in c.items(claims_path(ns))}
    doomed = (claims.get("doomed") or {}).get("status") or {}
    _state["unmet"] = "the doomed claim allocated and not reserved: %s" % doomed
    if not doomed.get("allocation") or doomed.get("reservedFor"):
        return None

    def strip(v):
        if isinstance(v, str):
            # the rivals by role (their pods and claims share their names)
            v = v.replace(winner, "\0W").replace(loser, "rival-loser").replace("\0W", "rival-winner")
            return v.replace(p, "P-")
        if isinstance(v, list):
            return [strip(x) for x in v]
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items()}
        return v
    out = {"placement": {strip(n): strip(x) for n, x in sorted(placed.items())}, "claims": {}}
    for n, x in sorted(pods.items()):
        for pc in x["spec"]["resourceClaims"]:
            cname = pc.get("resourceClaimName")
            if not cname:
                cname = next((s.get("resourceClaimName") for s in
                              (x.get("status") or {}).get("resourceClaimStatuses") or []
                              if s["name"] == pc["name"]), None)
            cl = claims.get(cname) or {}
            st = copy.deepcopy(cl.get("status") or {})
            alloc = st.get("allocation")
            if alloc is not None:
                alloc["allocationTimestamp"] = "set" if alloc.get("allocationTimestamp") else "unset"
            out["claims"][strip("%s/%s" % (n, pc["name"]))] = strip({
                "allocation": alloc,
                "reservedFor": [r["name"] for r in st.get("reservedFor") or []],
                "finalizers": sorted((cl.get("metadata") or {}).get("finalizers") or [])})
    out["loser's message"] = strip(ev[0]["note"])
    return out


def run(scheduler_name):
    """Creates the pods of one scheduler in its namespace, runs the scheduler until the run
    settles and stops it (also when the run fails); returns the outcome and, for gpusched,
    its exit status on SIGTERM."""
    c, kc = setup()
    ks = scheduler_name == "default-scheduler"
    p = "ks-" if ks else "gs-"
    ns = p + "dra"
    namespace(c, ns)
    create_pods(c, ns, p, scheduler_name)
    if ks:
        proc = k8s_util.kube_scheduler(c, "-v=3")
        dead = proc.alive  # (raises when it died)
    else:
        proc = Serve(None, ["-v", "5"], _tmp, name="dra", kubeconfig=kc, wrap=k8s_util.PDEATHSIG)
        dead = proc._dead
    try:
        try:
            out = wait_for("the %s run to settle" % scheduler_name, lambda: dead() or observe(c, ns, p),
                           timeout=120)
        except AssertionError as e:
            raise AssertionError("%s (waiting for %s)" % (e, _state.get("unmet")))
        return out, None if ks else proc.stop()
    except AssertionError as e:
        tail = " | ".join(proc.log().splitlines()[-40:]) if ks else proc.log_tail(40)
        raise AssertionError("%s; %s's log: %s" % (e, scheduler_name, tail))
    finally:
        if ks:
            proc.stop()
        else:
            proc.kill()


def test_same_placements_and_allocations_as_kube_scheduler():
    ks, _ = run("default-scheduler")
    gs, status = run("gpusched")
    c, _ = setup()
    util.check_eq(gs["placement"], ks["placement"], "placements, against kube-scheduler's")
    # the devices per request first (the clearest difference), then the whole status
    def devices(o):
        return {k: [(r["request"], r["driver"], r["pool"], r["device"])
                    for r in ((v["allocation"] or {}).get("devices") or {}).get("results") or []]
                for k, v in o["claims"].items()}
    util.check_eq(devices(gs), devices(ks), "devices per claim, against kube-scheduler's")
    for k in sorted(ks["claims"]):
        util.check_eq(gs["claims"].get(k), ks["claims"][k], "claim of %s, against kube-scheduler's" % k)
    util.check_eq(gs["loser's message"], ks["loser's message"],
                  "the losing rival's FailedScheduling message, against kube-scheduler's")
    # nothing gpusched asked for was refused
    forbidden = [e for e in c.audit(user=k8s_util.sa_user(NS_SA, SA)) if e["responseStatus"]["code"] == 403]
    util.check_eq([(e["verb"], e["requestURI"]) for e in forbidden], [], "requests RBAC refused")
    # Unreserve: the failed bind's pod taken off its claim by a status patch
    patches = [e for e in c.audit(user=k8s_util.sa_user(NS_SA, SA), verb="patch", resource="resourceclaims",
                                  subresource="status") if e["objectRef"].get("name") == "doomed"]
    if not patches:
        raise AssertionError("no status patch of the doomed claim after its pod's bind failed")
    util.check_eq(status, 0, "gpusched's exit status on SIGTERM")


# ---- shares of a device, PostFilter's deallocation, binding conditions (each scenario on
# nodes and devices of its own, prefix "ks-"/"gs-" plus the scenario's letter) ----

UUID = r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"


def scenario_world(c, p, devices, node_names=("a",), cls_extra=None):
    """Nodes p+n, a DeviceClass p+"gpu" of driver p+DRIVER, one slice per node with
    devices[n] (a list of device objects)."""
    for n in node_names:
        c.create_node(k8s_util.gpu_node(p + n, gpus=0, labels={"dra-test": p.strip("-")}))
    c.apply([{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": p + "gpu"},
              "spec": {"selectors": [{"cel": {"expression": "device.driver == '%s'" % (p + DRIVER)}}]}}])
    for n in node_names:
        c.create("/apis/resource.k8s.io/v1/resourceslices",
                 {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                  "metadata": {"name": p + n + "-" + DRIVER},
                  "spec": {"driver": p + DRIVER, "nodeName": p + n,
                           "pool": {"name": p + n, "generation": 1, "resourceSliceCount": 1},
                           "devices": devices[n]}})


def create_claim(c, ns, name, spec):
    c.request("POST", claims_path(ns), json.dumps(
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
         "spec": spec}, separators=(",", ":")))


def exactly(p, capacity=None, selector=None):
    ex = {"deviceClassName": p + "gpu", "allocationMode": "ExactCount", "count": 1}
    if capacity:
        ex["capacity"] = {"requests": capacity}
    if selector:
        ex["selectors"] = [{"cel": {"expression": selector}}]
    return {"devices": {"requests": [{"name": "gpu", "exactly": ex}]}}


def start_scheduler(c, kc, scheduler, name, plugin_config=None, more_profiles=None):
    """kube-scheduler or gpusched serve; plugin_config: the profile's pluginConfig (a
    KubeSchedulerConfiguration file for either); more_profiles: profiles after it."""
    cfg = []
    if plugin_config or more_profiles:
        path = os.path.join(_tmp, "config-%s-%s.yaml" % (name, scheduler))
        conf = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                "leaderElection": {"leaderElect": False},
                "profiles": [{"schedulerName": scheduler, "pluginConfig": plugin_config or []}] +
                (more_profiles or [])}
        if scheduler == "default-scheduler":
            conf["clientConnection"] = {"kubeconfig": c.scheduler_kubeconfig}
        with open(path, "w") as f:
            json.dump(conf, f)
        cfg = ["--config", path]
    if scheduler == "default-scheduler":
        proc = k8s_util.kube_scheduler(c, *cfg)
        return proc, proc.alive
    proc = Serve(None, ["-v", "5"] + cfg, _tmp, name=name, kubeconfig=kc, wrap=k8s_util.PDEATHSIG)
    return proc, proc._dead


def run_scenario(scheduler, p, make, until, during=None, timeout=120, plugin_config=None,
                 more_profiles=None):
    """One scheduler's run of a scenario: make(c, ns, p, scheduler) creates its objects in a
    namespace of its own, then the scheduler runs until until(c, ns, p) gives a value (during,
    when given, is called on each poll: the test's part, e.g. a driver setting conditions).
    Returns (c, ns, value, proc); gpusched is left running (the caller stops it)."""
    c, kc = setup()
    ns = p + "x"
    namespace(c, ns)
    make(c, ns, p, scheduler)
    proc, dead = start_scheduler(c, kc, scheduler, p.strip("-"), plugin_config, more_profiles)
    unmet = {}

    def poll():
        if dead():
            return "died"
        if during:
            during(c, ns, p)
        return until(c, ns, p, unmet)
    try:
        try:
            v = wait_for("the %s run of %s to settle" % (scheduler, p), poll, timeout=timeout)
        except AssertionError as e:
            raise AssertionError("%s (waiting for %s)" % (e, unmet.get("what")))
        if v == "died":
            raise AssertionError("%s died" % scheduler)
        return c, ns, v, proc
    except BaseException as e:
        if scheduler != "default-scheduler":  # (stopped here on any failure: the caller only
            proc.stop()                         # stops it after a run that settled)
            if isinstance(e, AssertionError):
                raise AssertionError("%s; gpusched's log: %s" % (e, proc.log_tail(60)))
        raise
    finally:
        if scheduler == "default-scheduler":
            proc.stop()


def unprefixed(v, p):
    if isinstance(v, str):
        return v.replace(p, "P-")
    if isinstance(v, list):
        return [unprefixed(x, p) for x in v]
    if isinstance(v, dict):
        return {k: unprefixed(x, p) for k, x in v.items()}
    return v


def claim_view(cl, p):
    """A claim's status and finalizers as compared: the timestamp only as present, each
    shareID only as a well-formed random UUID (kube-scheduler makes a new one per share)."""
    import re
    st = copy.deepcopy(cl.get("status") or {})
    alloc = st.get("allocation")
    if alloc is not None:
        alloc["allocationTimestamp"] = "set" if alloc.get("allocationTimestamp") else "unset"
        for r in (alloc.get("devices") or {}).get("results") or []:
            if "shareID" in r:
                r["shareID"] = "uuid" if re.match(UUID, r["shareID"]) else "bad: " + r["shareID"]
    return unprefixed({"allocation": alloc,
                       "reservedFor": [r["name"] for r in st.get("reservedFor") or []],
                       "devices": st.get("devices"),
                       "finalizers": sorted((cl.get("metadata") or {}).get("finalizers") or [])}, p)


def share_device(name):
    return {"name": name, "allowMultipleAllocations": True,
            "attributes": {"index": {"int": int(name[-1])}},
            "capacity": {"memory": {"value": "16Gi",
                                    "requestPolicy": {"default": "1Gi",
                                                      "validRange": {"min": "1Gi", "step": "1Gi"}}},
                         "cores": {"value": "8"},
                         "bw": {"value": "100", "requestPolicy": {"default": "40",
                                                                  "validValues": ["10", "40", "100"]}}}}


SHARES = {"share-a": {"memory": "1500Mi", "cores": "2", "bw": "20"},
          "share-b": {"cores": "3"},
          "share-c": {"memory": "3Gi", "cores": "3", "bw": "10"}}


def make_shares(c, ns, p, scheduler):
    for name, cap in sorted(SHARES.items()):
        create_claim(c, ns, name, exactly(p, capacity=cap))
        c.create("/api/v1/namespaces/%s/pods" % ns,
                 pod(name, scheduler, [{"name": "gpu", "resourceClaimName": name}]))


def shares_settled(c, ns, p, unmet):
    placed = {x["metadata"]["name"]: x["spec"].get("nodeName") for x in c.pods(ns)}
    unmet["what"] = "placements %s" % placed
    if not all(placed.get(n) for n in SHARES):
        return None
    claims = {x["metadata"]["name"]: x for x in c.items(claims_path(ns))}
    return {"placement": unprefixed(placed, p),
            "claims": {n: claim_view(claims[n], p) for n in SHARES}}


def test_shares_of_a_device_with_allow_multiple_allocations_as_kube_scheduler():
    """Three claims share one device with allowMultipleAllocations: each result has a new
    shareID and the capacity it consumes (a request rounded up to the policy's step, the
    policy's default, the capacity's value, a valid value), written as kube-scheduler writes
    them."""
    c, _ = setup()
    for p in ("ks-s-", "gs-s-"):
        scenario_world(c, p, {"a": [share_device("s0")]})
    _, _, ks, _ = run_scenario("default-scheduler", "ks-s-", make_shares, shares_settled)
    _, _, gs, sv = run_scenario("gpusched", "gs-s-", make_shares, shares_settled)
    try:
        util.check_eq(gs["placement"], ks["placement"], "placements, against kube-scheduler's")
        for n in sorted(SHARES):
            util.check_eq(gs["claims"][n], ks["claims"][n], "claim %s, against kube-scheduler's" % n)
        util.check_eq([r.get("shareID") for n in sorted(SHARES)
                       for r in gs["claims"][n]["allocation"]["devices"]["results"]],
                      ["uuid"] * 3, "gpusched's shareIDs")
        results = ks["claims"]["share-a"]["allocation"]["devices"]["results"]
        util.check_eq(results[0].get("consumedCapacity"), {"memory": "2Gi", "cores": "2", "bw": "40"},
                      "kube-scheduler's consumed capacity of share-a (the test's premise)")
    finally:
        util.check_eq(sv.stop(), 0, "exit status on SIGTERM")


def make_stale(c, ns, p, scheduler):
    """A claim allocated (by someone else: the test writes its status) to a device of a node
    that does not exist, reserved for nobody, and a pod using it."""
    create_claim(c, ns, "stale", exactly(p))
    cl = c.get(claims_path(ns) + "/stale")
    cl["status"] = {"allocation": {
        "devices": {"results": [{"request": "gpu", "driver": p + DRIVER, "pool": p + "gone", "device": "g0"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [p + "gone"]}]}]}}}
    c.request("PUT", claims_path(ns) + "/stale/status", cl)
    c.create("/api/v1/namespaces/%s/pods" % ns, pod("stale", scheduler, [{"name": "gpu", "resourceClaimName": "stale"}]))


def stale_settled(c, ns, p, unmet):
    placed = {x["metadata"]["name"]: x["spec"].get("nodeName") for x in c.pods(ns)}
    unmet["what"] = "placements %s" % placed
    if not placed.get("stale"):
        return None
    cl = c.get(claims_path(ns) + "/stale")
    return {"placement": unprefixed(placed, p), "claim": claim_view(cl, p),
            "messages": sorted(set(unprefixed(e["note"], p) for e in c.events(ns, "FailedScheduling")
                                   if e["regarding"]["name"] == "stale"))}


def test_postfilter_deallocates_a_claim_available_nowhere_as_kube_scheduler():
    """A pod's claim is allocated on a node that is gone and reserved for nobody: Filter finds
    it available on no node, PostFilter deallocates it in the API (an update of its status)
    and the next attempt allocates it afresh; the same messages, the same end as
    kube-scheduler's."""
    c, _ = setup()
    for p in ("ks-d-", "gs-d-"):
        scenario_world(c, p, {"a": [device("d0", "small")]})
    _, _, ks, _ = run_scenario("default-scheduler", "ks-d-", make_stale, stale_settled)
    _, ns, gs, sv = run_scenario("gpusched", "gs-d-", make_stale, stale_settled)
    try:
        util.check_eq(gs, ks, "the pod, its claim and its FailedScheduling messages, against kube-scheduler's")
        if not any("deallocation of ResourceClaim completed" in m for m in ks["messages"]):
            raise AssertionError("kube-scheduler did not deallocate (the test's premise): %s" % ks["messages"])
        # the deallocation is gpusched's update of the claim's status
        puts = [e for e in c.audit(user=k8s_util.sa_user(NS_SA, SA), verb="update", resource="resourceclaims",
                                   subresource="status")
                if e["objectRef"].get("name") == "stale" and e["objectRef"].get("namespace") == ns]
        util.check_eq(len(puts) >= 2, True, "gpusched's status updates of the claim (deallocation, then PreBind)")
    finally:
        util.check_eq(sv.stop(), 0, "exit status on SIGTERM")


def refuse_deallocating_kept(c):
    """A ValidatingAdmissionPolicy refusing any status update that takes the allocation off a
    claim named kept (PostFilter's deallocation), in effect once a dry run is refused."""
    c.apply([{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
              "metadata": {"name": "no-dealloc-kept"},
              "spec": {"failurePolicy": "Fail",
                       "matchConstraints": {"resourceRules": [{
                           "apiGroups": ["resource.k8s.io"], "apiVersions": ["v1"],
                           "operations": ["UPDATE"], "resources": ["resourceclaims/status"]}]},
                       "validations": [{"expression": "object.metadata.name != 'kept' || "
                                                      "has(object.status.allocation)",
                                        "message": "deallocation of kept is refused"}]}},
             {"apiVersion": "admissionregistration.k8s.io/v1",
              "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "no-dealloc-kept"},
              "spec": {"policyName": "no-dealloc-kept", "validationActions": ["Deny"]}}])
    namespace(c, "vap-kept")
    if not c.get_or_none(claims_path("vap-kept") + "/kept"):
        create_claim(c, "vap-kept", "kept", exactly("probe-"))
    cl = c.get(claims_path("vap-kept") + "/kept")

    def refused():
        st, out = c.request("PUT", claims_path("vap-kept") + "/kept/status?dryRun=All", cl,
                            ok=(200, 403, 409, 422))
        return st in (403, 422) and "no-dealloc-kept" in json.dumps(out)
    wait_for("the ValidatingAdmissionPolicy on kept in effect", refused)


def make_kept(c, ns, p, scheduler):
    """make_stale's claim and pod, named kept: the deallocation is refused."""
    create_claim(c, ns, "kept", exactly(p))
    cl = c.get(claims_path(ns) + "/kept")
    cl["status"] = {"allocation": {
        "devices": {"results": [{"request": "gpu", "driver": p + DRIVER, "pool": p + "gone", "device": "g0"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [p + "gone"]}]}]}}}
    c.request("PUT", claims_path(ns) + "/kept/status", cl)
    c.create("/api/v1/namespaces/%s/pods" % ns, pod("kept", scheduler, [{"name": "gpu", "resourceClaimName": "kept"}]))


def kept_settled(c, ns, p, unmet):
    x = c.get("/api/v1/namespaces/%s/pods/kept" % ns)
    evs = sorted(c.events(ns, "FailedScheduling"),
                 key=lambda e: (e.get("eventTime") or "", e["metadata"]["creationTimestamp"]))
    cond = [(cd["status"], cd.get("reason"), unprefixed(cd.get("message"), p))
            for cd in (x.get("status") or {}).get("conditions") or [] if cd["type"] == "PodScheduled"]
    unmet["what"] = "events %s, condition %s" % ([e["note"] for e in evs], cond)
    if not evs or not cond:
        return None
    return {"node": x["spec"].get("nodeName"), "first message": unprefixed(evs[0]["note"], p),
            "condition": cond, "nominated": (x.get("status") or {}).get("nominatedNodeName"),
            "allocated": bool(((c.get(claims_path(ns) + "/kept").get("status") or {}).get("allocation")))}


def test_refused_deallocation_reported_as_kube_scheduler():
    """PostFilter's deallocation refused by the API server (a ValidatingAdmissionPolicy): the
    PostFilter phase ends with the update's error, so the FailedScheduling event and the
    PodScheduled condition carry the FitError followed by the error's text (not
    "deallocation of ResourceClaim completed"), reason Unschedulable; the claim stays
    allocated. The same under gpusched as under kube-scheduler."""
    c, _ = setup()
    refuse_deallocating_kept(c)
    for p in ("ks-k-", "gs-k-"):
        scenario_world(c, p, {"a": [device("k0", "small")]})
    _, _, ks, _ = run_scenario("default-scheduler", "ks-k-", make_kept, kept_settled)
    _, ns, gs, sv = run_scenario("gpusched", "gs-k-", make_kept, kept_settled)
    try:
        util.check_eq(gs, ks, "the pod's first FailedScheduling message and condition, against kube-scheduler's")
        if "deallocation of kept is refused" not in ks["first message"]:
            raise AssertionError("kube-scheduler's deallocation was not refused (the test's premise): %s" % ks)
    finally:
        util.check_eq(sv.stop(), 0, "exit status on SIGTERM")


def bc_device(name):
    return {"name": name, "attributes": {"index": {"int": int(name[-1])}},
            "bindingConditions": ["attached"], "bindingFailureConditions": ["failed"]}


def make_bc(c, ns, p, scheduler):
    for name, index in (("bc-ok", 0), ("bc-fail", 1)):
        create_claim(c, ns, name, exactly(p, selector="device.attributes['%s'].index == %d" % (p + DRIVER, index)))
        c.create("/api/v1/namespaces/%s/pods" % ns, pod(name, scheduler, [{"name": "gpu", "resourceClaimName": name}]))


def set_condition(c, ns, cl, ctype, reason, message):
    """The driver's part: the device's condition in the claim's status.devices (a conflict
    only means: again at the next poll)."""
    r = cl["status"]["allocation"]["devices"]["results"][0]
    cl["status"]["devices"] = [{"driver": r["driver"], "pool": r["pool"], "device": r["device"],
                                "conditions": [{"type": ctype, "status": "True", "reason": reason,
                                                "message": message,
                                                "lastTransitionTime": "2026-01-01T00:00:00Z"}]}]
    st, _ = c.request("PUT", claims_path(ns) + "/" + cl["metadata"]["name"] + "/status", cl, ok=(200, 409))
    return st == 200


def bc_driver():
    """A driver for the binding conditions scenario: bc-ok's device gets "attached" once its
    pod waits; bc-fail's gets "failed" the first time, "attached" when it waits again (the
    claim deallocated and allocated again: its status.devices went with the allocation)."""
    phase = {"bc-fail": 0}

    def during(c, ns, p):
        for cl in c.items(claims_path(ns)):
            name, st = cl["metadata"]["name"], cl.get("status") or {}
            waiting = st.get("allocation") and st.get("reservedFor") and not st.get("devices")
            if name == "bc-ok" and waiting:
                set_condition(c, ns, cl, "attached", "Attached", "")
            elif name == "bc-fail":
                if phase["bc-fail"] == 0 and waiting:
                    if set_condition(c, ns, cl, "failed", "Broken", "no \"luck\""):
                        phase["bc-fail"] = 1
                elif phase["bc-fail"] == 1 and waiting:  # (deallocation cleared status.devices)
                    set_condition(c, ns, cl, "attached", "Attached", "")
    return during


def bc_settled(c, ns, p, unmet):
    placed = {x["metadata"]["name"]: x["spec"].get("nodeName") for x in c.pods(ns)}
    if not all(placed.get(n) for n in ("bc-ok", "bc-fail")):
        unmet["what"] = "placements %s; bc-fail's claim %s; events %s" % (
            placed, (c.get(claims_path(ns) + "/bc-fail") or {}).get("status"),
            [(e["regarding"]["name"], e["reason"], e["note"]) for e in c.events(ns)])
        return None
    claims = {x["metadata"]["name"]: x for x in c.items(claims_path(ns))}
    events = sorted(set((e["regarding"]["name"], e["reason"], unprefixed(e["note"], p))
                        for e in c.events(ns) if e["reason"] in ("FailedScheduling", "BindingConditionsPending")))
    return {"placement": unprefixed(placed, p),
            "claims": {n: claim_view(claims[n], p) for n in ("bc-ok", "bc-fail")},
            "events": events}


def test_prebind_waits_for_binding_conditions_as_kube_scheduler():
    """Devices with binding conditions: PreBind writes the claim, records
    BindingConditionsPending and binds only once the driver set the condition; a failure
    condition fails PreBind, the next attempt finds the claim unavailable, PostFilter
    deallocates it, and it is allocated and waited for again. The same events and the same
    end as kube-scheduler's."""
    c, _ = setup()
    for p in ("ks-b-", "gs-b-"):
        scenario_world(c, p, {"a": [bc_device("c0"), bc_device("c1")]})
    _, _, ks, _ = run_scenario("default-scheduler", "ks-b-", make_bc, bc_settled, during=bc_driver())
    _, ns, gs, sv = run_scenario("gpusched", "gs-b-", make_bc, bc_settled, during=bc_driver())
    try:
        util.check_eq(gs["placement"], ks["placement"], "placements, against kube-scheduler's")
        util.check_eq(gs["claims"], ks["claims"], "claims, against kube-scheduler's")
        util.check_eq(gs["events"], ks["events"], "FailedScheduling and BindingConditionsPending events, "
                      "against kube-scheduler's")
        if not any("device binding failed" in e[2] for e in ks["events"]):
            raise AssertionError("kube-scheduler's PreBind did not fail (the test's premise): %s" % ks["events"])
    finally:
        util.check_eq(sv.stop(), 0, "exit status on SIGTERM")


def make_bt(c, ns, p, scheduler):
    create_claim(c, ns, "bt", exactly(p))
    c.create("/api/v1/namespaces/%s/pods" % ns, pod("bt", scheduler, [{"name": "gpu", "resourceClaimName": "bt"}]))


def bt_driver():
    """A driver that lets the first allocation's wait time out and attaches the device of the
    next one (told apart by its allocationTimestamp)."""
    first = {}

    def during(c, ns, p):
        cl = c.get_or_none(claims_path(ns) + "/bt")
        st = (cl or {}).get("status") or {}
        if not (st.get("allocation") and st.get("reservedFor") and not st.get("devices")):
            return
        ts = st["allocation"].get("allocationTimestamp")
        first.setdefault("ts", ts)
        if ts != first["ts"]:
            set_condition(c, ns, cl, "attached", "Attached", "")
    return during


def bt_settled(c, ns, p, unmet):
    placed = {x["metadata"]["name"]: x["spec"].get("nodeName") for x in c.pods(ns)}
    if not placed.get("bt"):
        unmet["what"] = "placements %s; events %s" % (
            placed, [(e["regarding"]["name"], e["reason"], e["note"]) for e in c.events(ns)])
        return None
    # which of the two timeouts PreBind's poll meets first (its deadline, or the claim's
    # allocationTimestamp plus the timeout) is a race in kube-scheduler too
    events = sorted(set((e["regarding"]["name"], e["reason"],
                         unprefixed(e["note"], p).split("device binding timeout")[0] +
                         ("device binding timeout..." if "device binding timeout" in e["note"] else ""))
                        for e in c.events(ns) if e["reason"] in ("FailedScheduling", "BindingConditionsPending")))
    return {"placement": unprefixed(placed, p), "claim": claim_view(c.get(claims_path(ns) + "/bt"), p),
            "events": events}


def test_binding_timeout_from_the_config_as_kube_scheduler():
    """DynamicResourcesArgs.bindingTimeout from --config (10 s): the devices' conditions are
    not met in time, PreBind fails with the timeout, the next attempt finds the claim timed
    out (available on no node), PostFilter deallocates it, the second allocation's device is
    attached and the pod bound; the same events and end as kube-scheduler's."""
    c, _ = setup()
    for p in ("ks-t-", "gs-t-"):
        scenario_world(c, p, {"a": [bc_device("c0")]})
    pc = [{"name": "DynamicResources", "args": {"bindingTimeout": "10s"}}]
    _, _, ks, _ = run_scenario("default-scheduler", "ks-t-", make_bt, bt_settled, during=bt_driver(),
                               plugin_config=pc)
    _, ns, gs, sv = run_scenario("gpusched", "gs-t-", make_bt, bt_settled, during=bt_driver(),
                                 plugin_config=pc)
    try:
        util.check_eq(gs, ks, "the pod, its claim and its events, against kube-scheduler's")
        if not any("device binding timeout" in e[2] for e in ks["events"]):
            raise AssertionError("kube-scheduler's PreBind did not time out (the test's premise): %s" % ks["events"])
    finally:
        util.check_eq(sv.stop(), 0, "exit status on SIGTERM")


def make_pt(c, ns, p, scheduler):
    """Claims pt-quick and pt-slow allocated 5 minutes ago (by someone else: the test writes
    their status) on the node's d0 and d1, which had binding conditions then, none met; a pod
    each: pt-quick under the profile p+"quick" (bindingTimeout 60s), pt-slow under the first
    (the default 600s)."""
    import datetime
    ts = (datetime.datetime.now(datetime.timezone.utc) -
          datetime.timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    for name, dev, sched in (("pt-quick", "d0", p + "quick"), ("pt-slow", "d1", scheduler)):
        create_claim(c, ns, name, exactly(p))
        cl = c.get(claims_path(ns) + "/" + name)
        cl["status"] = {"allocation": {
            "allocationTimestamp": ts,
            "devices": {"results": [{"request": "gpu", "driver": p + DRIVER, "pool": p + "a", "device": dev,
                                     "bindingConditions": ["attached"], "bindingFailureConditions": ["failed"]}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [p + "a"]}]}]}}}
        c.request("PUT", claims_path(ns) + "/" + name + "/status", cl)
        c.create("/api/v1/namespaces/%s/pods" % ns, pod(name, sched, [{"name": "gpu", "resourceClaimName": name}]))


def pt_driver():
    """The driver attaches pt-slow's device once its pod waits; pt-quick's never."""
    def during(c, ns, p):
        cl = c.get_or_none(claims_path(ns) + "/pt-slow")
        st = (cl or {}).get("status") or {}
        if st.get("allocation") and st.get("reservedFor") and not st.get("devices"):
            set_condition(c, ns, cl, "attached", "Attached", "")
    return during


def pt_settled(c, ns, p, unmet):
    placed = {x["metadata"]["name"]: x["spec"].get("nodeName") for x in c.pods(ns)}
    events = sorted(set((e["regarding"]["name"], e["reason"], unprefixed(e["note"], p))
                        for e in c.events(ns) if e["reason"] in ("FailedScheduling", "BindingConditionsPending")))
    if not all(placed.get(n) for n in ("pt-quick", "pt-slow")):
        unmet["what"] = "placements %s; events %s" % (placed, events)
        return None
    claims = {x["metadata"]["name"]: x for x in c.items(claims_path(ns))}
    return {"placement": unprefixed(placed, p),
            "claims": {n: claim_view(claims[n], p) for n in ("pt-quick", "pt-slow")},
            "events": events}


def test_binding_timeout_per_profile_as_kube_scheduler():
    """Each profile's DynamicResourcesArgs.bindingTimeout: a claim allocated 5 minutes ago with
    its binding conditions unmet has timed out under a profile's 60s (Filter finds it available
    on no node, PostFilter deallocates it, it is allocated afresh), not under the first
    profile's default 600s (the pod waits in PreBind until the driver attaches the device);
    the same events and end as kube-scheduler's with the same two profiles."""
    c, _ = setup()
    for p in ("ks-pt-", "gs-pt-"):
        scenario_world(c, p, {"a": [device("d0", "small"), device("d1", "small")]})

    def quick(p):
        return [{"schedulerName": p + "quick",
                 "pluginConfig": [{"name": "DynamicResources", "args": {"bindingTimeout": "60s"}}]}]
    _, _, ks, _ = run_scenario("default-scheduler", "ks-pt-", make_pt, pt_settled, during=pt_driver(),
                               more_profiles=quick("ks-pt-"))
    _, ns, gs, sv = run_scenario("gpusched", "gs-pt-", make_pt, pt_settled, during=pt_driver(),
                                 more_profiles=quick("gs-pt-"))
    try:
        util.check_eq(gs, ks, "the pods, their claims and events, against kube-scheduler's")
        quick_events = [e for e in ks["events"] if e[0] == "pt-quick"]
        if not any("deallocation of ResourceClaim completed" in e[2] for e in quick_events) or \
                not any(e[0] == "pt-slow" and e[1] == "BindingConditionsPending" for e in ks["events"]):
            raise AssertionError("kube-scheduler's answer is not the test's premise: %s" % ks["events"])
    finally:
        util.check_eq(sv.stop(), 0, "exit status on SIGTERM")


def bc_metrics(fams, p):
    """The binding-conditions families of a /metrics text: HELP, TYPE and, per (driver without
    the prefix, status), the allocations counted and the waits observed (the profile label
    apart: each scheduler's own name; the buckets apart: times)."""
    import test_k8s_metrics as km
    fams = km.parse_metrics(fams)
    out = {}
    for fam in ("scheduler_dra_bindingconditions_allocations_total",
                "scheduler_dra_bindingconditions_wait_duration_seconds"):
        f = fams.get(fam) or {"samples": []}
        out[fam] = {"help": f.get("help"), "type": f.get("type"),
                    "labels": sorted({tuple(sorted(k for k in lab if k != "le"))
                                      for _, lab, _ in f["samples"]})}
        for name, lab, v in f["samples"]:
            if name in (fam, fam + "_count"):
                out[fam][(unprefixed(lab.get("driver"), p), lab.get("status"))] = v
    return out


def test_binding_conditions_metrics_as_kube_schedulers():
    """The binding conditions scenario (bc-ok attached at once, bc-fail failed once, then
    deallocated, allocated again and attached): scheduler_dra_bindingconditions_allocations_total
    and the count of scheduler_dra_bindingconditions_wait_duration_seconds, by driver and
    status, and both families' HELP and TYPE, the same on gpusched's /metrics as on
    kube-scheduler's."""
    import ssl
    import urllib.error
    import urllib.request
    import test_k8s_metrics as km
    c, _ = setup()
    for p in ("ks-m-", "gs-m-"):
        scenario_world(c, p, {"a": [bc_device("c0"), bc_device("c1")]})
    port, certs = km.free_port(), os.path.join(_tmp, "ks-m-certs")
    os.makedirs(certs, exist_ok=True)
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE

    def ks_metrics():
        try:
            with urllib.request.urlopen("https://127.0.0.1:%d/metrics" % port, timeout=10,
                                        context=ctx) as r:
                return r.read().decode()
        except (urllib.error.URLError, ConnectionError):
            return None

    def ks_settled(c, ns, p, unmet):  # (scraped before run_scenario stops kube-scheduler)
        v = bc_settled(c, ns, p, unmet)
        return v and dict(v, metrics=ks_metrics())

    plain = k8s_util.kube_scheduler
    k8s_util.kube_scheduler = lambda c, *extra: plain(
        c, *extra, "--secure-port=%d" % port, "--bind-address=127.0.0.1", "--cert-dir=" + certs,
        "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics")
    try:
        _, _, ks, _ = run_scenario("default-scheduler", "ks-m-", make_bc, ks_settled, during=bc_driver())
    finally:
        k8s_util.kube_scheduler = plain
    _, ns, gs, sv = run_scenario("gpusched", "gs-m-", make_bc, bc_settled, during=bc_driver())
    try:
        if not ks["metrics"]:
            raise AssertionError("kube-scheduler's /metrics could not be read")
        km_ks, km_gs = bc_metrics(ks["metrics"], "ks-m-"), bc_metrics(sv.get("/metrics")[1], "gs-m-")
        print("kube-scheduler: %s\ngpusched: %s" % (km_ks, km_gs))
        util.check_eq(km_gs, km_ks, "the binding-conditions metrics, against kube-scheduler's")
        want = ("P-" + DRIVER, "failure")
        if km_ks["scheduler_dra_bindingconditions_allocations_total"].get(want) != 1:
            raise AssertionError("kube-scheduler counted no failure (the test's premise): %s" % km_ks)
    finally:
        util.check_eq(sv.stop(), 0, "exit status on SIGTERM")


# ---- extended resources that a DeviceClass serves: the claim PreBind creates ----

EXT_DRIVER = "ext.example.com"
EXT_ANN = "resource.kubernetes.io/extended-resource-claim"
# pod -> its node (the suffix after the prefix) and devices on that node; "dp"'s kubelet has a
# device plugin serving nvidia.com/gpu (and a device in a slice all the same)
EXT_NODES = {"one": 1, "two": 2, "impl": 1, "init": 1, "inits": 2, "side": 2, "more": 2, "dp": 1,
             "fails": 1, "mix": 1, "stale": 1}


def ext_classes(c):
    """The DeviceClasses both runs share: one serving nvidia.com/gpu (explicit name), one only
    by its implicit name deviceclass.resource.kubernetes.io/ext-plain."""
    if _state.get("ext-classes"):
        return
    sel = [{"cel": {"expression": "device.driver == '%s'" % EXT_DRIVER}}]
    c.apply([{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "ext-gpu"},
              "spec": {"extendedResourceName": "nvidia.com/gpu", "selectors": sel,
                       "config": [{"opaque": {"driver": EXT_DRIVER, "parameters": {"from": "class"}}}]}},
             {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "ext-plain"},
              "spec": {"selectors": sel}}])
    _state["ext-classes"] = True


def ext_world(c, p):
    """A node per pod (p+"x-"+name, labelled ext-test), each with its devices in a slice."""
    for n, ndev in EXT_NODES.items():
        node = p + "x-" + n
        c.create_node(k8s_util.gpu_node(node, gpus=1 if n in ("dp", "mix") else 0,
                                        labels={"ext-test": p.strip("-")}))
        c.create("/apis/resource.k8s.io/v1/resourceslices",
                 {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                  "metadata": {"name": node + "-" + EXT_DRIVER},
                  "spec": {"driver": EXT_DRIVER, "nodeName": node,
                           "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                           "devices": [device("%s%d" % (n[0], i), "small") for i in range(ndev)]}})


def ext_pods(p, scheduler):
    """The pods, each pinned to its node: "one" (cpu and nvidia.com/gpu: request index 1),
    "two" (two containers), "impl" (the implicit name), "init" (an init container reusing the
    container's device), "inits" (two init containers asking for 1 and 2, the container for
    none: one request, the largest, both mapped to it), "side" (a sidecar, an init container and
    the container: the init container reuses the container's request), "more" (an init
    container asking for 2, the container for 1: the init container reuses it and asks for one
    more), "dp" (served by the device plugin: no
    claim), "fails" (a bind the
    ValidatingAdmissionPolicy refuses, whatever the namespace: named bind-fails), "mix" (a claim
    of its own, and nvidia.com/gpu that its node's device plugin serves)."""
    def ctr(name, res):
        return {"name": name, "image": "registry.k8s.io/pause:3.10", "resources": res}
    gpu = {"limits": {"nvidia.com/gpu": "1"}}
    specs = {"one": {"containers": [ctr("c", {"requests": {"cpu": "100m"}, "limits": {"nvidia.com/gpu": "1"}})]},
             "two": {"containers": [ctr("a", gpu), ctr("b", gpu)]},
             "impl": {"containers": [ctr("c", {"limits": {"deviceclass.resource.kubernetes.io/ext-plain": "1"}})]},
             "init": {"initContainers": [ctr("setup", gpu)], "containers": [ctr("main", gpu)]},
             "inits": {"initContainers": [ctr("small", gpu), ctr("big", {"limits": {"nvidia.com/gpu": "2"}})],
                       "containers": [ctr("main", {"requests": {"cpu": "100m"}})]},
             "side": {"initContainers": [dict(ctr("sidecar", gpu), restartPolicy="Always"), ctr("setup", gpu)],
                      "containers": [ctr("main", gpu)]},
             "more": {"initContainers": [ctr("setup", {"limits": {"nvidia.com/gpu": "2"}})],
                      "containers": [ctr("main", gpu)]},
             "dp": {"containers": [ctr("c", gpu)]},
             "stale": {"containers": [ctr("c", gpu)]},
             "mix": {"resourceClaims": [{"name": "dev", "resourceClaimName": "mix"}],
                     "containers": [ctr("c", {"limits": {"nvidia.com/gpu": "1"}, "claims": [{"name": "dev"}]})]},
             "fails": {"containers": [ctr("c", gpu)]}}
    out = []
    for n, spec in specs.items():
        spec = dict(spec, schedulerName=scheduler, terminationGracePeriodSeconds=0,
                    nodeSelector={"kubernetes.io/hostname": p + "x-" + n})
        out.append({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": "bind-fails" if n == "fails" else n}, "spec": spec})
    return out


def ext_owned(claims, pod):
    return [cl for cl in claims
            if any(o.get("name") == pod["metadata"]["name"] and o.get("uid") == pod["metadata"]["uid"]
                   for o in cl["metadata"].get("ownerReferences") or [])]


def ext_settled(c, ns, user):
    """None until the pods that can be bound are, and the scheduler (user) has deleted a
    claim of bind-fails (PreBind created it, Unreserve deleted it after the refused bind)."""
    pods = {x["metadata"]["name"]: x for x in c.pods(ns)}
    placed = {n: x["spec"].get("nodeName") for n, x in pods.items()}
    _state["unmet"] = "placements %s" % placed
    if not all(placed.get(n) for n in ("one", "two", "impl", "init", "inits", "side", "more", "dp", "stale")):
        return None
    if placed.get("bind-fails"):
        raise AssertionError("bound: %s" % placed)
    _state["unmet"] = "mix's FailedScheduling event"
    if not [e for e in c.events(ns, "FailedScheduling") if e["regarding"]["name"] == "mix"]:
        return None
    _state["unmet"] = "a claim of bind-fails created and deleted"
    gone = [e for e in c.audit(user=user, verb="delete", resource="resourceclaims")
            if e["objectRef"].get("namespace") == ns and e["responseStatus"]["code"] in (200, 202)
            and (e["objectRef"].get("name") or "").startswith("bind-fails-extended-resources-")]
    if not gone:
        return None
    return True


def ext_outcome(c, ns, p):
    """Per pod: its node, the claims it owns (the name as a pattern, the pod's uid as POD),
    its status.extendedResourceClaimStatus (the claim's name as CLAIM); prefix taken out."""
    claims = c.items(claims_path(ns))
    out = {}

    def strip(v, pod, cname):
        if isinstance(v, str):
            if cname and v == cname:
                return "CLAIM"
            return v.replace(pod["metadata"]["uid"], "POD").replace(p, "P-")
        if isinstance(v, list):
            return [strip(x, pod, cname) for x in v]
        if isinstance(v, dict):
            return {k: strip(x, pod, cname) for k, x in v.items()}
        return v
    for pod in sorted(c.pods(ns), key=lambda x: x["metadata"]["name"]):
        name = pod["metadata"]["name"]
        owned = ext_owned(claims, pod)
        cname = owned[0]["metadata"]["name"] if len(owned) == 1 else None
        got = []
        for cl in owned:
            md, st = cl["metadata"], copy.deepcopy(cl.get("status") or {})
            if (st.get("allocation") or {}).get("allocationTimestamp"):
                st["allocation"]["allocationTimestamp"] = "set"
            got.append({"name": "%s-extended-resources-*" % name if md["name"].startswith(
                            name + "-extended-resources-") and md["name"] != md.get("generateName") else md["name"],
                        "generateName": md.get("generateName"), "annotations": md.get("annotations"),
                        "ownerReferences": md.get("ownerReferences"), "finalizers": md.get("finalizers"),
                        "spec": cl.get("spec"), "status": st})
        ercs = (pod.get("status") or {}).get("extendedResourceClaimStatus")
        if name == "mix":
            # between two attempts: each retry reserves claim mix and creates an extended-resource
            # claim, then takes both back (kube-scheduler holds them about a second, waiting for
            # its informer to show the claim it created)
            def quiet():
                cls = c.items(claims_path(ns))
                m = next(cl for cl in cls if cl["metadata"]["name"] == "mix")
                return (not (m.get("status") or {}).get("reservedFor") and not ext_owned(cls, pod)
                        and (m, cls))
            mix, cls = wait_for("mix between two attempts", quiet, timeout=30)
            owned = ext_owned(cls, pod)
            ev = [e for e in c.events(ns, "FailedScheduling") if e["regarding"]["name"] == "mix"]
            out[name] = {"node": pod["spec"].get("nodeName"), "message": ev[0]["note"].replace(ns, "NS"),
                         "claims": len(owned), "status": ercs,
                         "mix allocated": bool((mix.get("status") or {}).get("allocation")),
                         "mix reserved": bool((mix.get("status") or {}).get("reservedFor")),
                         "mix claim": claim_view(mix, p),
                         "messages": sorted({e["note"].replace(ns, "NS") for e in ev})}
            continue
        if name == "bind-fails":
            # its claims come and go with each attempt: only that the status names one of them
            # (the last attempt's, deleted since, or the current one's)
            out[name] = {"node": pod["spec"].get("nodeName"),
                         "status names a claim": bool(ercs and ercs.get("resourceClaimName", "").startswith(
                             "bind-fails-extended-resources-")),
                         "requestMappings": (ercs or {}).get("requestMappings")}
            continue
        out[name] = strip({"node": pod["spec"].get("nodeName"), "claims": got,
                           "extendedResourceClaimStatus": ercs}, pod, cname)
    return out


def ext_run(scheduler_name):
    c, kc = setup()
    ext_classes(c)
    ks = scheduler_name == "default-scheduler"
    p = "ks-" if ks else "gs-"
    ns = p + "ext"
    namespace(c, ns)
    ext_world(c, p)
    c.create(claims_path(ns), {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                               "metadata": {"name": "mix"},
                               "spec": {"devices": {"requests": [{"name": "dev", "exactly": {
                                   "deviceClassName": "ext-plain", "allocationMode": "ExactCount",
                                   "count": 1}}]}}})
    for x in ext_pods(p, scheduler_name):
        c.create("/api/v1/namespaces/%s/pods" % ns, x)
    # a claim of pod stale's extended resources left from an earlier attempt (as after a
    # scheduler's crash between PreBind and the bind): PostFilter deletes it, then a new one
    uid = c.get("/api/v1/namespaces/%s/pods/stale" % ns)["metadata"]["uid"]
    c.create(claims_path(ns), {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "stale-left-over", "annotations": {EXT_ANN: "true"},
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "stale", "uid": uid,
                                          "controller": True}]},
        "spec": {"devices": {"requests": [{"name": "container-0-request-0", "exactly": {
            "deviceClassName": "ext-gpu", "allocationMode": "ExactCount", "count": 1}}]}}})
    if ks:
        proc = k8s_util.kube_scheduler(c)
        dead, user = proc.alive, "system:kube-scheduler"
    else:
        proc = Serve(None, ["-v", "5", "--scheduler-name", scheduler_name], _tmp, name="ext",
                     kubeconfig=kc, wrap=k8s_util.PDEATHSIG)
        dead, user = proc._dead, k8s_util.sa_user(NS_SA, SA)
    try:
        try:
            wait_for("the %s run to settle" % scheduler_name, lambda: dead() or ext_settled(c, ns, user),
                     timeout=120)
        except AssertionError as e:
            raise AssertionError("%s (waiting for %s)" % (e, _state.get("unmet")))
        if dead():
            raise AssertionError("%s died" % scheduler_name)
        out = ext_outcome(c, ns, p)
        if not ks:
            _state["ext-creates"] = proc.metric(
                "dynamic_resource_allocation_resourceclaim_creates_total",
                'admin_access="false",owner_api_group="",owner_api_kind="Pod",status="success"')
        return c, ns, out, proc
    except AssertionError as e:
        if ks:
            raise
        raise AssertionError("%s; gpusched's log: %s" % (e, proc.log_tail(60)))
    finally:
        proc.stop()


def ext_both():
    if "ext" not in _state:
        _, _, ks, _ = ext_run("default-scheduler")
        c, ns, gs, _ = ext_run("gpusched-ext")
        _state["ext"] = (ks, gs, c, ns)
    return _state["ext"]


def test_extended_resource_claims_as_kube_scheduler_creates_them():
    """nvidia.com/gpu served by a DeviceClass (one container with cpu too, two containers, an
    init container reusing its container's device) and an implicit deviceclass.resource...
    name: the same node, the same created claim (generateName, annotation, the pod as
    controller, requests, allocation with the class's config, finalizer, reservedFor) and the
    same status.extendedResourceClaimStatus under gpusched serve as under kube-scheduler."""
    ks, gs, c, ns = ext_both()
    for name in ("one", "two", "impl", "init", "inits", "side", "more"):
        util.check_eq(gs[name], ks[name], "%s, against kube-scheduler's" % name)
        if len(ks[name]["claims"]) != 1 or not ks[name]["extendedResourceClaimStatus"]:
            raise AssertionError("kube-scheduler made no claim for %s: %s" % (name, ks[name]))
    reqs = [r["name"] for r in gs["two"]["claims"][0]["spec"]["devices"]["requests"]]
    util.check_eq(reqs, ["container-0-request-0", "container-1-request-0"], "two's request names")
    util.check_eq(gs["one"]["claims"][0]["spec"]["devices"]["requests"][0]["name"],
                  "container-0-request-1", "one's request name (cpu sorts first)")
    util.check_eq([(m["containerName"], m["requestName"])
                   for m in gs["inits"]["extendedResourceClaimStatus"]["requestMappings"]],
                  [("small", "container-1-request-0"), ("big", "container-1-request-0")],
                  "inits' request mappings")
    util.check_eq([(m["containerName"], m["requestName"])
                   for m in gs["side"]["extendedResourceClaimStatus"]["requestMappings"]],
                  [("sidecar", "container-0-request-0"), ("main", "container-2-request-0"),
                   ("setup", "container-2-request-0")], "side's request mappings")
    util.check_eq([(m["containerName"], m["requestName"])
                   for m in gs["more"]["extendedResourceClaimStatus"]["requestMappings"]],
                  [("main", "container-1-request-0"), ("setup", "container-1-request-0"),
                   ("setup", "container-0-request-0")], "more's request mappings")
    # one create per pod with a claim, at least one more for bind-fails
    if not (_state.get("ext-creates") or 0) >= 8:
        raise AssertionError("gpusched's resourceclaim_creates_total{status=success}: %s"
                             % _state.get("ext-creates"))
    forbidden = [e for e in c.audit(user=k8s_util.sa_user(NS_SA, SA)) if e["responseStatus"]["code"] == 403]
    util.check_eq([(e["verb"], e["requestURI"]) for e in forbidden], [], "requests RBAC refused")


def test_extended_resource_served_by_the_device_plugin_makes_no_claim():
    """On a node whose kubelet offers nvidia.com/gpu (a device plugin), neither scheduler creates
    a claim nor writes the pod's extendedResourceClaimStatus."""
    ks, gs, c, ns = ext_both()
    util.check_eq(gs["dp"], ks["dp"], "dp, against kube-scheduler's")
    util.check_eq((ks["dp"]["claims"], ks["dp"]["extendedResourceClaimStatus"]), ([], None),
                  "kube-scheduler's dp: no claim, no status")


def test_extended_resource_claim_deleted_after_a_refused_bind():
    """The bind of bind-fails is refused: PreBind had created its claim and written the pod's
    status; Unreserve deleted the claim (the status stays, naming it), under both schedulers."""
    ks, gs, c, ns = ext_both()
    util.check_eq(gs["bind-fails"], ks["bind-fails"], "bind-fails, against kube-scheduler's")
    util.check_eq(ks["bind-fails"]["status names a claim"], True, "kube-scheduler wrote bind-fails' status")


def test_claims_and_device_plugin_extended_resources_fail_prebind():
    """A pod with a claim of its own that also asks for nvidia.com/gpu, on a node whose device
    plugin serves it: kube-scheduler v1.37.2's PreBind creates an extended-resource claim with
    no requests, then fails ("nil or empty request mappings"); gpusched says the same."""
    ks, gs, c, ns = ext_both()
    util.check_eq(gs["mix"]["message"], ks["mix"]["message"], "mix's FailedScheduling message, against kube-scheduler's")
    util.check_eq((gs["mix"]["node"], gs["mix"]["claims"], gs["mix"]["status"]),
                  (ks["mix"]["node"], ks["mix"]["claims"], ks["mix"]["status"]), "mix's node, claims, status")
    # (kube-scheduler's PreBind wrote mix's allocation before failing and it stays: so does
    # serve's, test_claims_written_before_the_prebind_error_as_kube_scheduler)
    util.check_eq(ks["mix"]["mix allocated"], True, "kube-scheduler's allocation of claim mix")


def test_extended_resource_claim_left_over_is_deleted_and_made_again():
    """Pod stale owns a claim of its extended resources from an earlier attempt: both schedulers
    find it, cannot use it ("cannot schedule extended resource claim"), PostFilter deletes it,
    and the next attempt creates a new one and binds."""
    ks, gs, c, ns = ext_both()
    util.check_eq(gs["stale"], ks["stale"], "stale, against kube-scheduler's")
    util.check_eq([x["name"] for x in ks["stale"]["claims"]], ["stale-extended-resources-*"],
                  "kube-scheduler's claims of stale")
    writes = [e for e in c.audit(user=k8s_util.sa_user(NS_SA, SA), resource="resourceclaims")
              if e["objectRef"].get("namespace") == ns and e["objectRef"].get("name") == "stale-left-over"
              and e["verb"] != "get"]
    gone = [e for e in writes if e["verb"] == "delete"]
    if not gone:
        raise AssertionError("gpusched did not delete stale-left-over")
    # once, never refused: the claim is out of serve's world from PostFilter on (the pod's
    # next attempts, however soon, do not find it and delete it again, a 404 each time)
    util.check_eq([(e["verb"], e["responseStatus"]["code"] < 300) for e in writes],
                  [("patch", True), ("delete", True)], "serve's writes of stale-left-over")


def test_claims_written_before_the_prebind_error_as_kube_scheduler():
    """Pod mix (claim mix of its own, nvidia.com/gpu that its node's device plugin serves):
    kube-scheduler v1.37.2's PreBind writes claim mix (finalizer, allocation, reservation),
    creates the claim of the pod's extended resources (no requests) and writes it, then fails
    on the empty request mappings; Unreserve takes the pod off claim mix (which stays
    allocated) and deletes the claim it created. gpusched serve must leave claim mix as
    kube-scheduler does, and create and delete the extended-resource claim too (each attempt,
    never refused)."""
    ks, gs, c, ns = ext_both()
    print("kube-scheduler: %s\ngpusched: %s" % (ks["mix"], gs["mix"]))
    util.check_eq(ks["mix"]["mix claim"]["allocation"] is not None, True,
                  "kube-scheduler's allocation of claim mix (the test's premise)")
    util.check_eq(gs["mix"]["mix claim"], ks["mix"]["mix claim"], "claim mix, against kube-scheduler's")
    util.check_eq(gs["mix"]["messages"], ks["mix"]["messages"], "mix's messages (retries included)")
    util.check_eq((gs["mix"]["claims"], gs["mix"]["status"]), (0, None),
                  "mix's extended-resource claim gone, its status not written")
    for who, where in ((k8s_util.sa_user(NS_SA, SA), ns), ("system:kube-scheduler", "ks-ext")):
        mine = [e for e in c.audit(user=who, resource="resourceclaims")
                if (e.get("objectRef") or {}).get("namespace") == where]
        # (a create names no claim yet: the deletion of one of mix's says it was made)
        gone = [e for e in mine if e["verb"] == "delete" and e["responseStatus"]["code"] in (200, 202)
                and (e["objectRef"].get("name") or "").startswith("mix-extended-resources-")]
        if not gone:
            raise AssertionError("%s deleted no extended-resource claim of mix" % who)
    refused = [(e["verb"], e["requestURI"], e["responseStatus"]["code"])
               for e in c.audit(user=k8s_util.sa_user(NS_SA, SA), resource="resourceclaims")
               if (e.get("objectRef") or {}).get("namespace") == ns and e["responseStatus"]["code"] >= 300
               and e["verb"] != "get"]
    util.check_eq(refused, [], "serve's refused claim writes")
