"""gpusched serve's scheduler errors on the real control plane, judged by kube-scheduler v1.37.2
(the cluster, the prefixes and the helpers of test_k8s_serve_dra): a pod whose bind the API
server refuses (the ValidatingAdmissionPolicy on pods named bind-fails) and a pod naming one
unallocated ResourceClaim twice (a PreBind error, docs/dra.md). Under each scheduler both must
get the FailedScheduling event and the PodScheduled condition with reason SchedulerError (not
Unschedulable) and the same first message, and be tried again after their backoff, not parked
until a cluster event (docs/serve.md, "Differences from kube-scheduler"). A pod naming one
unallocated claim twice, on its own: what PreBind wrote before it stopped (the claim allocated,
its finalizer, no reservation) and the retry's Duplicate value message, as kube-scheduler's.
Also: the error backoff's whole-second windows, and no condition written again after a
restart."""
import datetime
import time

import k8s_util
import test_k8s_serve_dra as sd
import util
from k8s_util import wait_for

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


def make_bind_fails(c, ns, p, scheduler):
    sd.scenario_world(c, p, {"a": [sd.device("a0", "small")]})
    c.create("/api/v1/namespaces/%s/pods" % ns, sd.pod("bind-fails", scheduler, [], node=p + "a"))


def binding_times(c, ns, p, unmet, n=4):
    """The times (seconds of the wall clock) the API server received bind-fails' binding
    requests, once there are n of them; None until then."""
    import datetime
    seen = {}
    for e in c.audit(verb="create", resource="pods", subresource="binding"):
        ref = e.get("objectRef") or {}
        if ref.get("namespace") == ns and ref.get("name") == "bind-fails":
            seen.setdefault(e["auditID"], e["requestReceivedTimestamp"])
    times = sorted(datetime.datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp()
                   for t in seen.values())
    unmet["what"] = "%d binding requests of %d: %s" % (len(times), n, times)
    return times if len(times) >= n else None


def test_error_backoff_ends_at_a_whole_second_as_kube_scheduler():
    """kube-scheduler v1.37's backoff queue rounds a pod's backoff expiry (the failure's time
    plus 1 s, 2 s, 4 s after 1, 2, 3 errors in a row) down to its whole second and holds the
    pod until that second is over (backoff_queue.go, ordering windows): each retry of a
    refused bind comes no earlier than the whole second after the previous request's time
    plus the backoff. (A lower bound only: load can delay a retry, never advance it.)"""
    for scheduler, p in (("default-scheduler", "ks-w-"), ("gpusched", "gs-w-")):
        _, _, times, proc = sd.run_scenario(scheduler, p, make_bind_fails, binding_times)
        if scheduler == "gpusched":
            util.check_eq(proc.stop(), 0, "gpusched's exit status on SIGTERM")
        print("%s: binding requests at %s" % (scheduler, times))
        for i in range(1, 4):
            backoff = 2 ** (i - 1)
            earliest = int(times[i - 1] + backoff) + 1
            # (5 ms: the scheduler's failure time is a little after the request's)
            if times[i] < earliest - 0.005:
                raise AssertionError(
                    "%s: retry %d at %.3f, before %d (the request before at %.3f, backoff %d s)"
                    % (scheduler, i, times[i], earliest, times[i - 1], backoff))


def test_unchanged_condition_not_written_again_after_a_restart_as_kube_scheduler():
    """kube-scheduler's failure handler patches the PodScheduled condition only when it differs
    from the informer's pod (podutil.UpdatePodCondition: status, reason, message): a scheduler
    started again finds the condition its predecessor wrote and writes nothing for the same
    message, and a gated pod's condition (the API server's SchedulingGated) is never written.
    The audit log counts the pods' status patches under each scheduler."""
    c, kc = sd.setup()
    for scheduler, p in (("default-scheduler", "ks-r-"), ("gpusched", "gs-r-")):
        ns = p + "x"
        sd.namespace(c, ns)
        c.create("/api/v1/namespaces/%s/pods" % ns, sd.pod("nofit", scheduler, [], node=p + "nowhere"))
        gated = sd.pod("gated", scheduler, [])
        gated["spec"]["schedulingGates"] = [{"name": "example.com/gate"}]
        c.create("/api/v1/namespaces/%s/pods" % ns, gated)

        def attempts():
            return sum((e.get("series") or {}).get("count", 1) for e in c.events(ns, "FailedScheduling")
                       if e["regarding"]["name"] == "nofit")

        def condition():
            x = c.get("/api/v1/namespaces/%s/pods/nofit" % ns)
            return [(cd["status"], cd.get("reason")) for cd in (x.get("status") or {}).get("conditions") or []
                    if cd["type"] == "PodScheduled"]

        def patches(since=0.0):
            out = {}
            for e in c.audit(verb="patch", resource="pods", subresource="status"):
                ref = e.get("objectRef") or {}
                t = datetime.datetime.fromisoformat(
                    e["requestReceivedTimestamp"].replace("Z", "+00:00")).timestamp()
                if ref.get("namespace") == ns and t >= since:
                    out.setdefault(ref.get("name"), set()).add(e["auditID"])
            return out

        restarted = None
        for run in (1, 2):
            seen = attempts()
            if run == 2:
                restarted = time.time()  # (the first process is gone: its requests came before)
            proc, dead = sd.start_scheduler(c, kc, scheduler, p.strip("-") + str(run))
            try:
                wait_for("%s's attempt of nofit (run %d)" % (scheduler, run),
                         lambda: dead() or (attempts() > seen and condition() == [("False", "Unschedulable")]))
                if dead():
                    raise AssertionError("%s died" % scheduler)
            finally:
                st = proc.stop()
                if scheduler == "gpusched":
                    util.check_eq(st, 0, "gpusched's exit status on SIGTERM")
        every, after = patches(), patches(restarted)
        print("%s: status patches %s" % (scheduler, {k: len(v) for k, v in every.items()}))
        util.check_eq(len(every.get("nofit", ())) >= 1, True, "%s's first run wrote nofit's condition" % scheduler)
        util.check_eq(len(after.get("nofit", ())), 0,
                      "%s's status patches of nofit after a restart (the same condition)" % scheduler)
        util.check_eq(len(every.get("gated", ())), 0, "%s's status patches of gated" % scheduler)


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
