"""gpusched serve's observability against the real kube-scheduler v1.37.2 on one real
kube-apiserver (k8s_util): the same scenario once for each, on nodes of its own, then

- /metrics: every family serve exports under a scheduler_, leader_election_ or process_ name
  is one kube-scheduler exports too, with the same TYPE, HELP, label names and bucket
  boundaries; the values serve reports are right for what it did, and equal kube-scheduler's
  where the two did the same thing (attempts per bound pod, preemption victims, SLI samples);
- Events: a pod that stays unschedulable over several attempts gets FailedScheduling Events
  aggregated into a series as client-go's recorder does, with the same fields as
  kube-scheduler's (names and times aside), regarding.uid and resourceVersion included; the
  Preempted event names the victim and, as related, the preemptor;
- logs: both run with --logging-format json and every stderr line of each is one JSON object
  that starts with ts, caller, msg.

The scenario: a 2-CPU node; pod a (500m) binds; big (8 CPUs) never fits; low (1 CPU) binds;
high (1 CPU, higher priority) preempts a victim and binds; then filler pods are bound and
deleted, each deletion moving big back to be tried, until its Events form a series.
"""
import json
import os
import re
import socket
import ssl
import time
import urllib.error
import urllib.request

import k8s_util
import util
from k8s_util import wait_for
from serve_util import Serve

NS, SA = "kube-system", "gpusched"
_tmp = k8s_util.tmpdir("k8s-metrics-tmp-")
_state = {}


def setup():
    if not _state:
        c = k8s_util.cluster("metrics")
        c.apply_file("deploy/gpusched/rbac.yaml")
        c.apply([{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n},
                  "value": v} for n, v in (("m-low", 100), ("m-high", 1000))])
        _state["c"] = c
        _state["kc"] = c.sa_kubeconfig(NS, SA)
    return _state["c"], _state["kc"]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class KubeScheduler:
    """The real kube-scheduler with leader election, JSON logs and /metrics on a port of its
    own (self-signed; /metrics allowed without a token)."""

    def __init__(self, c):
        self.port = free_port()
        certs = os.path.join(_tmp, "ks-certs")
        os.makedirs(certs, exist_ok=True)
        self.p = k8s_util.kube_scheduler(
            c, "--leader-elect=true", "--logging-format=json", "--secure-port=%d" % self.port,
            "--bind-address=127.0.0.1", "--cert-dir=" + certs,
            "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics")
        # (the later --leader-elect wins over k8s_util's --leader-elect=false: pflag keeps the last)
        self._ctx = ssl.create_default_context()
        self._ctx.check_hostname = False
        self._ctx.verify_mode = ssl.CERT_NONE

    def metrics(self):
        """/metrics, or "" while the server is not listening yet."""
        try:
            with urllib.request.urlopen("https://127.0.0.1:%d/metrics" % self.port, timeout=10,
                                        context=self._ctx) as r:
                return r.read().decode()
        except (urllib.error.URLError, ConnectionError):
            return ""

    def dead(self):
        return self.p.alive()

    def lines(self):
        return self.p.log().splitlines()

    def stop(self):
        return self.p.stop()


class Gpusched:
    def __init__(self, c, kc):
        self.s = Serve(None, ["--leader-elect", "--logging-format", "json", "-v", "2"],
                       _tmp, name="metrics", kubeconfig=kc, wrap=k8s_util.PDEATHSIG)

    def metrics(self):
        return self.s.get("/metrics")[1]

    def dead(self):
        return self.s._dead()

    def lines(self):
        return list(self.s.lines)

    def stop(self):
        return self.s.stop()


def scenario(c, ns, scheduler, start):
    """Runs the scenario under one scheduler; returns what it observed."""
    c.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    wait_for("the default ServiceAccount of " + ns, lambda: c.get_or_none(
        "/api/v1/namespaces/%s/serviceaccounts/default" % ns))
    node = ns + "-1"
    c.create_node(k8s_util.gpu_node(node, gpus=0, cpu="2", labels={"pool": ns}))
    pods = "/api/v1/namespaces/%s/pods" % ns

    def pod(name, cpu, prio="m-low"):
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"schedulerName": scheduler, "priorityClassName": prio,
                         "nodeSelector": {"pool": ns}, "terminationGracePeriodSeconds": 0,
                         "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                         "resources": {"requests": {"cpu": cpu}}}]}}

    def get(name):
        return c.get_or_none("%s/%s" % (pods, name))

    def on_node(name):
        p = get(name)
        return p and p["spec"].get("nodeName") == node

    def big_events():
        return [e for e in c.events(ns, "FailedScheduling") if e["regarding"]["name"] == "big"]

    sched = start()
    try:
        wait_for("the scheduler to lead", lambda: sched.dead() or re.search(
            r"^leader_election_master_status\{[^}]*\} 1$", sched.metrics(), re.M))
        c.create(pods, pod("a", "500m"))
        wait_for("a bound", lambda: sched.dead() or on_node("a"))
        c.create(pods, pod("big", "8"))
        wait_for("big's FailedScheduling event", lambda: sched.dead() or big_events())
        c.create(pods, pod("low", "1"))
        wait_for("low bound", lambda: sched.dead() or on_node("low"))
        c.create(pods, pod("high", "1", "m-high"))
        wait_for("high bound", lambda: sched.dead() or on_node("high"), timeout=120)
        # each deletion of an assigned pod moves big back; its Events become a series
        fillers = 0
        for i in range(8):
            if any(e.get("series") for e in big_events()):
                break
            fillers += 1
            before = [(e["metadata"]["name"], (e.get("series") or {}).get("count")) for e in big_events()]
            c.create(pods, pod("f%d" % i, "100m"))
            wait_for("f%d bound" % i, lambda: sched.dead() or on_node("f%d" % i))
            c.delete("%s/f%d" % (pods, i), grace=0)
            wait_for("f%d gone" % i, lambda: get("f%d" % i) is None)
            try:
                wait_for("another attempt at big", lambda: sched.dead() or [
                    (e["metadata"]["name"], (e.get("series") or {}).get("count"))
                    for e in big_events()] != before, timeout=20)
            except AssertionError:
                pass  # counted in memory only: the next round shows it
        wait_for("big's Events as a series", lambda: sched.dead() or any(e.get("series") for e in big_events()),
                 timeout=30)
        bound = [p["metadata"]["name"] for p in c.pods(ns) if p["spec"].get("nodeName")]
        out = {"metrics": sched.metrics(), "big": get("big"), "events": big_events(),
               "preempted": c.events(ns, "Preempted"), "scheduled": c.events(ns, "Scheduled"),
               "bound": bound, "node": node, "binds": 3 + fillers,  # a, low, high and the fillers
               "pods": {p["metadata"]["name"]: p for p in c.pods(ns)}}
    finally:
        rc = sched.stop()
        # the next scheduler's messages count this run's nodes no more
        c.delete("/api/v1/nodes/" + node)
    out["rc"], out["lines"] = rc, sched.lines()
    return out


def run_both():
    """The scenario under each scheduler, once per module (a failure fails every case)."""
    if "run" not in _state:
        try:
            c, kc = setup()
            ks = scenario(c, "m-ks", "default-scheduler", lambda: KubeScheduler(c))
            gs = scenario(c, "m-gs", "gpusched", lambda: Gpusched(c, kc))
            _state["run"] = (ks, gs)
        except Exception as e:  # noqa: BLE001 - kept and raised again for every case
            _state["run"] = e
    if isinstance(_state["run"], Exception):
        raise _state["run"]
    return _state["run"]


# ---- the Prometheus text format ---------------------------------------------------------------

def parse_metrics(text):
    """{family: {"type", "help", "samples": [(name, {label: value}, float)]}}"""
    fams = {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name, _, help_ = line[7:].partition(" ")
            fams.setdefault(name, {"samples": []})["help"] = help_
        elif line.startswith("# TYPE "):
            name, _, typ = line[7:].partition(" ")
            fams.setdefault(name, {"samples": []})["type"] = typ
        elif line and not line.startswith("#"):
            m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$', line)
            if not m:
                raise AssertionError("not a sample line: %r" % line)
            labels = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
            base = m.group(1)
            for suffix in ("_bucket", "_sum", "_count"):
                if base.endswith(suffix) and base[:-len(suffix)] in fams:
                    base = base[:-len(suffix)]
            fams.setdefault(base, {"samples": []})["samples"].append((m.group(1), labels, float(m.group(3))))
    return fams


def value(fams, fam, sample=None, **labels):
    for name, lab, v in fams.get(fam, {}).get("samples", []):
        if name == (sample or fam) and all(lab.get(k) == x for k, x in labels.items()):
            return v
    return None


def label_names(fam):
    return {frozenset(k for k in lab if k != "le") for _, lab, _ in fam["samples"]}


def buckets(fam):
    return {lab["le"] for name, lab, _ in fam["samples"] if "le" in lab}


def test_families_are_kube_schedulers():
    ks, gs = run_both()
    k, g = parse_metrics(ks["metrics"]), parse_metrics(gs["metrics"])
    ours = sorted(f for f in g if f.startswith(("scheduler_", "leader_election_", "process_")))
    util.check_eq(len(ours) >= 15, True, "serve exports kube-scheduler's families (%s)" % ours)
    diffs = []
    for f in ours:
        if f not in k:
            diffs.append("%s: not exported by kube-scheduler" % f)
            continue
        for what in ("type", "help"):
            if g[f].get(what) != k[f].get(what):
                diffs.append("%s %s: gpusched %r, kube-scheduler %r" % (f, what, g[f].get(what), k[f].get(what)))
        if g[f]["samples"] and k[f]["samples"] and label_names(g[f]) != label_names(k[f]):
            diffs.append("%s labels: gpusched %s, kube-scheduler %s" % (
                f, sorted(map(sorted, label_names(g[f]))), sorted(map(sorted, label_names(k[f])))))
        if g[f].get("type") == "histogram" and buckets(g[f]) != buckets(k[f]):
            diffs.append("%s buckets: gpusched %s, kube-scheduler %s" % (f, sorted(buckets(g[f])), sorted(buckets(k[f]))))
        # every label value serve uses is one kube-scheduler uses for that label
        for name in ("result", "queue", "type", "extension_point", "status"):
            kv = {lab[name] for _, lab, _ in k[f]["samples"] if name in lab}
            gv = {lab[name] for _, lab, _ in g[f]["samples"] if name in lab}
            if gv - kv and f not in ("scheduler_schedule_attempts_total", "scheduler_scheduling_attempt_duration_seconds"):
                diffs.append("%s %s values %s unknown to kube-scheduler's %s" % (f, name, sorted(gv - kv), sorted(kv)))
            if gv - {"scheduled", "unschedulable", "error"} and name == "result":
                diffs.append("%s result values %s" % (f, sorted(gv)))
    util.check_eq(diffs, [], "differences from kube-scheduler's families")


def test_values_are_right_and_match_kube_schedulers():
    ks, gs = run_both()
    k, g = parse_metrics(ks["metrics"]), parse_metrics(gs["metrics"])
    scheduled = gs["binds"]
    util.check_eq(value(g, "scheduler_schedule_attempts_total", profile="gpusched", result="scheduled"),
                  float(scheduled), "scheduled attempts = pods bound (%d bound now)" % len(gs["bound"]))
    util.check_eq(value(k, "scheduler_schedule_attempts_total", profile="default-scheduler", result="scheduled"),
                  float(ks["binds"]), "kube-scheduler: scheduled attempts = pods bound")
    util.check_eq(value(g, "scheduler_schedule_attempts_total", profile="gpusched", result="error"), None,
                  "no error attempts")
    unsched = value(g, "scheduler_schedule_attempts_total", profile="gpusched", result="unschedulable")
    util.check_eq(value(g, "scheduler_preemption_attempts_total"), unsched,
                  "a PostFilter run after every unschedulable attempt")
    util.check_eq(value(k, "scheduler_preemption_attempts_total"),
                  value(k, "scheduler_schedule_attempts_total", profile="default-scheduler", result="unschedulable"),
                  "kube-scheduler: the same rule")
    for fam, what in (("scheduler_pod_scheduling_attempts", "attempts per bound pod"),
                      ("scheduler_preemption_victims", "preemption victims")):
        got = (value(g, fam, fam + "_count"), value(g, fam, fam + "_sum"))
        want = (value(k, fam, fam + "_count"), value(k, fam, fam + "_sum"))
        util.check_eq(got, want, what + " (count, sum) against kube-scheduler's")
    util.check_eq(value(g, "scheduler_pod_scheduling_attempts", "scheduler_pod_scheduling_attempts_count"),
                  float(scheduled), "one attempts sample per bound pod")
    util.check_eq(value(g, "scheduler_preemption_victims", "scheduler_preemption_victims_sum"), 1.0,
                  "one victim")
    sli = sum(v for n, lab, v in g["scheduler_pod_scheduling_sli_duration_seconds"]["samples"]
              if n.endswith("_count"))
    util.check_eq(sli, float(scheduled), "one SLI sample per bound pod")
    ksli = {lab["attempts"] for n, lab, v in k["scheduler_pod_scheduling_sli_duration_seconds"]["samples"]
            if n.endswith("_count")}
    gsli = {lab["attempts"] for n, lab, v in g["scheduler_pod_scheduling_sli_duration_seconds"]["samples"]
            if n.endswith("_count")}
    util.check_eq(gsli, ksli, "the SLI's attempts label values")
    for q in ("active", "backoff", "unschedulable", "gated"):
        util.check_eq(value(g, "scheduler_pending_pods", queue=q), value(k, "scheduler_pending_pods", queue=q),
                      "pending pods in %s against kube-scheduler's" % q)
    util.check_eq(value(g, "scheduler_pending_pods", queue="unschedulable"), 1.0, "big waits")
    util.check_eq(value(g, "leader_election_master_status", name="gpusched"), 1.0, "leading")
    util.check_eq(value(k, "leader_election_master_status", name="kube-scheduler"), 1.0, "kube-scheduler leading")
    bind_ok = value(g, "scheduler_framework_extension_point_duration_seconds",
                    "scheduler_framework_extension_point_duration_seconds_count",
                    extension_point="Bind", profile="gpusched", status="Success")
    util.check_eq(bind_ok, float(scheduled), "one Bind sample per binding")
    util.check_eq(value(g, "scheduler_cache_size", type="assumed_pods"), 0.0, "no pod left assumed")
    util.check_eq(value(g, "process_cpu_seconds_total") > 0, True, "CPU seconds")


def event_shape(e, pods):
    """An Event without what differs by nature between two runs (names, times, uids,
    resourceVersions, the scheduler's name), with checks that the references are right."""
    reg = e["regarding"]
    pod = pods.get(reg["name"])
    if pod and reg.get("uid") != pod["metadata"]["uid"]:
        raise AssertionError("regarding.uid of %s: %r, the pod's %r" % (e["metadata"]["name"], reg.get("uid"),
                                                                        pod["metadata"]["uid"]))
    out = {k: v for k, v in e.items() if k not in ("metadata", "eventTime", "series", "reportingController",
                                                     "reportingInstance", "deprecatedFirstTimestamp",
                                                     "deprecatedLastTimestamp", "deprecatedCount",
                                                     "deprecatedSource")}
    out["regarding"] = {k: (bool(v) if k in ("uid", "resourceVersion") else v) for k, v in reg.items()
                        if k != "namespace"}
    if "related" in e:
        out["related"] = {k: (bool(v) if k in ("uid", "resourceVersion") else v) for k, v in e["related"].items()
                          if k != "namespace"}
    out["series"] = sorted((e.get("series") or {}).keys())
    out["note"] = re.sub(r"[0-9a-f]{8}-[0-9a-f-]{27}", "UID", e.get("note", "")).replace("m-ks-1", "NODE") \
        .replace("m-gs-1", "NODE").replace("m-ks/", "NS/").replace("m-gs/", "NS/")
    return out


def test_failed_scheduling_events_are_a_series_like_kube_schedulers():
    ks, gs = run_both()
    for who, run in (("kube-scheduler", ks), ("gpusched", gs)):
        series = [e for e in run["events"] if e.get("series")]
        util.check_eq(len(series) >= 1 and series[0]["series"]["count"] >= 2, True,
                      "%s: big's FailedScheduling Events include a series: %r" % (
                          who, [(e["metadata"]["name"], e.get("series")) for e in run["events"]]))
        # one Event per version of the pod it was tried at, never two for one version
        rvs = [e["regarding"]["resourceVersion"] for e in run["events"]]
        util.check_eq(len(rvs), len(set(rvs)), "%s: one Event per resourceVersion of big" % who)
    gshape = sorted(json.dumps(event_shape(e, gs["pods"]), sort_keys=True) for e in gs["events"])
    kshape = sorted(json.dumps(event_shape(e, ks["pods"]), sort_keys=True) for e in ks["events"])
    util.check_eq(set(gshape), set(kshape), "big's FailedScheduling Events, names and times aside")
    gpre = [event_shape(e, gs["pods"]) for e in gs["preempted"]]
    kpre = [event_shape(e, ks["pods"]) for e in ks["preempted"]]
    util.check_eq(gpre, kpre, "the Preempted event, names and times aside")
    gsch = sorted(json.dumps(event_shape(e, gs["pods"]), sort_keys=True) for e in gs["scheduled"]
                  if e["regarding"]["name"] in ("a", "low", "high"))
    ksch = sorted(json.dumps(event_shape(e, ks["pods"]), sort_keys=True) for e in ks["scheduled"]
                  if e["regarding"]["name"] in ("a", "low", "high"))
    util.check_eq(gsch, ksch, "the Scheduled events of a, low and high, names and times aside")


def test_json_log_lines_like_kube_schedulers():
    ks, gs = run_both()
    for who, run in (("kube-scheduler", ks), ("gpusched", gs)):
        objs = []
        for line in run["lines"]:
            try:
                objs.append(json.loads(line))
            except ValueError:
                raise AssertionError("%s: not a JSON line: %r" % (who, line))
        # zap's order: ts, logger (a named logger's name: kube-scheduler's UnhandledError),
        # caller, msg; serve has no named loggers. ts is epoch milliseconds in Go's shortest
        # 'f' form, which has no fraction when the time falls on a whole millisecond (to the
        # double's precision): a JSON number either way
        bad = [o for o in objs if [k for k in o if k in ("ts", "logger", "caller", "msg")] not in
               (["ts", "caller", "msg"], ["ts", "logger", "caller", "msg"]) or list(o)[0] != "ts"
               or not isinstance(o["ts"], (int, float)) or isinstance(o["ts"], bool)]
        util.check_eq(bad[:3], [], "%s: lines not starting with ts (a number), caller, msg" % who)
        if who == "gpusched":
            util.check_eq([o for o in objs if list(o)[:3] != ["ts", "caller", "msg"]][:3], [],
                          "gpusched: ts, caller, msg first")
        util.check_eq(all(isinstance(o.get("v", 0), int) for o in objs), True, "%s: v is an integer" % who)
        util.check_eq(len(objs) > 3, True, "%s: some lines" % who)
    util.check_eq(gs["rc"], 0, "gpusched's exit status")
