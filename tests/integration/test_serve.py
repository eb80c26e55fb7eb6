"""gpusched serve end to end against the API server double: the seed scenario (with gpulabel
labelling the GPU nodes through the fake NVML), the writes a scheduler makes (binding, events,
PodScheduled condition), fault handling (409, 404, 429 + Retry-After, a watch expiring with
410), probes and metrics, flags, and graceful SIGTERM."""
import json
import os
import re
import signal
import subprocess
import tempfile
import time

import util
from fake_apiserver import FakeApiServer
from serve_util import Serve, node, pod, wait_for, bound, binding_posts, events

SEED_MESSAGE = ("0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
                "2 node(s) didn't have free ports for the requested pod ports. preemption: 0/3 nodes "
                "are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims "
                "found for incoming pod.")


def tf_notebook_pod(suffix):
    p = pod("tf-notebook-6c9f8d7b5-" + suffix, cpu="100m", gpus=1, host_port=8888,
            node_selector={"aliyun.accelerator/nvidia_name": "Tesla-M40"},
            labels={"app": "tf-notebook", "pod-template-hash": "6c9f8d7b5"})
    p["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                         "name": "tf-notebook-6c9f8d7b5", "uid": "rs-uid-1",
                                         "controller": True}]
    c = p["spec"]["containers"][0]
    c["name"] = "tf-notebook"
    c["image"] = "tensorflow/tensorflow:1.4.1-gpu-py3"
    c["env"] = [{"name": "PASSWORD", "value": "mypassw0rdv"}]
    return p


def not_in_gpu_node_pod():
    p = pod("not-in-gpu-node", cpu="100m", affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "aliyun.accelerator/nvidia_name",
                                   "operator": "DoesNotExist"}]}]}}})
    p["spec"]["containers"][0]["image"] = "nginx"
    return p


def gpulabel_oneshot(api, tmp, node_name):
    kc = api.write_kubeconfig(os.path.join(tmp, "kc-gpulabel"))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GPULABEL_") and k not in ("NODE_NAME", "KUBECONFIG", "FAKE_NVML_CONFIG")}
    p = subprocess.run([util.binary("gpulabel"), "--oneshot", "--node-name", node_name,
                        "--kubeconfig", kc, "--nvml-lib", util.fake_nvml()],
                       capture_output=True, text=True, timeout=30, env=env)
    if p.returncode != 0:
        raise AssertionError("gpulabel on %s: exit %d: %s" % (node_name, p.returncode, p.stderr))


def test_seed_scenario_with_gpulabel():
    tmp = tempfile.mkdtemp(prefix="serve-seed-")
    with FakeApiServer() as api:
        # two GPU nodes (the device plugin advertises one nvidia.com/gpu each) and a worker
        api.add(node("gpu-node-1", cpu="8", memory="32Gi", gpus=1))
        api.add(node("gpu-node-2", cpu="8", memory="32Gi", gpus=1))
        api.add(node("worker-1", cpu="4", memory="16Gi"))
        gpulabel_oneshot(api, tmp, "gpu-node-1")
        gpulabel_oneshot(api, tmp, "gpu-node-2")
        util.check_eq(api.get("nodes", "gpu-node-1")["metadata"]["labels"].get(
            "aliyun.accelerator/nvidia_name"), "Tesla-M40", "gpulabel's label on gpu-node-1")
        for s in ("abcde", "fghij", "klmno"):
            api.add(tf_notebook_pod(s))
        api.add(not_in_gpu_node_pod())
        # a pod for another scheduler is left alone
        api.add(pod("for-default-scheduler", scheduler="default-scheduler"))
        sv = Serve(api, ["-v", "2"], tmp)
        try:
            wait_for("3 pods bound", lambda: len(bound(api)) == 3)
            failed = wait_for("a FailedScheduling event", lambda: events(api, "FailedScheduling"))
            placed = bound(api)
            util.check_eq(placed.get("not-in-gpu-node"), "worker-1", "not-in-gpu-node's node")
            tf = sorted(n for p, n in placed.items() if p.startswith("tf-notebook"))
            util.check_eq(tf, ["gpu-node-1", "gpu-node-2"], "nodes of the bound tf-notebook pods")
            pending = [p for p in api.list("pods") if p["metadata"]["name"].startswith("tf-notebook")
                       and not p["spec"].get("nodeName")]
            util.check_eq(len(pending), 1, "pending tf-notebook pods")
            name = pending[0]["metadata"]["name"]
            ev = failed[0]
            util.check_eq(ev["regarding"]["name"], name, "FailedScheduling event's pod")
            util.check_eq(ev["note"], SEED_MESSAGE, "FailedScheduling note")
            util.check_eq((ev["type"], ev["action"], ev["reportingController"]),
                          ("Warning", "Scheduling", "gpusched"), "event type/action/controller")
            cond = wait_for("the PodScheduled condition", lambda: [
                c for c in (api.get("pods", name).get("status") or {}).get("conditions", [])
                if c["type"] == "PodScheduled"])[0]
            util.check_eq((cond["status"], cond["reason"], cond["message"]),
                          ("False", "Unschedulable", SEED_MESSAGE), "PodScheduled condition")
            sched = wait_for("3 Scheduled events", lambda: len(events(api, "Scheduled")) == 3 and
                             events(api, "Scheduled"))
            notes = sorted(e["note"] for e in sched)
            want = sorted("Successfully assigned default/%s to %s" % (p, n) for p, n in placed.items())
            util.check_eq(notes, want, "Scheduled event notes")
            util.check_eq(api.get("pods", "for-default-scheduler")["spec"].get("nodeName"), None,
                          "pod of another scheduler")
            util.check_eq(binding_posts(api).get("for-default-scheduler"), None,
                          "bindings of another scheduler's pod")
            # the GPU frees up: the waiting replica is placed on the node of the deleted one
            gone = [p for p, n in placed.items() if n == "gpu-node-2"][0]
            api.delete("pods", gone)
            wait_for("the third replica bound", lambda: bound(api).get(name) == "gpu-node-2")
        finally:
            util.check_eq(sv.stop(), 0, "exit status after SIGTERM")


def test_bind_conflict_and_not_found_are_not_retried_in_a_storm():
    with FakeApiServer() as api:
        api.add(node("n1"))
        api.inject("POST", r"/pods/p-conflict/binding$", 409, times=1,
                   message='Operation cannot be fulfilled on pods/binding "p-conflict": injected')
        api.inject("POST", r"/pods/p-gone/binding$", 404, times=1,
                   message='pods "p-gone" not found')
        api.add(pod("p-conflict"))
        api.add(pod("p-gone"))
        api.add(pod("p-ok"))
        sv = Serve(api, ["-v", "2"])
        try:
            wait_for("p-conflict and p-ok bound",
                     lambda: "p-conflict" in bound(api) and "p-ok" in bound(api))
            posts = binding_posts(api)
            util.check_eq(posts.get("p-conflict"), 2, "binding POSTs for p-conflict (409, then retry)")
            util.check_eq(posts.get("p-ok"), 1, "binding POSTs for p-ok")
            # 404: the pod is treated as deleted, not retried until something changes it; here
            # the double's pod is not gone, and the SchedulerError condition written for it (as
            # kube-scheduler writes it) is such a change: tried once more, once
            wait_for("p-gone bound", lambda: "p-gone" in bound(api))
            posts = binding_posts(api)
            util.check_eq(posts.get("p-gone"), 2, "binding POSTs for p-gone")
            util.check_eq(sorted(e["note"] for e in events(api, "FailedScheduling")),
                          ['running Bind plugin "DefaultBinder": Operation cannot be fulfilled '
                           'on pods/binding "p-conflict": injected',
                           'running Bind plugin "DefaultBinder": pods "p-gone" not found'],
                          "FailedScheduling notes")
            util.check_eq(sv.metric("gpusched_bind_conflicts_total"), 1.0, "conflicts metric")
            util.check_eq(sv.metric("gpusched_bind_not_found_total"), 1.0, "not-found metric")
            # a real conflict: someone else bound the pod first; it stays where it is
            api.add(pod("p-raced", node_name="n1"))
            wait_for("p-raced seen", lambda: "p-raced" in bound(api))
            util.check_eq(binding_posts(api).get("p-raced"), None, "bindings of a bound pod")
        finally:
            util.check_eq(sv.stop(), 0, "exit status")


def test_a_refused_bind_is_reported_as_a_scheduler_error_and_retried():
    """kube-scheduler's DefaultBinder error: a FailedScheduling event and the PodScheduled
    condition (reason SchedulerError) say `running Bind plugin "DefaultBinder": <error>`, and
    the pod is tried again after its backoff."""
    refused = 'Operation cannot be fulfilled on pods/binding "p-refused": injected'
    want = 'running Bind plugin "DefaultBinder": ' + refused
    with FakeApiServer() as api:
        api.add(node("n1"))
        api.inject("POST", r"/pods/p-refused/binding$", 409, times=1, message=refused)
        api.add(pod("p-refused"))
        sv = Serve(api, ["-v", "2"])
        try:
            wait_for("p-refused bound on its retry", lambda: "p-refused" in bound(api))
            util.check_eq([(e["type"], e["action"], e["note"]) for e in events(api, "FailedScheduling")],
                          [("Warning", "Scheduling", want)], "FailedScheduling events")
            patches = [r["body"] for r in list(api.requests)
                       if r["method"] == "PATCH" and r["path"].endswith("/pods/p-refused/status")]
            conds = [c for b in patches for c in (b.get("status") or {}).get("conditions") or []
                     if c.get("type") == "PodScheduled"]
            util.check_eq([(c["status"], c["reason"], c["message"]) for c in conds],
                          [("False", "SchedulerError", want)], "PodScheduled conditions written")
            util.check_eq(binding_posts(api).get("p-refused"), 2, "binding POSTs (refused, retried)")
        finally:
            util.check_eq(sv.stop(), 0, "exit status")


def test_events_are_written_while_binds_wait_for_the_rate_limit():
    # Under the client limit every bind holds a write slot while it waits for its token; the
    # Scheduled events (a limiter of their own) must still go out meanwhile, not only once
    # the binds run out (an ordering check on the double's request log, not a timing test).
    n = 30
    with FakeApiServer() as api:
        api.add(node("n1"))
        for i in range(n):
            api.add(pod("p%02d" % i))
        sv = Serve(api, ["--kube-api-qps", "10", "--kube-api-burst", "1", "--bind-workers", "4"])
        try:
            wait_for("every pod bound and reported",
                     lambda: len(bound(api)) == n and len(events(api, "Scheduled")) == n)
            reqs = list(api.requests)  # in the order the double received them
            binds = [i for i, r in enumerate(reqs)
                     if r["method"] == "POST" and r["path"].endswith("/binding")]
            evs = [i for i, r in enumerate(reqs)
                   if r["method"] == "POST" and r["path"].startswith("/apis/events.k8s.io/")]
            util.check_eq(len(binds), n, "binding POSTs")
            # the first events follow the first binds, not the last ones
            if not evs or min(evs) > binds[n // 2]:
                raise AssertionError("no Scheduled event was written before half the binds")
        finally:
            util.check_eq(sv.stop(), 0, "exit status")


def test_429_with_retry_after_is_honoured():
    with FakeApiServer() as api:
        api.add(node("n1"))
        api.inject("POST", r"/pods/p1/binding$", 429, times=2, retry_after=1)
        api.add(pod("p1"))
        sv = Serve(api)
        try:
            wait_for("p1 bound", lambda: "p1" in bound(api))
            posts = [r["time"] for r in api.requests
                     if r["method"] == "POST" and r["path"].endswith("/pods/p1/binding")]
            util.check_eq(len(posts), 3, "binding POSTs (two 429s, then success)")
            # the client waited for Retry-After before each retry (not a timing test: a
            # retry sent earlier than asked would be a protocol violation)
            if not all(b - a >= 0.9 for a, b in zip(posts, posts[1:])):
                raise AssertionError("retries did not wait Retry-After: %r" % posts)
            # the rest client's retries are one Bind: one scheduled attempt, no error (counted
            # when serve has the bind's answer, which can be after the double shows it bound)
            wait_for("the scheduled attempt counted", lambda: sv.metric(
                "scheduler_schedule_attempts_total", 'profile="gpusched",result="scheduled"') == 1.0)
            util.check_eq(sv.metric("scheduler_schedule_attempts_total",
                                    'profile="gpusched",result="error"'), None, "error attempts")
        finally:
            util.check_eq(sv.stop(), 0, "exit status")


def test_watch_expiry_relists_without_losing_or_duplicating():
    with FakeApiServer() as api:
        api.add(node("n1", cpu="2", pods="110"))
        for i in range(5):
            api.add(pod("a%d" % i, cpu="100m"))
        sv = Serve(api, ["-v", "2"])
        try:
            wait_for("first pods bound", lambda: len(bound(api)) == 5)
            lists_before = sum(1 for r in api.requests if r["path"] == "/api/v1/pods"
                               and "watch" not in r["query"])
            # the stream position is compacted away: the watch gets ERROR 410 and must relist
            api.compact(close_watches=True)
            for i in range(5):
                api.add(pod("b%d" % i, cpu="100m"))
            api.delete("pods", "a0")
            wait_for("the pods relisted",
                     lambda: sum(1 for r in api.requests if r["path"] == "/api/v1/pods"
                                 and "watch" not in r["query"]) > lists_before)
            wait_for("new pods bound", lambda: len(bound(api)) == 9)
            # n1 has 2 cpus: 19 pods of 100m fit, 21 do not; the deleted a0 must have been
            # released from the cache by the relist, the bound ones not counted twice
            for i in range(12):
                api.add(pod("c%d" % i, cpu="100m"))
            # (a0's delete may reach the cache after some c pods were tried: a pod that failed
            # then moves back and binds; so wait for the end state, not for a count of events)
            wait_for("20 pods bound", lambda: len(bound(api)) == 20)
            wait_for("the 21st pod reported", lambda: [
                e for e in events(api, "FailedScheduling")
                if e["regarding"]["name"] not in bound(api)])
            util.check_eq(len(bound(api)), 20, "pods bound on a 2-cpu node (100m each)")
            util.check_eq(max(binding_posts(api).values()), 1, "binding POSTs per pod")
        finally:
            util.check_eq(sv.stop(), 0, "exit status")


def test_probes_and_metrics():
    with FakeApiServer() as api:
        api.add(node("n1"))
        api.add(pod("p1"))
        api.add(pod("too-big", cpu="100"))
        sv = Serve(api, ["--profile", "gpu"])
        try:
            util.check_eq(sv.get("/healthz"), (200, "ok"), "/healthz")
            wait_for("ready", sv.ready)
            wait_for("p1 bound", lambda: "p1" in bound(api))
            wait_for("too-big reported", lambda: events(api, "FailedScheduling"))
            ev = events(api, "FailedScheduling")[0]
            # more cpu than the node has at all: preemption cannot help (Unresolvable)
            util.check_eq(ev["note"], "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 "
                          "nodes are available: 1 Preemption is not helpful for scheduling.",
                          "FailedScheduling note")
            # kube-scheduler's profile label is the pod's schedulerName, not the --profile; the
            # attempt counts once serve has the bind's answer, which can be after the double
            # shows the pod bound
            wait_for("the scheduled attempt counted", lambda: sv.metric(
                "scheduler_schedule_attempts_total", 'profile="gpusched",result="scheduled"') == 1.0)
            unsched = sv.metric("scheduler_schedule_attempts_total",
                                'profile="gpusched",result="unschedulable"')
            util.check_eq(unsched >= 1, True, "unschedulable attempts")
            # DefaultPreemption's PostFilter ran at every unschedulable attempt
            util.check_eq(sv.metric("scheduler_preemption_attempts_total"), unsched,
                          "preemption attempts")
            util.check_eq(sv.metric("scheduler_pending_pods", 'queue="unschedulable"'), 1.0,
                          "unschedulable queue depth")
            util.check_eq(sv.metric("scheduler_pod_scheduling_sli_duration_seconds_count",
                                    'attempts="1"'), 1.0, "SLI samples of pods bound at the first attempt")
            util.check_eq(sv.metric("scheduler_pod_scheduling_attempts_count"), 1.0,
                          "attempts histogram: one bound pod")
            util.check_eq(sv.metric("scheduler_pod_scheduling_attempts_sum"), 1.0,
                          "attempts histogram: bound at the first attempt")
            util.check_eq(sv.metric("scheduler_cache_size", 'type="nodes"'), 1.0, "nodes in the cache")
            wait_for("p1 in the cache", lambda: sv.metric("scheduler_cache_size", 'type="pods"') == 1.0)
            util.check_eq(sv.metric("leader_election_master_status", 'name="gpusched"'), None,
                          "no leader-election metric without election")
            util.check_eq(sv.get("/nope")[0], 404, "unknown path")
        finally:
            util.check_eq(sv.stop(), 0, "exit status")


def test_not_ready_until_synced():
    with FakeApiServer() as api:
        api.add(node("n1"))
        api.forbid("list", "pods")
        sv = Serve(api)
        try:
            wait_for("a failed pod list", lambda: sv.grep(r'list failed.*resource="pods"'))
            util.check_eq(sv.get("/readyz")[0], 503, "/readyz before the pod informer synced")
            util.check_eq(sv.get("/healthz")[0], 200, "/healthz")
            api.allow("list", "pods")
            wait_for("ready after the list succeeds", sv.ready)
        finally:
            util.check_eq(sv.stop(), 0, "exit status")


def test_flags():
    gs = util.binary("gpusched")
    p = util.run([gs, "serve", "--help"])
    util.check_eq(p.returncode, 0, "--help exit")
    for flag in ("--scheduler-name", "--leader-elect-lease-duration", "--percentage-of-nodes-to-score"):
        if flag not in p.stdout:
            raise AssertionError("help lacks %s: %s" % (flag, p.stdout))
    for args, msg in ((["--bogus"], "unknown flag --bogus"),
                      (["--profile", "fast"], "--profile: unknown profile 'fast'"),
                      (["--leader-elect-lease-duration", "soon"], "--leader-elect-lease-duration: 'soon'"),
                      (["--kube-api-qps", "x"], "--kube-api-qps: 'x'"),
                      (["--percentage-of-nodes-to-score", "101"],
                       "--percentage-of-nodes-to-score: '101' is not an integer in 0..100"),
                      (["--percentage-of-nodes-to-score", "-1"], "--percentage-of-nodes-to-score: '-1'"),
                      (["--percentage-of-nodes-to-score", "ten"], "--percentage-of-nodes-to-score: 'ten'"),
                      (["--logging-format", "xml"],
                       "--logging-format: unsupported log format 'xml' (want text or json)"),
                      (["--logging-format", ""], "--logging-format: unsupported log format ''"),
                      (["--leader-elect", "--leader-elect-lease-duration", "5s",
                        "--leader-elect-renew-deadline", "10s"], "must be greater than")):
        p = util.run([gs, "serve"] + args)
        util.check_eq(p.returncode, 2, "exit status of %r" % args)
        if msg not in p.stderr or len(p.stderr.strip().splitlines()) != 1:
            raise AssertionError("stderr of %r: %r" % (args, p.stderr))
    # klog-style -v=2 (as in deploy/gpusched/deployment.yaml) is accepted
    p = util.run([gs, "serve", "-v=2", "--kubeconfig", "/nonexistent/kubeconfig", "--metrics-addr", "0"])
    util.check_eq(p.returncode, 1, "exit status with a missing kubeconfig")
    if "/nonexistent/kubeconfig" not in p.stderr:
        raise AssertionError("stderr does not name the kubeconfig: %r" % p.stderr)


def test_json_log_lines():
    # --logging-format json: every stderr line is one JSON object, as kube-scheduler
    # --logging-format=json writes them (component-base's JSON logger)
    with FakeApiServer() as api:
        api.add(node("n1", cpu="1"))
        api.add(pod("p1"))
        api.add(pod("too-big", cpu="2"))
        before = time.time()
        sv = Serve(api, ["--logging-format", "json", "-v", "4"])
        try:
            wait_for("p1 bound", lambda: "p1" in bound(api))
            wait_for("too-big reported", lambda: events(api, "FailedScheduling"))
            wait_for("the bind's log line", lambda: sv.grep("Successfully bound pod"))
        finally:
            util.check_eq(sv.stop(), 0, "exit status")
        after = time.time()
        objs = []
        for line in sv.lines:
            try:
                obj = json.loads(line)
            except ValueError:
                raise AssertionError("not a JSON line: %r" % line)
            if list(obj)[:3] != ["ts", "caller", "msg"]:
                raise AssertionError("not ts, caller, msg first: %r" % line)
            if not (before - 1) * 1000 <= obj["ts"] <= (after + 1) * 1000:
                raise AssertionError("ts of %r outside the run" % line)
            if not re.match(r"^(serve|kube)/[a-z_]+\.c:\d+$", obj["caller"]):
                raise AssertionError("caller of %r" % line)
            objs.append(obj)
        start = [o for o in objs if o["msg"] == "Starting gpusched"]
        util.check_eq(len(start), 1, "one start line")
        util.check_eq((start[0]["v"], start[0]["schedulerName"], isinstance(start[0]["metricsPort"], int)),
                      (0, "gpusched", True), "the start line's pairs")
        b = [o for o in objs if o["msg"] == "Successfully bound pod to node"]
        # a pod is klog.KObj's object, as in kube-scheduler's JSON lines
        util.check_eq([(o["v"], o["pod"], o["node"]) for o in b],
                      [(2, {"name": "p1", "namespace": "default"}, "n1")], "the bind line")
        u = [o for o in objs if o["msg"] == "Unable to schedule pod; no fit; waiting"]
        util.check_eq(bool(u) and u[0]["pod"] == {"name": "too-big", "namespace": "default"} and
                      u[0]["err"].startswith("0/1 nodes are available"), True, "the no-fit line")


def test_repeated_failed_scheduling_is_one_event_series():
    # client-go's recorder: the second occurrence of an Event (same pod version) is a PATCH of
    # its series; a PATCH answered 404 (the Event expired) creates it again, series included
    with FakeApiServer() as api:
        api.add(node("n1", cpu="1"))
        api.add(pod("big", cpu="2"))
        sv = Serve(api, ["-v", "2"])
        try:
            def fs():
                return [e for e in events(api, "FailedScheduling") if e["regarding"]["name"] == "big"]

            def another_attempt(i):
                # a node's labels changed move big back to be tried (after its backoff); its
                # message stays the same, so no status write makes a new version of big
                n1 = api.get("nodes", "n1")
                n1["metadata"].setdefault("labels", {})["attempt"] = str(i)
                api.add(n1)
                wait_for("attempt %d at big" % i, lambda: sv.count("Unable to schedule pod") >= i)

            wait_for("big's first FailedScheduling", fs)
            wait_for("big's status written", lambda: (api.get("pods", "big").get("status") or {}).get("conditions"))
            first = fs()[0]
            # the status write made a new version of big: its next attempt is another Event
            another_attempt(2)
            wait_for("a second Event", lambda: len(fs()) == 2)
            second = [e for e in fs() if e["metadata"]["name"] != first["metadata"]["name"]][0]
            util.check_eq(second["regarding"]["resourceVersion"] != first["regarding"]["resourceVersion"], True,
                          "the second Event names the pod's new version")
            # the same version again: one PATCH of the series, count 2
            another_attempt(3)
            wait_for("the series", lambda: (api.get("events.events.k8s.io", second["metadata"]["name"])
                                            or {}).get("series"))
            ev = api.get("events.events.k8s.io", second["metadata"]["name"])
            util.check_eq(ev["series"]["count"], 2, "series count")
            patches = [r for r in api.requests if r["method"] == "PATCH" and "/events/" in r["path"]]
            util.check_eq(len(patches), 1, "one PATCH of the series")
            util.check_eq(sorted(patches[0]["body"]), ["series"], "the PATCH carries the series only")
            util.check_eq(len(fs()), 2, "still two Events")
            # later occurrences only count in memory until the series is written again
            another_attempt(4)
            time.sleep(0.5)
            util.check_eq(len([r for r in api.requests if r["method"] == "PATCH" and "/events/" in r["path"]]),
                          1, "no PATCH for the third occurrence")
        finally:
            util.check_eq(sv.stop(), 0, "exit status")


def test_series_patch_of_an_expired_event_creates_it_again():
    with FakeApiServer() as api:
        api.add(node("n1", cpu="1"))
        api.add(pod("big", cpu="2"))
        sv = Serve(api)
        try:
            def fs():
                return [e for e in events(api, "FailedScheduling") if e["regarding"]["name"] == "big"]
            wait_for("big's first FailedScheduling", fs)
            wait_for("big's status written", lambda: (api.get("pods", "big").get("status") or {}).get("conditions"))

            def relabel(i):
                # moves big back to be tried with the same message: no new version of big
                n1 = api.get("nodes", "n1")
                n1["metadata"].setdefault("labels", {})["attempt"] = str(i)
                api.add(n1)
            relabel(2)
            wait_for("a second Event", lambda: len(fs()) == 2)
            second = max(fs(), key=lambda e: int(e["regarding"]["resourceVersion"]))
            name = second["metadata"]["name"]
            api.delete("events.events.k8s.io", name)  # expired (the API server's event TTL)
            relabel(3)
            wait_for("the Event created again", lambda: api.get("events.events.k8s.io", name))
            again = api.get("events.events.k8s.io", name)
            util.check_eq((again["series"]["count"], again["eventTime"], again["note"]),
                          (2, second["eventTime"], second["note"]), "the Event again, with its series")
            reqs = [(r["method"], r.get("status")) for r in api.requests if "/events" in r["path"]
                    and (r["method"] == "PATCH" or (r["method"] == "POST" and (r.get("body") or {}).get("series")))]
            util.check_eq([m for m, _ in reqs], ["PATCH", "POST"], "a PATCH (404), then the create")
        finally:
            util.check_eq(sv.stop(), 0, "exit status")


def test_node_sampling_by_default_keeps_the_full_message():
    with FakeApiServer() as api:
        # 120 nodes: kube-scheduler's adaptive share stops a cycle at 100 feasible nodes
        for i in range(120):
            api.add(node("n%03d" % i, cpu="1"))
        for i in range(10):
            api.add(pod("p%d" % i))
        api.add(pod("too-big", cpu="2"))
        sv = Serve(api)
        try:
            util.check_eq(sv.grep(r"percentageOfNodesToScore=(\d+)"), ("0",), "default percentage")
            wait_for("10 pods bound", lambda: len(bound(api)) == 10)
            ev = wait_for("too-big reported", lambda: events(api, "FailedScheduling"))[0]
            # it fits nowhere, so every node was filtered and N counts them all
            util.check_eq(ev["note"], "0/120 nodes are available: 120 Insufficient cpu. preemption: "
                          "0/120 nodes are available: 120 Preemption is not helpful for scheduling.",
                          "FailedScheduling note")
        finally:
            util.check_eq(sv.stop(), 0, "exit status")
    with FakeApiServer() as api:
        api.add(node("n1"))
        sv = Serve(api, ["--percentage-of-nodes-to-score", "100"])
        try:
            util.check_eq(sv.grep(r"percentageOfNodesToScore=(\d+)"), ("100",), "explicit percentage")
        finally:
            util.check_eq(sv.stop(), 0, "exit status")


def test_preemption_deletes_victims_and_nominates():
    with FakeApiServer() as api:
        api.add(node("n1", cpu="1"))
        api.add(pod("low", cpu="1", node_name="n1", priority=0))
        api.add(pod("high", cpu="1", priority=1000))
        sv = Serve(api, ["-v", "2"])
        try:
            wait_for("high bound", lambda: bound(api).get("high") == "n1")
            util.check_eq(api.get("pods", "low"), None, "the victim")
            patches = [r["body"] for r in api.requests if r["method"] == "PATCH"
                       and r["path"].endswith("/pods/high/status")]
            util.check_eq([p["status"].get("nominatedNodeName") for p in patches][:1], ["n1"],
                          "nominatedNodeName patched")
            util.check_eq(patches[0]["status"]["conditions"][0]["message"],
                          "0/1 nodes are available: 1 Insufficient cpu. preemption: found a potential "
                          "placement for pod on node n1, preempting 1 victims",
                          "condition message when preemption found victims")
            # the executor's order: the victim's DisruptionTarget condition, then its DELETE
            low = [r for r in api.requests if "/pods/low" in r["path"] and r["method"] in ("PATCH", "DELETE")]
            util.check_eq([(r["method"], r["path"].rsplit("/", 1)[-1]) for r in low],
                          [("PATCH", "status"), ("DELETE", "low")], "requests about the victim")
            util.check_eq({k: v for k, v in low[0]["body"]["status"]["conditions"][0].items()
                           if k != "lastTransitionTime"},
                          {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                           "message": "gpusched: preempting to accommodate a higher priority pod"},
                          "the victim's DisruptionTarget condition")
            uid = api.get("pods", "high")["metadata"]["uid"]
            pre = wait_for("a Preempted event", lambda: events(api, "Preempted"))
            util.check_eq((pre[0]["regarding"]["name"], pre[0]["note"]),
                          ("low", "Preempted by pod %s on node n1" % uid), "Preempted event")
            util.check_eq((sv.metric("scheduler_preemption_victims_count"),
                           sv.metric("scheduler_preemption_victims_sum")), (1.0, 1.0),
                          "victims histogram: one preemption, one victim")
            # regarding is the victim as the scheduler knew it
            low_obj = [r for r in api.requests if r["method"] == "DELETE"
                       and r["path"].endswith("/pods/low")]
            util.check_eq(bool(low_obj), True, "the victim's DELETE")
            util.check_eq(pre[0]["regarding"].get("uid") is not None, True, "Preempted regarding.uid")
            util.check_eq(pre[0]["regarding"].get("resourceVersion") is not None, True,
                          "Preempted regarding.resourceVersion")
            util.check_eq(pre[0].get("related"), None, "no related object, as kube-scheduler's")
        finally:
            util.check_eq(sv.stop(), 0, "exit status")


def test_preemption_avoids_a_victim_a_pdb_protects():
    """kube-scheduler's DefaultPreemption prefers the candidate with the fewest
    PodDisruptionBudget violations; serve watches policy/v1 PDBs for it. Without the budget
    the later-started db would be the victim (latest start wins the last tie)."""
    with FakeApiServer() as api:
        api.add(node("n1", cpu="1"))
        api.add(node("n2", cpu="1"))
        api.add(pod("batch", cpu="1", node_name="n1", priority=0))
        api.add(pod("db", cpu="1", node_name="n2", priority=0, labels={"app": "db"}))
        api.add({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                 "metadata": {"name": "db", "namespace": "default"},
                 "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}},
                 "status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1,
                            "expectedPods": 1}})
        api.add(pod("high", cpu="1", priority=1000))
        sv = Serve(api, ["-v", "2"])
        try:
            wait_for("high bound", lambda: bound(api).get("high") == "n1")
            deletes = [r["path"].rsplit("/", 1)[-1] for r in api.requests if r["method"] == "DELETE"]
            util.check_eq(deletes, ["batch"], "victims deleted")
            util.check_eq(api.get("pods", "db")["spec"]["nodeName"], "n2", "the protected pod")
        finally:
            util.check_eq(sv.stop(), 0, "exit status")


def test_sigterm_finishes_binds_in_flight():
    with FakeApiServer() as api:
        api.add(node("n1"))
        api.delay("POST", r"/pods/slow/binding$", 2.0)
        api.add(pod("slow"))
        sv = Serve(api, ["-v", "2"])
        try:
            wait_for("the bind to be in flight", lambda: binding_posts(api).get("slow"))
            util.check_eq(sv.stop(signal.SIGTERM), 0, "exit status after SIGTERM")
            util.check_eq(bound(api).get("slow"), "n1", "pod whose bind was in flight at SIGTERM")
            if not sv.grep(r'"Successfully bound pod to node" pod="default/slow"'):
                raise AssertionError("the in-flight bind was not reported: " + sv.log_tail())
        finally:
            sv.kill()


def test_unmodelled_field_is_refused_not_bound():
    """A pod using a field gpusched does not model (here an in-line GCE disk, whose conflicts
    VolumeRestrictions would check) is not bound: it gets a FailedScheduling event naming the
    field, and a log line. (A generic ephemeral volume is a claim: refused as the next test
    shows.)"""
    with FakeApiServer() as api:
        api.add(node("n1"))
        p = pod("db")
        p["spec"]["volumes"] = [{"name": "data", "gcePersistentDisk": {"pdName": "db-disk"}}]
        api.add(p)
        api.add(pod("web"))
        sv = Serve(api, [])
        try:
            wait_for("web bound", lambda: "web" in bound(api))
            ev = wait_for("db refused", lambda: [e for e in events(api, "FailedScheduling")
                                                 if e["regarding"]["name"] == "db"])[0]
            util.check_eq(ev["type"], "Warning", "event type")
            util.check_eq(ev["note"], "gpusched does not support spec.volumes[0].gcePersistentDisk "
                          "(VolumeRestrictions (disk conflicts) is not modelled): not scheduled",
                          "FailedScheduling note")
            util.check_eq("db" in bound(api), False, "db bound")
            wait_for("the log line naming the field",
                     lambda: sv.grep(r'field="spec\.volumes\[0\]\.gcePersistentDisk"'))
        finally:
            util.check_eq(sv.stop(), 0, "exit status")


def test_claim_pod_is_refused_not_bound():
    """serve does not watch PersistentVolumeClaims, PersistentVolumes or StorageClasses: a pod
    with a claim is not bound, with a FailedScheduling event saying so and a log line."""
    with FakeApiServer() as api:
        api.add(node("n1"))
        p = pod("db")
        p["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "db-data"}}]
        api.add(p)
        api.add(pod("web"))
        sv = Serve(api, [])
        try:
            wait_for("web bound", lambda: "web" in bound(api))
            ev = wait_for("db refused", lambda: [e for e in events(api, "FailedScheduling")
                                                 if e["regarding"]["name"] == "db"])[0]
            util.check_eq(ev["note"], "gpusched serve does not support "
                          "spec.volumes[].persistentVolumeClaim (VolumeBinding, VolumeZone and "
                          "VolumeRestrictions need PersistentVolumeClaims, PersistentVolumes and "
                          "StorageClasses, which serve does not watch): not scheduled",
                          "FailedScheduling note")
            util.check_eq("db" in bound(api), False, "db bound")
            wait_for("the log line naming the claim", lambda: sv.grep(r'claim="db-data"'))
        finally:
            util.check_eq(sv.stop(), 0, "exit status")


def test_ephemeral_volume_pod_is_refused_as_a_claim():
    """A generic ephemeral volume uses the claim <pod>-<volume>: serve refuses the pod as it
    refuses any pod with a claim."""
    with FakeApiServer() as api:
        api.add(node("n1"))
        p = pod("db")
        p["spec"]["volumes"] = [{"name": "data", "ephemeral": {"volumeClaimTemplate": {
            "spec": {"accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}}}}}]
        api.add(p)
        api.add(pod("web"))
        sv = Serve(api, [])
        try:
            wait_for("web bound", lambda: "web" in bound(api))
            wait_for("db refused", lambda: [e for e in events(api, "FailedScheduling")
                                            if e["regarding"]["name"] == "db"])
            util.check_eq("db" in bound(api), False, "db bound")
            wait_for("the log line naming the claim", lambda: sv.grep(r'claim="db-data"'))
        finally:
            util.check_eq(sv.stop(), 0, "exit status")


def test_default_spreading_follows_the_watched_replicaset():
    """PodTopologySpread's system defaults from a watched ReplicaSet: its pods spread while it
    exists, not after it is deleted, again once it is back; a controller reference of another
    apiVersion (extensions/v1beta1) selects nothing, as in kube-scheduler's DefaultSelector.
    Nodes big (zone a, 64 CPUs), s1 (b, 8), s2 (c, 6): resources alone always pick big."""
    with FakeApiServer() as api:
        for name, zone, cpu in (("big", "a", "64"), ("s1", "b", "8"), ("s2", "c", "6")):
            api.add(node(name, cpu=cpu, memory="32Gi", labels={"topology.kubernetes.io/zone": zone}))
        rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "db", "namespace": "default"},
              "spec": {"replicas": 5, "selector": {"matchLabels": {"app": "db"}},
                       "template": {"metadata": {"labels": {"app": "db"}},
                                    "spec": {"containers": [{"name": "c", "image": "db"}]}}}}
        api.add(rs)
        sv = Serve(api, ["-v", "4"])
        n = [0]

        def place(api_version="apps/v1"):
            p = pod("db-%d" % n[0], cpu="500m", memory="512Mi", labels={"app": "db"})
            n[0] += 1
            p["metadata"]["ownerReferences"] = [{"apiVersion": api_version, "kind": "ReplicaSet", "name": "db",
                                                 "uid": "rs-uid", "controller": True}]
            api.add(p)
            name = p["metadata"]["name"]
            return wait_for(name + " bound", lambda: sv._dead() or bound(api).get(name))

        def seen(what):
            want = sv.count(r'"ReplicaSet %s" object="default/db"' % what) + 1
            return lambda: sv._dead() or sv.count(r'"ReplicaSet %s" object="default/db"' % what) >= want
        try:
            got = [place(), place()]
            deleted = seen("deleted")
            api.delete("replicasets", "db")
            wait_for("the ReplicaSet gone from serve's cache", deleted)
            got.append(place())
            added = seen("added")
            api.add(rs)
            wait_for("the ReplicaSet back in serve's cache", added)
            got.append(place())
            got.append(place("extensions/v1beta1"))
        finally:
            util.check_eq(sv.stop(), 0, "exit status")
        util.check_eq(got, ["big", "s1", "big", "s2", "big"], "nodes of db-0 .. db-4")


def test_a_pod_waiting_for_its_affinity_partner_is_retried_when_the_partner_is_bound():
    """A pod whose required pod affinity no bound pod satisfies is parked; binding a matching
    pod (here by another scheduler) moves it back at once, as kube-scheduler's AssignedPod/Add
    event does, not after the periodic flush (10 minutes here). A parked pod without pod
    affinity or DoNotSchedule spreading stays parked."""
    with FakeApiServer() as api:
        api.add(node("n1", labels={"topology.kubernetes.io/zone": "a"}))
        web = pod("web", labels={"app": "web"}, affinity={"podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {"matchLabels": {"app": "cache"}},
                "topologyKey": "topology.kubernetes.io/zone"}]}})
        api.add(web)
        api.add(pod("big", cpu="64"))
        sv = Serve(api, ["-v", "2", "--pod-max-in-unschedulable-pods-duration", "10m"])
        try:
            wait_for("web and big unschedulable", lambda: sv._dead() or {
                e["regarding"]["name"] for e in events(api, "FailedScheduling")} == {"web", "big"})
            api.add(pod("cache", scheduler="default-scheduler", node_name="n1", labels={"app": "cache"}))
            wait_for("web bound", lambda: sv._dead() or bound(api).get("web") == "n1", timeout=30)
            util.check_eq(len([e for e in events(api, "FailedScheduling") if e["regarding"]["name"] == "big"]),
                          1, "FailedScheduling events of big (not moved by the pod add)")
        finally:
            util.check_eq(sv.stop(), 0, "exit status")


def test_a_bound_pod_shrinking_in_place_moves_the_parked_pods():
    """A bound pod resized in place counts what its status reports while that is more than
    its spec: here it still runs with 3 of the node's 4 CPUs, so a 2-CPU pod is parked. When
    the kubelet has applied the resize (status.containerStatuses[].resources.requests back to
    1 CPU) the pod requests less, and the parked pod is retried at once, as kube-scheduler's
    Fit plugin does on UpdatePodScaleDown, not after the periodic flush (10 minutes here)."""
    with FakeApiServer() as api:
        api.add(node("n1", cpu="4"))
        hog = pod("hog", scheduler="default-scheduler", cpu="1", node_name="n1")
        hog["status"] = {"phase": "Running", "containerStatuses": [
            {"name": "main", "allocatedResources": {"cpu": "1"},
             "resources": {"requests": {"cpu": "3"}}}]}
        api.add(hog)
        api.add(pod("web", cpu="2"))
        sv = Serve(api, ["-v", "2", "--pod-max-in-unschedulable-pods-duration", "10m"])
        try:
            wait_for("web unschedulable", lambda: sv._dead() or [
                e for e in events(api, "FailedScheduling") if e["regarding"]["name"] == "web"])
            util.check_eq(bound(api).get("web"), None, "web not bound while hog runs with 3 CPUs")
            hog["status"]["containerStatuses"][0]["resources"]["requests"]["cpu"] = "1"
            api.add(hog)
            wait_for("web bound", lambda: sv._dead() or bound(api).get("web") == "n1", timeout=30)
        finally:
            util.check_eq(sv.stop(), 0, "exit status")
