"""gpusched serve's DynamicResources writes against the API server double, for the answers a
real server gives only by chance: a conflict on a claim's status update (a fresh GET, then the
update again, as kube-scheduler's retry.RetryOnConflict), and a server error failing PreBind
(the in-flight allocation dropped, the pod tried again and bound, the two claims on two
different devices). The same pods on the real control plane: test_k8s_serve_dra.py."""
import re

import util
from fake_apiserver import FakeApiServer
from serve_util import Serve, node, pod, wait_for, bound, events

DRIVER = "gpu.example.com"


def dra_objects():
    return [
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": "device.driver == '%s'" % DRIVER}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-gpu"},
         "spec": {"driver": DRIVER, "nodeName": "n1",
                  "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}},
    ] + [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": c},
          "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
              "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}}}
         for c in ("c1", "c2")]


def claim_pod(name, claim):
    p = pod(name)
    p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
    p["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    return p


def claim_requests(api, claim):
    return [(r["method"], r["path"].rsplit("/resourceclaims/", 1)[1]) for r in list(api.requests)
            if re.search(r"/resourceclaims/%s(/status)?$" % claim, r["path"])]


def test_claim_conflict_is_retried_and_a_prebind_error_fails_the_attempt():
    with FakeApiServer() as api:
        api.add(node("n1"))
        for o in dra_objects():
            api.add(o)
        api.inject("PUT", r"/resourceclaims/c1/status$", 409, times=1,
                   message='Operation cannot be fulfilled on resourceclaims.resource.k8s.io "c1": '
                           'the object has been modified; please apply your changes to the latest '
                           'version and try again')
        api.inject("PUT", r"/resourceclaims/c2/status$", 500, times=1, message="injected")
        api.add(claim_pod("p1", "c1"))
        api.add(claim_pod("p2", "c2"))
        sv = Serve(api, ["-v", "5"])
        try:
            wait_for("p1 and p2 bound", lambda: sv._dead() or len(bound(api)) == 2, timeout=60)
            util.check_eq(bound(api), {"p1": "n1", "p2": "n1"}, "placements")
            # c1: the finalizer, the status update refused with a conflict, a fresh copy, again
            util.check_eq(claim_requests(api, "c1"), [("PATCH", "c1"), ("PUT", "c1/status"),
                                                      ("GET", "c1"), ("PUT", "c1/status")],
                          "requests for c1")
            # c2: the failed PreBind ends the attempt; the next one writes it
            util.check_eq(claim_requests(api, "c2"), [("PATCH", "c2"), ("PUT", "c2/status"),
                                                      ("PUT", "c2/status")], "requests for c2")
            devices = {}
            for c in ("c1", "c2"):
                st = api.get("resourceclaims", c)["status"]
                res = st["allocation"]["devices"]["results"]
                util.check_eq([(r["request"], r["driver"], r["pool"]) for r in res],
                              [("gpu", DRIVER, "n1")], "%s's result" % c)
                util.check_eq([r["name"] for r in st["reservedFor"]], ["p" + c[1]], "%s reserved for" % c)
                util.check_eq(st["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"],
                              [{"key": "metadata.name", "operator": "In", "values": ["n1"]}],
                              "%s's node selector" % c)
                if "allocationTimestamp" not in st["allocation"]:
                    raise AssertionError("%s: no allocationTimestamp" % c)
                util.check_eq(api.get("resourceclaims", c)["metadata"].get("finalizers"),
                              ["resource.kubernetes.io/delete-protection"], "%s's finalizers" % c)
                devices[c] = res[0]["device"]
            util.check_eq(sorted(devices.values()), ["gpu-0", "gpu-1"], "devices of c1 and c2")
            if not sv.grep("Failed running PreBind plugin"):
                raise AssertionError("no log line of the failed PreBind")
        finally:
            util.check_eq(sv.stop(), 0, "exit status")


def test_a_slow_claim_write_does_not_hold_another_pods_prebind():
    """The claim writes of different pods go on in parallel (kube-scheduler binds each pod in
    a goroutine of its own): p1's finalizer patch hangs for 20 s, p2 is bound meanwhile."""
    with FakeApiServer() as api:
        api.add(node("n1"))
        for o in dra_objects():
            api.add(o)
        api.delay("PATCH", r"/resourceclaims/c1$", 20)
        api.add(claim_pod("p1", "c1"))
        api.add(claim_pod("p2", "c2"))
        sv = Serve(api, ["-v", "5"])
        try:
            wait_for("p2 bound", lambda: sv._dead() or "p2" in bound(api), timeout=60)
            util.check_eq(bound(api), {"p2": "n1"}, "placements while c1's write hangs")
            wait_for("p1 bound", lambda: sv._dead() or "p1" in bound(api), timeout=60)
            util.check_eq(claim_requests(api, "c1"), [("PATCH", "c1"), ("PUT", "c1/status")],
                          "requests for c1")
        finally:
            util.check_eq(sv.stop(), 0, "exit status")


def test_a_refused_deallocation_leaves_the_claim_allocated_until_the_next_attempt():
    """PostFilter's deallocation of a claim allocated on a node that is gone: the status update
    refused (a conflict) is logged and the claim stays allocated, as with kube-scheduler's
    failed UpdateStatus; the claim's next update brings the pod back, the deallocation
    succeeds and the pod gets a device of n1."""
    with FakeApiServer() as api:
        api.add(node("n1"))
        for o in dra_objects():
            api.add(o)
        c1 = api.get("resourceclaims", "c1")
        c1["status"] = {"allocation": {
            "devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": "gone", "device": "g0"}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["gone"]}]}]}}}
        api.add(c1)
        api.inject("PUT", r"/resourceclaims/c1/status$", 409, times=1,
                   message='Operation cannot be fulfilled on resourceclaims.resource.k8s.io "c1": '
                           'the object has been modified; please apply your changes to the latest '
                           'version and try again')
        api.add(claim_pod("p1", "c1"))
        sv = Serve(api, ["-v", "5"])
        try:
            wait_for("the refused deallocation's log line",
                     lambda: sv._dead() or sv.grep("Status after running PostFilter plugins for pod"), timeout=30)
            util.check_eq(api.get("resourceclaims", "c1")["status"]["allocation"]["devices"]["results"][0]["pool"],
                          "gone", "c1's pool after the refused deallocation")
            util.check_eq(bound(api), {}, "placements")
            c1 = api.get("resourceclaims", "c1")
            c1["metadata"].setdefault("labels", {})["touched"] = "yes"
            api.add(c1)
            wait_for("p1 bound", lambda: sv._dead() or "p1" in bound(api), timeout=30)
            util.check_eq(bound(api), {"p1": "n1"}, "placements")
            res = api.get("resourceclaims", "c1")["status"]["allocation"]["devices"]["results"]
            util.check_eq([(r["driver"], r["pool"]) for r in res], [(DRIVER, "n1")], "c1's new result")
            util.check_eq([m for m, path in claim_requests(api, "c1")].count("PUT") >= 3, True,
                          "c1's status updates (refused deallocation, deallocation, PreBind)")
        finally:
            util.check_eq(sv.stop(), 0, "exit status")


CONFLICT = ('Operation cannot be fulfilled on resourceclaims.resource.k8s.io "c1": the object '
            'has been modified; please apply your changes to the latest version and try again')


def test_a_refused_deallocation_is_reported_with_its_error():
    """kube-scheduler's PostFilter writes the deallocation before its failure handler reports
    the attempt: a refused update ends the PostFilter phase with the error, whose text follows
    the FitError in the FailedScheduling event and the PodScheduled condition (reason
    Unschedulable, no preemption); a written one says "deallocation of ResourceClaim
    completed". serve reports the attempt once the update is answered, after it."""
    with FakeApiServer() as api:
        api.add(node("n1"))
        for o in dra_objects():
            api.add(o)
        c1 = api.get("resourceclaims", "c1")
        c1["status"] = {"allocation": {
            "devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": "gone", "device": "g0"}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["gone"]}]}]}}}
        api.add(c1)
        api.inject("PUT", r"/resourceclaims/c1/status$", 409, times=1, message=CONFLICT)
        api.add(claim_pod("p1", "c1"))
        sv = Serve(api, ["-v", "5"])
        try:
            notes = lambda: [e["note"] for e in events(api, "FailedScheduling")]
            wait_for("the refused deallocation's FailedScheduling",
                     lambda: sv._dead() or notes(), timeout=30)
            first = notes()[0]
            fit = "0/1 nodes are available: 1 resourceclaim not available on the node."
            util.check_eq(first, fit + " " + CONFLICT, "the first attempt's FailedScheduling")
            c1 = api.get("resourceclaims", "c1")
            c1["metadata"].setdefault("labels", {})["touched"] = "yes"
            api.add(c1)
            wait_for("p1 bound", lambda: sv._dead() or "p1" in bound(api), timeout=30)
            util.check_eq(notes()[1:], [fit + " deallocation of ResourceClaim completed, preemption: "
                                        "0/1 nodes are available: 1 Preemption is not helpful for "
                                        "scheduling."],
                          "the second attempt's FailedScheduling")
            conds = [(r["body"]["status"]["conditions"][0]["reason"],
                      r["body"]["status"]["conditions"][0]["message"]) for r in list(api.requests)
                     if r["method"] == "PATCH" and r["path"].endswith("/pods/p1/status")
                     and isinstance(r["body"], dict) and (r["body"].get("status") or {}).get("conditions")]
            util.check_eq(conds, [("Unschedulable", n) for n in notes()],
                          "p1's PodScheduled conditions, one per message")
            # each report after its update's answer
            times = [r["time"] for r in list(api.requests) if r["method"] == "PUT"
                     and r["path"].endswith("/resourceclaims/c1/status")]
            reps = [r["time"] for r in list(api.requests) if r["method"] == "PATCH"
                    and r["path"].endswith("/pods/p1/status")]
            util.check_eq(len(times) >= 2 and len(reps) >= 2 and times[0] <= reps[0] and times[1] <= reps[1],
                          True, "the status patches after the claim's updates (%s, %s)" % (times, reps))
        finally:
            util.check_eq(sv.stop(), 0, "exit status")


def test_a_refused_deletion_of_a_left_over_extended_claim_is_reported_with_its_error():
    """A claim of the pod's extended resources left from an earlier attempt: PostFilter deletes
    it (the finalizer off, then the DELETE); a refused DELETE ends the PostFilter phase with the
    error, whose text follows the FitError in the FailedScheduling event and the condition
    (kube-scheduler's deleteClaim error); deleted, the message says "deletion of ResourceClaim
    completed", and the next attempt makes a new claim and binds."""
    refused = 'resourceclaims.resource.k8s.io "p1-left-over" is forbidden: not now'
    with FakeApiServer() as api:
        api.add(node("n1"))
        api.add({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                 "spec": {"extendedResourceName": "nvidia.com/gpu",
                          "selectors": [{"cel": {"expression": "device.driver == '%s'" % DRIVER}}]}})
        api.add({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-gpu"},
                 "spec": {"driver": DRIVER, "nodeName": "n1",
                          "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                          "devices": [{"name": "gpu-0"}]}})
        api.add(pod("p1", gpus=1))
        uid = api.get("pods", "p1", "default")["metadata"]["uid"]
        api.add({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                 "metadata": {"name": "p1-left-over", "namespace": "default",
                              "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
                              "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p1",
                                                   "uid": uid, "controller": True}]},
                 "spec": {"devices": {"requests": [{"name": "container-0-request-0", "exactly": {
                     "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}}})
        api.inject("DELETE", r"/resourceclaims/p1-left-over$", 403, times=1, message=refused)
        sv = Serve(api, ["-v", "5"])
        try:
            notes = lambda: [e["note"] for e in events(api, "FailedScheduling")]
            wait_for("the refused deletion's FailedScheduling", lambda: sv._dead() or notes(), timeout=30)
            fit = "0/1 nodes are available: 1 cannot schedule extended resource claim."
            util.check_eq(notes()[0], fit + " " + refused, "the first attempt's FailedScheduling")
            # (the finalizer's update, made before the refused DELETE, brings the pod back; its
            # FailedScheduling joins the first one's series: the same pod version)
            wait_for("p1 bound", lambda: sv._dead() or "p1" in bound(api), timeout=30)
            conds = [r["body"]["status"]["conditions"][0]["message"] for r in list(api.requests)
                     if r["method"] == "PATCH" and r["path"].endswith("/pods/p1/status")
                     and isinstance(r["body"], dict) and (r["body"].get("status") or {}).get("conditions")]
            # in order; an attempt's condition is left out when the pod's next attempt began
            # before its write was answered (the last condition written is the last attempt's)
            deleted = (fit + " deletion of ResourceClaim completed, preemption: 0/1 nodes are "
                       "available: 1 Preemption is not helpful for scheduling.")
            util.check_eq(conds, [m for m in (fit + " " + refused, deleted) if m in conds],
                          "p1's PodScheduled condition messages, in order")
            util.check_eq(sum((e.get("series") or {}).get("count", 1)
                              for e in events(api, "FailedScheduling")) >= 2, True,
                          "both attempts' FailedScheduling (a series, or one event each)")
            util.check_eq([c["metadata"]["name"] for c in api.list("resourceclaims", "default")
                           if c["metadata"]["name"] == "p1-left-over"], [], "the left-over claim deleted")
        finally:
            util.check_eq(sv.stop(), 0, "exit status")


def ext_requests(api):
    """(method, path tail) of the writes of extended-resource claims and pod statuses."""
    out = []
    for r in list(api.requests):
        m = re.search(r"/(resourceclaims(/[^/]+)*|pods/[^/]+/(status|binding))$", r["path"])
        if m and r["method"] != "GET" and "/resourceclaims/c" not in r["path"]:
            tail = m.group(1)
            # a generated name: its pod's part only
            out.append((r["method"], re.sub(r"(-extended-resources-)[a-z0-9]{5}", r"\1*", tail)))
    return out


def test_extended_resource_claim_writes_and_their_failures():
    """nvidia.com/gpu served by a DeviceClass: PreBind creates the claim (a refused create fails
    the attempt: the next one creates it), writes its finalizer and status, then the pod's
    extendedResourceClaimStatus (a conflict is tried again), then binds; a refused bind makes
    Unreserve take the finalizer off the claim it created and delete it, and the next attempt
    makes a new one."""
    with FakeApiServer() as api:
        api.add(node("n1"))
        api.add({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                 "spec": {"extendedResourceName": "nvidia.com/gpu",
                          "selectors": [{"cel": {"expression": "device.driver == '%s'" % DRIVER}}]}})
        api.add({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-gpu"},
                 "spec": {"driver": DRIVER, "nodeName": "n1",
                          "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                          "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}, {"name": "gpu-2"}]}})
        api.inject("POST", r"/namespaces/default/resourceclaims$", 500, times=1, message="injected")
        api.add(pod("p1", gpus=1))
        sv = Serve(api, ["-v", "5"])
        try:
            wait_for("p1 bound", lambda: sv._dead() or bound(api).get("p1"), timeout=60)
            if not sv.grep(r"create claim for extended resources default/: .*injected"):
                raise AssertionError("no log line of the refused create: %s" % sv.log_tail())
            api.inject("PATCH", r"/pods/p2/status$", 409, times=1, message="conflict")
            api.add(pod("p2", gpus=1))
            wait_for("p2 bound", lambda: sv._dead() or bound(api).get("p2"), timeout=60)
            api.inject("POST", r"/pods/p3/binding$", 403, times=1, message="bind refused")
            api.add(pod("p3", gpus=1))
            wait_for("p3 bound", lambda: sv._dead() or bound(api).get("p3"), timeout=60)
            claims = {c["metadata"]["ownerReferences"][0]["name"]: c for c in api.list("resourceclaims", "default")}
            util.check_eq(sorted(claims), ["p1", "p2", "p3"], "one claim per pod")
            for name, c in claims.items():
                p = api.get("pods", name, "default")
                util.check_eq(p["status"]["extendedResourceClaimStatus"],
                              {"requestMappings": [{"containerName": "main", "requestName": "container-0-request-1",
                                                    "resourceName": "nvidia.com/gpu"}],
                               "resourceClaimName": c["metadata"]["name"]}, "%s's status" % name)
                util.check_eq(c["metadata"]["annotations"], {"resource.kubernetes.io/extended-resource-claim": "true"},
                              "%s's claim's annotations" % name)
                util.check_eq([r["name"] for r in c["status"]["reservedFor"]], [name], "%s's claim reserved for" % name)
            util.check_eq(sorted(c["status"]["allocation"]["devices"]["results"][0]["device"] for c in claims.values()),
                          ["gpu-0", "gpu-1", "gpu-2"], "the devices")
            want = [("POST", "resourceclaims"),  # refused: the attempt fails, the pod backs off
                    ("PATCH", "pods/p1/status"),  # (its PodScheduled condition: SchedulerError)
                    ("POST", "resourceclaims"), ("PATCH", "resourceclaims/p1-extended-resources-*"),
                    ("PUT", "resourceclaims/p1-extended-resources-*/status"), ("PATCH", "pods/p1/status"),
                    ("POST", "pods/p1/binding"),
                    ("POST", "resourceclaims"), ("PATCH", "resourceclaims/p2-extended-resources-*"),
                    ("PUT", "resourceclaims/p2-extended-resources-*/status"), ("PATCH", "pods/p2/status"),
                    ("PATCH", "pods/p2/status"), ("POST", "pods/p2/binding"),
                    ("POST", "resourceclaims"), ("PATCH", "resourceclaims/p3-extended-resources-*"),
                    ("PUT", "resourceclaims/p3-extended-resources-*/status"), ("PATCH", "pods/p3/status"),
                    ("POST", "pods/p3/binding")]  # refused: Unreserve deletes the claim
            got = ext_requests(api)
            util.check_eq(got[:len(want)], want, "the writes, in order")
            # Unreserve's writes (claim writers) and the refused bind's SchedulerError condition
            # (binder) go out from different threads: in either order
            after = got[len(want):len(want) + 3]
            util.check_eq([w for w in after if w != ("PATCH", "pods/p3/status")],
                          [("PATCH", "resourceclaims/p3-extended-resources-*"),
                           ("DELETE", "resourceclaims/p3-extended-resources-*")],
                          "Unreserve's writes after the refused bind")
            util.check_eq(after.count(("PATCH", "pods/p3/status")), 1,
                          "the refused bind's PodScheduled condition")
            want += after
            util.check_eq(got[len(want):][-5:], [
                ("POST", "resourceclaims"), ("PATCH", "resourceclaims/p3-extended-resources-*"),
                ("PUT", "resourceclaims/p3-extended-resources-*/status"), ("PATCH", "pods/p3/status"),
                ("POST", "pods/p3/binding")], "p3's last attempt")
        finally:
            util.check_eq(sv.stop(), 0, "exit status")


def test_extended_resource_claims_in_flight_take_their_devices():
    """Three nvidia.com/gpu pods, two devices, the claims' create and status writes slowed: the
    second pod's cycle sees the first one's device taken while its claim is being created (in
    flight under the world's name) and written (under the API server's), the third fits
    nowhere (kube-scheduler's message)."""
    with FakeApiServer() as api:
        api.add(node("n1"))
        api.add({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                 "spec": {"extendedResourceName": "nvidia.com/gpu",
                          "selectors": [{"cel": {"expression": "device.driver == '%s'" % DRIVER}}]}})
        api.add({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-gpu"},
                 "spec": {"driver": DRIVER, "nodeName": "n1",
                          "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                          "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}})
        api.delay("POST", r"/namespaces/default/resourceclaims$", 1.0, times=1)
        api.delay("PUT", r"/resourceclaims/[^/]+/status$", 1.0, times=2)
        for n in ("p1", "p2", "p3"):
            api.add(pod(n, gpus=1))
        sv = Serve(api, ["-v", "5"])
        try:
            wait_for("two pods bound", lambda: sv._dead() or len(bound(api)) == 2, timeout=60)
            ev = wait_for("a FailedScheduling event", lambda: events(api, "FailedScheduling"))
            util.check_eq(ev[0]["note"], "0/1 nodes are available: 1 cannot allocate all claims. "
                          "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
                          "the third pod's message")
            loser = ev[0]["regarding"]["name"]
            util.check_eq(sorted(bound(api)), sorted({"p1", "p2", "p3"} - {loser}), "the pods bound")
            devices = sorted(c["status"]["allocation"]["devices"]["results"][0]["device"]
                             for c in api.list("resourceclaims", "default"))
            util.check_eq(devices, ["gpu-0", "gpu-1"], "the claims' devices")
        finally:
            util.check_eq(sv.stop(), 0, "exit status")


def test_a_claim_named_twice_writes_its_first_entry_and_a_failed_write_fails_first():
    """Pod p1 names c1 twice: PreBind stops at the second entry (the cycle says so), so serve
    writes the first entry only, then fails the attempt with the cycle's message; a write that
    fails before (c1's status update refused once) fails the attempt with its own message and
    leaves the claim as that write did (the finalizer on, not allocated). Attempt by attempt:
    the refused write; the first entry's allocation written ("got allocated elsewhere in the
    meantime"), its reservation taken back; then the reservation only, taken back (the API
    server's Duplicate value). Each attempt's reservation goes (the double merges reservedFor
    by uid, as the API server)."""
    with FakeApiServer() as api:
        api.add(node("n1"))
        for o in dra_objects():
            api.add(o)
        api.inject("PUT", r"/resourceclaims/c1/status$", 500, times=1, message="injected")
        p1 = claim_pod("p1", "c1")
        p1["spec"]["resourceClaims"].append({"name": "again", "resourceClaimName": "c1"})
        api.add(p1)
        sv = Serve(api, ["-v", "5"])
        try:
            def notes():
                out = []
                for e in sorted(events(api, "FailedScheduling"), key=lambda e: (e.get("eventTime") or "", e["metadata"]["name"])):
                    if e["note"] not in out:
                        out.append(e["note"])
                return out
            wait_for("three messages of p1", lambda: sv._dead() or len(notes()) >= 3, timeout=60)
            n = notes()
            want = ['running PreBind plugin "DynamicResources": add allocation and reservation to claim default/c1',
                    'running PreBind plugin "DynamicResources": claim default/c1 got allocated elsewhere in the meantime',
                    'running PreBind plugin "DynamicResources": add reservation to claim default/c1: '
                    'ResourceClaim.resource.k8s.io "c1" is invalid: status.reservedFor[1]: Duplicate value']
            for i, w in enumerate(want):
                if not n[i].startswith(w):
                    raise AssertionError("message %d: %r, want %r... (all: %s)" % (i, n[i], w, n))
            reqs = claim_requests(api, "c1")
            util.check_eq(reqs[:6], [("PATCH", "c1"), ("PUT", "c1/status"),       # refused
                                     ("PUT", "c1/status"), ("PATCH", "c1/status"),  # allocated
                                     ("PUT", "c1/status"), ("PATCH", "c1/status")],  # reserved
                          "requests for c1")
            st = api.get("resourceclaims", "c1")
            util.check_eq([r["device"] for r in st["status"]["allocation"]["devices"]["results"]],
                          ["gpu-0"], "c1's devices (the first entry's)")
            util.check_eq(st["status"].get("reservedFor") or [], [], "c1 reserved for")
            util.check_eq(st["metadata"].get("finalizers"), ["resource.kubernetes.io/delete-protection"],
                          "c1's finalizers")
            util.check_eq(bound(api), {}, "placements")
        finally:
            util.check_eq(sv.stop(), 0, "exit status")
