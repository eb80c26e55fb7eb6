"""gpusched serve's scheduler errors on the real control plane, judged by kube-scheduler v1.37.2
(the cluster, the prefixes and the helpers of test_k8s_serve_dra): a pod whose bind the API
server refuses (the ValidatingAdmissionPolicy on pods named bind-fails) and a pod naming one
unallocated ResourceClaim twice (a PreBind error, docs/dra.md). Under each scheduler both must
get the FailedScheduling event and the PodScheduled condition with reason SchedulerError (not
Unschedulable) and the same first message, and be tried again after their backoff, not parked
until a cluster event. A pod naming one unallocated claim twice, on its own: what PreBind wrote
before it stopped (the claim allocated, its finalizer, no reservation) and the retry's
Duplicate value message, as kube-scheduler's."""
import k8s_util
import test_k8s_serve_dra as sd
import util

PODS = ("bind-fails", "twice")


def make(c, ns, p, scheduler):
    sd.scenario_world(c, p, {"a": [sd.device("a0", "small"), sd.device("a1", "small")]})
    sd.create_claim(c, ns, "shared", sd.exactly(p))
    c.create("/api/v1/namespaces/%s/pods" % ns, sd.pod("bind-fails", scheduler, [], node=p + "a"))
    c.create("/api/v1/namespaces/%s/pods" % ns,
             sd.pod("twice", scheduler, [{"name": "first", "resourceClaimName": "shared"},
                                         {"name": "second", "resourceClaimName": "shared"}]))


def settled(c, ns, p, unmet):
    """Per pod: its PodScheduled condition's status and reason, its FailedScheduling events'
    notes (first one first), whether it was tried more than once; None until each pod was."""
    pods = {x["metadata"]["name"]: x for x in c.pods(ns)}
    evs = sorted(c.events(ns, "FailedScheduling"),
                 key=lambda e: (e.get("eventTime") or "", e["metadata"]["creationTimestamp"]))
    out = {}
    for name in PODS:
        x = pods.get(name) or {}
        if (x.get("spec") or {}).get("nodeName"):
            raise AssertionError("%s bound: %s" % (name, x["spec"]["nodeName"]))
        cond = [(cd["status"], cd.get("reason")) for cd in (x.get("status") or {}).get("conditions") or []
                if cd["type"] == "PodScheduled"]
        mine = [e for e in evs if e["regarding"]["name"] == name]
        retried = len(mine) >= 2 or any(e.get("series") for e in mine)
        unmet["what"] = "%s tried twice: condition %s, events %s" % (
            name, cond, [(e["note"], e.get("series")) for e in mine])
        if not retried:
            return None
        out[name] = {"condition": cond, "types": sorted({(e["type"], e["action"]) for e in mine}),
                     "notes": [sd.unprefixed(e["note"], p) for e in mine]}
    binds = [e for e in c.audit(verb="create", resource="pods", subresource="binding")
             if (e.get("objectRef") or {}).get("namespace") == ns]
    out["bind-fails"]["binding requests"] = "%s" % (len(binds) >= 2)
    return out


def test_scheduler_errors_reported_and_retried_as_kube_scheduler():
    _, _, ks, _ = sd.run_scenario("default-scheduler", "ks-e-", make, settled)
    c, _, gs, proc = sd.run_scenario("gpusched", "gs-e-", make, settled)
    util.check_eq(proc.stop(), 0, "gpusched's exit status on SIGTERM")
    print("kube-scheduler: %s\ngpusched: %s" % (ks, gs))
    for name in PODS:
        util.check_eq(ks[name]["condition"], [("False", "SchedulerError")],
                      "kube-scheduler's PodScheduled condition of %s" % name)
        util.check_eq(gs[name]["condition"], ks[name]["condition"],
                      "the PodScheduled condition of %s, against kube-scheduler's" % name)
        util.check_eq(gs[name]["types"], ks[name]["types"], "event type and action of " + name)
        util.check_eq(gs[name]["notes"][0], ks[name]["notes"][0],
                      "the first FailedScheduling message of %s, against kube-scheduler's" % name)
    util.check_eq(gs["bind-fails"]["notes"], ks["bind-fails"]["notes"],
                  "bind-fails' FailedScheduling messages")
    util.check_eq(gs["bind-fails"]["binding requests"], "True", "bind-fails' bind retried")
    util.check_eq(ks["bind-fails"]["binding requests"], "True", "kube-scheduler's bind retried")


# ---- a pod naming one unallocated claim twice: what PreBind wrote before it stopped ----

def make_twice(c, ns, p, scheduler):
    sd.scenario_world(c, p, {"a": [sd.device("a0", "small"), sd.device("a1", "small")]})
    sd.create_claim(c, ns, "shared", sd.exactly(p))
    c.create("/api/v1/namespaces/%s/pods" % ns,
             sd.pod("twice", scheduler, [{"name": "first", "resourceClaimName": "shared"},
                                         {"name": "second", "resourceClaimName": "shared"}]))


def twice_settled(c, ns, p, unmet):
    """None until pod twice has failed twice with different messages (the first attempt's,
    then a retry's with the claim allocated); then its condition, its distinct messages in
    order (its uid as UID) and claim shared as both attempts' PreBind and Unreserve left it."""
    x = c.get("/api/v1/namespaces/%s/pods/twice" % ns)
    if (x.get("spec") or {}).get("nodeName"):
        raise AssertionError("twice bound: %s" % x["spec"]["nodeName"])
    evs = sorted((e for e in c.events(ns, "FailedScheduling") if e["regarding"]["name"] == "twice"),
                 key=lambda e: (e.get("eventTime") or "", e["metadata"]["creationTimestamp"]))
    notes = []
    for e in evs:
        n = sd.unprefixed(e["note"].replace(x["metadata"]["uid"], "UID"), p)
        if n not in notes:
            notes.append(n)
    unmet["what"] = "two messages of twice: %s" % notes
    if len(notes) < 2:
        return None
    cond = [(cd["status"], cd.get("reason"), sd.unprefixed(cd.get("message", "").replace(
        x["metadata"]["uid"], "UID"), p))
            for cd in (x.get("status") or {}).get("conditions") or [] if cd["type"] == "PodScheduled"]
    shared = c.get(sd.claims_path(ns) + "/shared")
    unmet["what"] = "shared between two attempts (a retry reserves it, then takes it back)"
    if (shared.get("status") or {}).get("reservedFor"):
        return None
    return {"condition": cond, "notes": notes, "shared": sd.claim_view(shared, p)}


def test_claim_named_twice_prebind_writes_as_kube_scheduler():
    """Pod twice names unallocated claim shared in two entries. kube-scheduler v1.37.2's PreBind
    writes the first entry (the finalizer, the allocation and the reservation), the second
    fails ("got allocated elsewhere in the meantime"), Unreserve takes the reservation back:
    the claim stays allocated, and each retry fails with the API server's Duplicate value.
    gpusched serve must write the same: the same messages in the same order, the condition,
    and claim shared with the same allocation, finalizer and no reservation."""
    _, _, ks, _ = sd.run_scenario("default-scheduler", "ks-t2-", make_twice, twice_settled)
    c, ns, gs, proc = sd.run_scenario("gpusched", "gs-t2-", make_twice, twice_settled)
    try:
        # each attempt an error; Bind never ran (kube-scheduler times it only when it runs)
        errors = proc.metric("scheduler_schedule_attempts_total", 'profile="gpusched",result="error"')
        bind_errors = proc.metric("scheduler_framework_extension_point_duration_seconds_count",
                                  'extension_point="Bind",profile="gpusched",status="Error"')
    finally:
        util.check_eq(proc.stop(), 0, "gpusched's exit status on SIGTERM")
    util.check_eq((errors or 0) >= 2, True, "gpusched's error attempts: %s" % errors)
    util.check_eq(bind_errors, None, "gpusched's failed Bind extension points")
    print("kube-scheduler: %s\ngpusched: %s" % (ks, gs))
    util.check_eq(ks["notes"][0].endswith("got allocated elsewhere in the meantime"), True,
                  "kube-scheduler's first message (the test's premise): %s" % ks["notes"])
    util.check_eq("Duplicate value" in ks["notes"][1], True,
                  "kube-scheduler's second message (the test's premise): %s" % ks["notes"])
    util.check_eq(bool(ks["shared"]["allocation"]), True, "kube-scheduler allocated shared")
    util.check_eq(gs["notes"][:2], ks["notes"][:2], "twice's messages, against kube-scheduler's")
    util.check_eq(gs["shared"], ks["shared"], "claim shared, against kube-scheduler's")
    util.check_eq([cd[:2] for cd in gs["condition"]], [("False", "SchedulerError")],
                  "twice's PodScheduled condition")
    # serve's writes of shared: the finalizer, the status twice per attempt (the reservation,
    # then Unreserve's), never refused
    writes = [e for e in c.audit(user=k8s_util.sa_user(sd.NS_SA, sd.SA), resource="resourceclaims")
              if (e.get("objectRef") or {}).get("namespace") == ns and e["verb"] in ("update", "patch")]
    util.check_eq([e["responseStatus"]["code"] for e in writes if e["responseStatus"]["code"] >= 300], [],
                  "serve's refused claim writes")
    util.check_eq(len([e for e in writes if e["objectRef"].get("subresource") == "status"]) >= 4, True,
                  "serve's status writes of shared (two attempts: reserve, unreserve): %d" % len(writes))
