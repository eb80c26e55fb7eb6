"""Node sync end to end: the real build/gpulabel, the fake NVML and the API server double.

Every case runs gpulabel against FakeApiServer over TLS with a bearer token and checks the
exact requests in the double's request log: first labelling (one GET, one PATCH with exactly
the expected body), no write when nothing changed, stale removal, foreign labels untouched,
retries, clear errors, NVML coming up late and SIGTERM. Waits poll for a condition with a
generous deadline; nothing asserts how fast something happened.
"""
import atexit
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import util
import fake_apiserver
from fake_apiserver import FakeApiServer

# One CA and server certificate for the whole module: each FakeApiServer would otherwise run
# the openssl CLI five times, which dominates this module's run time on a loaded machine.
_TLS = {}
_make_tls = fake_apiserver.make_tls


def _shared_tls(directory, *args, **kwargs):
    if not _TLS:
        d = tempfile.mkdtemp(prefix="gpulabel-sync-tls-")
        atexit.register(shutil.rmtree, d, True)
        _TLS.update(_make_tls(d, *args, **kwargs))
    return dict(_TLS)


fake_apiserver.make_tls = _shared_tls

NODE = "gpu-1"
NODE_PATH = "/api/v1/nodes/" + NODE
OWNED = "gpulabel.io/owned-labels"
TOKEN = "s3cr3t-token-for-sync-tests"
FOREIGN = {"kubernetes.io/hostname": NODE, "team.example.com/owner": "ml",
           "nvidia.com/gpu.present": "true"}
M40 = 'device name="Tesla M40" memory=12802064384 cc=5.2\n'
M40_LABELS = {"aliyun.accelerator/nvidia_count": "1",
              "aliyun.accelerator/nvidia_mem": "12209MiB",
              "aliyun.accelerator/nvidia_name": "Tesla-M40"}
M40_OWNED = ",".join(sorted(M40_LABELS))
WAIT = 20.0  # deadline for conditions that normally hold within a few cycles


class Cluster:
    """A temp dir, the API server double with one GPU node, a kubeconfig and an NVML config."""

    def __init__(self, labels=None, annotations=None, node=NODE):
        self.dir = tempfile.mkdtemp(prefix="gpulabel-sync-")
        self.api = FakeApiServer(tls=True, tokens=[TOKEN]).start()
        self.kubeconfig = self.api.write_kubeconfig(os.path.join(self.dir, "kubeconfig"), token=TOKEN)
        md = {"name": node, "labels": dict(FOREIGN if labels is None else labels)}
        if annotations:
            md["annotations"] = dict(annotations)
        self.api.add({"apiVersion": "v1", "kind": "Node", "metadata": md,
                      "status": {"capacity": {"cpu": "8"}}})
        self.nvml_config = os.path.join(self.dir, "nvml.conf")
        self.set_gpus(M40)
        self.procs = []

    def set_gpus(self, text):
        """Writes the fake NVML config atomically (gpulabel may read it at any moment)."""
        tmp = self.nvml_config + ".tmp"
        with open(tmp, "w") as f:
            f.write("driver=550.107.02\ncuda=12040\n" + text)
        os.rename(tmp, self.nvml_config)

    def argv(self, *extra, nvml_lib=None):
        return [util.binary("gpulabel"), "--kubeconfig", self.kubeconfig, "--node-name", NODE,
                "--nvml-lib", nvml_lib or util.fake_nvml()] + list(extra)

    def env(self):
        e = dict(os.environ, FAKE_NVML_CONFIG=self.nvml_config)
        for k in list(e):
            if k.startswith("GPULABEL_") or k in ("NODE_NAME", "KUBECONFIG"):
                del e[k]
        return e

    def oneshot(self, *extra, **kw):
        return subprocess.run(self.argv("--oneshot", *extra, **kw), env=self.env(),
                              capture_output=True, text=True, timeout=60)

    def start(self, *extra, argv=None, **kw):
        """Starts the daemon (200 ms interval unless extra says otherwise); stderr to a file."""
        if argv is None:
            if "--sleep-interval" not in extra:
                extra = ("--sleep-interval", "200ms") + tuple(extra)
            argv = self.argv(*extra, **kw)
        err = open(os.path.join(self.dir, "stderr-%d.log" % len(self.procs)), "w+")
        p = subprocess.Popen(argv, env=self.env(), stdout=subprocess.DEVNULL, stderr=err)
        p.errfile = err
        self.procs.append(p)
        return p

    def node(self):
        return self.api.get("nodes", NODE)

    def labels(self):
        return self.node()["metadata"].get("labels", {})

    def annotations(self):
        return self.node()["metadata"].get("annotations", {})

    def node_requests(self, method=None):
        return [r for r in list(self.api.requests)
                if r["path"].startswith("/api/v1/nodes/") and (method is None or r["method"] == method)]

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
            p.errfile.close()
        self.api.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def stderr_of(p):
    p.errfile.flush()
    with open(p.errfile.name) as f:
        return f.read()


def wait_for(cond, what, proc=None, timeout=WAIT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        if proc is not None and proc.poll() is not None:
            raise AssertionError("gpulabel exited (%s) while waiting for %s; stderr:\n%s"
                                 % (proc.returncode, what, stderr_of(proc)))
        time.sleep(0.02)
    raise AssertionError("timed out waiting for %s%s" % (
        what, "; stderr:\n" + stderr_of(proc) if proc is not None else ""))


def stop(p):
    """SIGTERM; the daemon must exit 0 (it sleeps 200 ms at a time at most, so the deadline is
    only a guard against hanging)."""
    p.send_signal(signal.SIGTERM)
    try:
        rc = p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        raise AssertionError("gpulabel did not stop on SIGTERM")
    util.check_eq(rc, 0, "exit status after SIGTERM (stderr: %s)" % stderr_of(p))


def expected_patch(rv, labels, owned, extra=None):
    md = {"resourceVersion": rv}
    if labels:
        md["labels"] = labels
    if owned is not False:
        md["annotations"] = {OWNED: owned}
    if extra:
        md.update(extra)
    return {"metadata": md}


def methods(reqs):
    return [r["method"] for r in reqs]


# ---- oneshot: the reconcile step, request by request -------------------------------------

def test_first_labelling_one_get_one_patch():
    with Cluster() as c:
        rv = c.node()["metadata"]["resourceVersion"]
        p = c.oneshot()
        util.check_eq(p.returncode, 0, "exit status (stderr: %s)" % p.stderr)
        reqs = c.node_requests()
        util.check_eq([(r["method"], r["path"]) for r in reqs],
                      [("GET", NODE_PATH), ("PATCH", NODE_PATH)], "requests")
        util.check_eq(reqs[1]["content_type"], "application/merge-patch+json", "content type")
        util.check_eq(reqs[1]["body"], expected_patch(rv, M40_LABELS, M40_OWNED), "patch body")
        util.check_eq(reqs[1]["query"], {}, "patch query")
        if not reqs[0]["user_agent"].startswith("gpulabel/"):
            raise AssertionError("user agent %r" % reqs[0]["user_agent"])
        util.check_eq(c.labels(), dict(FOREIGN, **M40_LABELS), "node labels")
        util.check_eq(c.annotations().get(OWNED), M40_OWNED, "ownership annotation")
        if TOKEN in p.stderr or TOKEN in p.stdout:
            raise AssertionError("token leaked into the output")


def test_unchanged_node_gets_no_write():
    with Cluster() as c:
        util.check_eq(c.oneshot().returncode, 0, "first run")
        rv = c.node()["metadata"]["resourceVersion"]
        c.api.clear_requests()
        p = c.oneshot()
        util.check_eq(p.returncode, 0, "second run (stderr: %s)" % p.stderr)
        util.check_eq(methods(c.node_requests()), ["GET"], "requests of the second run")
        util.check_eq(c.node()["metadata"]["resourceVersion"], rv, "resourceVersion")


def test_gpu_count_to_zero_removes_owned_labels_only():
    with Cluster() as c:
        util.check_eq(c.oneshot().returncode, 0, "labelling run")
        rv = c.node()["metadata"]["resourceVersion"]
        c.api.clear_requests()
        c.set_gpus("")  # the driver answers, with zero GPUs
        p = c.oneshot()
        util.check_eq(p.returncode, 0, "exit status (stderr: %s)" % p.stderr)
        reqs = c.node_requests()
        util.check_eq(methods(reqs), ["GET", "PATCH"], "requests")
        util.check_eq(reqs[1]["body"],
                      expected_patch(rv, {k: None for k in M40_LABELS}, None), "patch body")
        util.check_eq(c.labels(), FOREIGN, "labels left")
        if OWNED in c.annotations():
            raise AssertionError("ownership annotation left behind")
        c.api.clear_requests()
        util.check_eq(c.oneshot().returncode, 0, "third run")
        util.check_eq(methods(c.node_requests()), ["GET"], "requests once nothing is owned")


def test_schema_switched_off_removes_its_keys():
    with Cluster() as c:
        util.check_eq(c.oneshot("--schema", "ack,gfd").returncode, 0, "ack,gfd run")
        both = c.labels()
        gfd_keys = sorted(k for k in c.annotations()[OWNED].split(",") if k.startswith("nvidia.com/"))
        if not gfd_keys or "nvidia.com/gpu.product" not in gfd_keys:
            raise AssertionError("gfd labels missing: %r" % both)
        if "nvidia.com/gpu.present" in gfd_keys:
            raise AssertionError("gpulabel claimed a label it does not write")
        rv = c.node()["metadata"]["resourceVersion"]
        c.api.clear_requests()
        p = c.oneshot("--schema", "ack")
        util.check_eq(p.returncode, 0, "ack run (stderr: %s)" % p.stderr)
        reqs = c.node_requests()
        util.check_eq(methods(reqs), ["GET", "PATCH"], "requests")
        util.check_eq(reqs[1]["body"],
                      expected_patch(rv, {k: None for k in gfd_keys}, M40_OWNED), "patch body")
        util.check_eq(c.labels(), dict(FOREIGN, **M40_LABELS), "labels after switching gfd off")


def test_foreign_labels_and_unowned_keys_untouched():
    # An ack label someone else set (no ownership annotation) is neither removed nor adopted
    # when no GPU is found; an annotation edited to list foreign keys removes nothing.
    labels = dict(FOREIGN, **{"aliyun.accelerator/nvidia_name": "Tesla-K80"})
    with Cluster(labels=labels, annotations={OWNED: "kubernetes.io/hostname,team.example.com/owner"}) as c:
        c.set_gpus("")
        rv = c.node()["metadata"]["resourceVersion"]
        p = c.oneshot()
        util.check_eq(p.returncode, 0, "exit status (stderr: %s)" % p.stderr)
        reqs = c.node_requests()
        util.check_eq(methods(reqs), ["GET", "PATCH"], "requests")
        util.check_eq(reqs[1]["body"], expected_patch(rv, None, None), "patch body")
        util.check_eq(c.labels(), labels, "labels")


def test_conflict_is_read_again_and_retried():
    with Cluster() as c:
        c.api.inject("PATCH", "^" + NODE_PATH + "$", 409,
                     message='Operation cannot be fulfilled on nodes "gpu-1": the object has been '
                             'modified; please apply your changes to the latest version and try again')
        p = c.oneshot()
        util.check_eq(p.returncode, 0, "exit status (stderr: %s)" % p.stderr)
        util.check_eq(methods(c.node_requests()), ["GET", "PATCH", "GET", "PATCH"], "requests")
        util.check_eq(c.labels(), dict(FOREIGN, **M40_LABELS), "labels")


def test_stale_resource_version_gets_409_from_the_server():
    # The patch pins the resourceVersion read: a node written between our GET and our PATCH
    # answers 409 (the double checks it like kube-apiserver), and gpulabel reads it again.
    with Cluster() as c:
        c.api.delay("PATCH", "^" + NODE_PATH + "$", 0.5)
        p = subprocess.Popen(c.argv("--oneshot"), env=c.env(), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        wait_for(lambda: c.node_requests("PATCH"), "the first PATCH")
        node = c.node()
        node["metadata"]["labels"]["team.example.com/owner"] = "infra"
        c.api.add(node)  # a concurrent writer bumps the resourceVersion
        out, err = p.communicate(timeout=60)
        util.check_eq(p.returncode, 0, "exit status (stderr: %s)" % err)
        reqs = c.node_requests()
        util.check_eq(methods(reqs), ["GET", "PATCH", "GET", "PATCH"], "requests")
        if reqs[1]["body"]["metadata"]["resourceVersion"] == reqs[3]["body"]["metadata"]["resourceVersion"]:
            raise AssertionError("the retry did not use the new resourceVersion")
        util.check_eq(c.labels(), dict(FOREIGN, **dict(M40_LABELS, **{"team.example.com/owner": "infra"})),
                      "labels")


def test_oneshot_node_not_found_is_one_clear_line():
    with Cluster() as c:
        argv = [util.binary("gpulabel"), "--oneshot", "--kubeconfig", c.kubeconfig,
                "--node-name", "gpu-missing", "--nvml-lib", util.fake_nvml()]
        p = subprocess.run(argv, env=c.env(), capture_output=True, text=True, timeout=60)
        util.check_eq(p.returncode, 1, "exit status")
        lines = [l for l in p.stderr.splitlines() if "gpu-missing" in l]
        util.check_eq(len(lines), 1, "error lines in %r" % p.stderr)
        for part in ('cannot get node "gpu-missing"', 'not found: nodes "gpu-missing" not found',
                     "NODE_NAME"):
            if part not in lines[0]:
                raise AssertionError("%r not in %r" % (part, lines[0]))


def test_oneshot_forbidden_names_the_clusterrole():
    with Cluster() as c:
        c.api.forbid("patch", "nodes")
        p = c.oneshot()
        util.check_eq(p.returncode, 1, "exit status")
        want = ('cannot patch node "gpu-1": forbidden: nodes "gpu-1" is forbidden: User '
                '"system:serviceaccount:gpu:labeler" cannot patch resource "nodes" in API group "" '
                'at the cluster scope (check the ClusterRole allows get,patch on nodes)')
        if want not in p.stderr:
            raise AssertionError("stderr %r lacks %r" % (p.stderr, want))
        util.check_eq(c.labels(), FOREIGN, "labels")


# ---- the daemon --------------------------------------------------------------------------

def test_daemon_steady_state_sends_only_gets():
    with Cluster() as c:
        p = c.start()
        wait_for(lambda: len(c.node_requests("GET")) >= 6, "six cycles", p)
        reqs = c.node_requests()
        util.check_eq(methods(reqs)[:2], ["GET", "PATCH"], "first cycle")
        util.check_eq(set(methods(reqs[2:])), {"GET"}, "later cycles")
        stop(p)
        util.check_eq(c.labels(), dict(FOREIGN, **M40_LABELS), "labels stay after SIGTERM")
        err = stderr_of(p)
        if "stopping on SIGTERM" not in err:
            raise AssertionError("no stop line in %r" % err)
        if TOKEN in err:
            raise AssertionError("token leaked into the log")


def test_daemon_follows_gpu_changes():
    with Cluster() as c:
        p = c.start()
        wait_for(lambda: c.labels().get("aliyun.accelerator/nvidia_count") == "1", "first labels", p)
        c.set_gpus('device name="Tesla M40" memory=12802064384 repeat=2\n')
        wait_for(lambda: c.labels().get("aliyun.accelerator/nvidia_count") == "2", "count 2", p)
        c.set_gpus("")
        wait_for(lambda: "aliyun.accelerator/nvidia_count" not in c.labels(), "labels removed", p)
        util.check_eq(c.labels(), FOREIGN, "labels once the GPUs are gone")
        stop(p)


def test_daemon_retries_409_429_503_and_dropped_connections():
    with Cluster() as c:
        c.api.inject("GET", "^" + NODE_PATH + "$", 0)  # connection dropped without an answer
        c.api.inject("PATCH", "^" + NODE_PATH + "$", 409)
        c.api.inject("PATCH", "^" + NODE_PATH + "$", 429, retry_after=1)
        c.api.inject("PATCH", "^" + NODE_PATH + "$", 503)
        p = c.start("-v", "2")
        wait_for(lambda: c.labels().get("aliyun.accelerator/nvidia_name") == "Tesla-M40",
                 "labels after the faults", p)
        reqs = c.node_requests()
        util.check_eq(methods(reqs)[:9],
                      ["GET", "GET", "PATCH", "GET", "PATCH", "GET", "PATCH", "GET", "PATCH"],
                      "requests")
        # Retry-After: 1 is honoured: the cycle after the 429 starts no sooner than 1 s later
        gap = reqs[5]["time"] - reqs[4]["time"]
        if gap < 0.95:
            raise AssertionError("retried %.3f s after a 429 with Retry-After: 1" % gap)
        # the node is patched a moment before the daemon logs its recovery
        wait_for(lambda: "in sync again" in stderr_of(p), "the recovery line", p)
        err = stderr_of(p)
        for part in ("too many requests", "retrying in 1s", "server error 503"):
            if part not in err:
                raise AssertionError("%r not in the log:\n%s" % (part, err))
        if TOKEN in err:
            raise AssertionError("token leaked into the -v 2 log")
        stop(p)


def test_daemon_log_lines_carry_severity_time_and_pid():
    # klog's header, as Kubernetes components write it: Lmmdd hh:mm:ss.uuuuuu pid tag] msg
    with Cluster() as c:
        c.api.forbid("patch", "nodes")
        before = time.time()
        p = c.start()
        wait_for(lambda: "forbidden" in stderr_of(p), "the forbidden line", p)
        c.api.allow("patch", "nodes")
        wait_for(lambda: "in sync again" in stderr_of(p), "the recovery line", p)
        stop(p)
        after = time.time()
        sev = {}
        for line in stderr_of(p).splitlines():
            m = util.KLOG.match(line)
            if not m or m.group(9) != "gpulabel":
                raise AssertionError("not a klog-style gpulabel line: %r" % line)
            util.check_eq(int(m.group(8)), p.pid, "the pid of %r" % line)
            # the line's UTC time lies between the start and the stop (same day at the test's pace)
            mmdd_hms = "%s%s %s:%s:%s" % m.group(2, 3, 4, 5, 6)
            lo, hi = (time.strftime("%m%d %H:%M:%S", time.gmtime(x)) for x in (before - 1, after + 1))
            if not lo <= mmdd_hms <= hi:
                raise AssertionError("time of %r outside %s..%s" % (line, lo, hi))
            sev[m.group(10).split(" ")[0]] = m.group(1)
        # the fake NVML is announced as a warning: it is not a real GPU driver
        util.check_eq((sev.get("keeping"), sev.get("using"), sev.get("cannot"), sev.get("stopping")),
                      ("I", "W", "E", "I"), "severities of the start, simulated NVML, error and stop lines")


def check_json_log_lines(text, pid_dir, before, after):
    """Every line of text is one JSON object as component-base's JSON logger writes it:
    ts (ms since the epoch, between before and after), caller ("dir/file.c:N"), msg, "v" on
    every line but errors. Returns the objects."""
    out = []
    for line in text.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            raise AssertionError("not a JSON line: %r" % line)
        if not isinstance(obj, dict) or list(obj)[:3] != ["ts", "caller", "msg"]:
            raise AssertionError("not ts, caller, msg first: %r" % line)
        if not (before - 1) * 1000 <= obj["ts"] <= (after + 1) * 1000:
            raise AssertionError("ts of %r outside the run" % line)
        if not re.match(r"^%s/[a-z_]+\.c:\d+$" % pid_dir, obj["caller"]):
            raise AssertionError("caller of %r" % line)
        out.append(obj)
    return out


def test_daemon_json_log_lines():
    # --logging-format json: the lines of kube-scheduler --logging-format=json
    with Cluster() as c:
        c.api.forbid("patch", "nodes")
        before = time.time()
        p = c.start("--logging-format", "json", "-v", "2")
        wait_for(lambda: "forbidden" in stderr_of(p), "the forbidden line", p)
        c.api.allow("patch", "nodes")
        wait_for(lambda: "in sync again" in stderr_of(p), "the recovery line", p)
        stop(p)
        after = time.time()
        objs = check_json_log_lines(stderr_of(p), "labeler", before, after)
        errors = [o for o in objs if "forbidden" in o["msg"]]
        util.check_eq(bool(errors) and all("v" not in o for o in errors), True,
                      "the error lines carry no v")
        warn = [o for o in objs if o["msg"].startswith("using a simulated NVML")]
        util.check_eq([o.get("v") for o in warn], [0], "the warning is an info line at v 0")
        util.check_eq(sorted({o.get("v") for o in objs if o["msg"].startswith("PATCH ")}), [2],
                      "the -v 2 lines carry v 2")
        util.check_eq([o.get("v") for o in objs if o["msg"].endswith("in sync again")], [0],
                      "an info line at 0")
    # a bad value: one line naming the flag (or its variable), exit 2
    for argv, env, name in ((["--logging-format", "xml"], {}, "--logging-format"),
                            ([], {"GPULABEL_LOGGING_FORMAT": "JSON"}, "GPULABEL_LOGGING_FORMAT")):
        e = {k: v for k, v in os.environ.items() if not k.startswith("GPULABEL_")}
        e.update(env)
        r = subprocess.run([util.binary("gpulabel"), "--oneshot", "--no-sync"] + argv,
                           capture_output=True, text=True, timeout=30, env=e)
        util.check_eq(r.returncode, 2, "exit status for %s" % name)
        lines = r.stderr.strip().splitlines()
        util.check_eq(len(lines), 1, "one line for %s: %r" % (name, r.stderr))
        if name not in lines[0] or "want text or json" not in lines[0]:
            raise AssertionError("the line does not name %s: %r" % (name, lines[0]))


def test_daemon_forbidden_logs_once_and_recovers():
    with Cluster() as c:
        c.api.forbid("patch", "nodes")
        p = c.start()
        wait_for(lambda: len(c.node_requests("PATCH")) >= 4, "four refused patches", p)
        err = stderr_of(p)
        lines = [l for l in err.splitlines() if "forbidden" in l]
        util.check_eq(len(lines), 1, "forbidden lines in %r" % err)
        if "(check the ClusterRole allows get,patch on nodes)" not in lines[0]:
            raise AssertionError("no hint in %r" % lines[0])
        if not util.log_message(lines[0], sev="E").startswith('cannot patch node "gpu-1": forbidden: '):
            raise AssertionError("line %r" % lines[0])
        c.api.allow("patch", "nodes")
        wait_for(lambda: c.labels().get("aliyun.accelerator/nvidia_count") == "1", "labels", p)
        wait_for(lambda: "in sync again" in stderr_of(p), "recovery line", p)
        stop(p)


def test_daemon_node_not_found_keeps_running():
    with Cluster() as c:
        argv = [util.binary("gpulabel"), "--kubeconfig", c.kubeconfig, "--node-name", "gpu-2",
                "--nvml-lib", util.fake_nvml(), "--sleep-interval", "200ms"]
        p = c.start(argv=argv)
        wait_for(lambda: len([r for r in c.api.requests if r["path"] == "/api/v1/nodes/gpu-2"]) >= 3,
                 "three GETs", p)
        lines = [l for l in stderr_of(p).splitlines() if "not found" in l]
        util.check_eq(len(lines), 1, "not-found lines")
        if 'cannot get node "gpu-2": not found: nodes "gpu-2" not found' not in lines[0]:
            raise AssertionError("line %r" % lines[0])
        c.api.add({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-2"}})
        wait_for(lambda: (c.api.get("nodes", "gpu-2")["metadata"].get("labels") or {}).get(
            "aliyun.accelerator/nvidia_count") == "1", "labels on the new node", p)
        stop(p)


def test_daemon_nvml_library_appears_late():
    with Cluster() as c:
        libdir = os.path.join(c.dir, "driver")
        os.mkdir(libdir)
        lib = os.path.join(libdir, "libnvidia-ml.so.1")
        p = c.start(nvml_lib=lib)
        wait_for(lambda: "cannot detect GPUs" in stderr_of(p), "the NVML line", p)
        time.sleep(0.6)  # a few 200 ms cycles without NVML
        util.check_eq(c.node_requests(), [], "requests while NVML is missing")
        shutil.copy(util.fake_nvml(), lib + ".tmp")
        os.rename(lib + ".tmp", lib)
        wait_for(lambda: c.labels().get("aliyun.accelerator/nvidia_count") == "1", "labels", p)
        err = stderr_of(p)
        util.check_eq(err.count("cannot detect GPUs"), 1, "NVML lines in %r" % err)
        if "GPU detection works again" not in err:
            raise AssertionError("no recovery line in %r" % err)
        stop(p)


def test_daemon_driver_down_keeps_published_labels():
    with Cluster() as c:
        p = c.start()
        wait_for(lambda: c.labels().get("aliyun.accelerator/nvidia_count") == "1", "labels", p)
        c.set_gpus("init=DRIVER_NOT_LOADED\n" + M40)
        wait_for(lambda: "cannot detect GPUs" in stderr_of(p), "the driver line", p)
        c.api.clear_requests()
        time.sleep(0.6)  # a few 200 ms cycles with the driver down
        util.check_eq(c.node_requests(), [], "requests while the driver is down")
        util.check_eq(c.labels(), dict(FOREIGN, **M40_LABELS), "labels kept")
        c.set_gpus('device name="NVIDIA A100-SXM4-80GB" memory=85899345920\n')
        wait_for(lambda: c.labels().get("aliyun.accelerator/nvidia_name") == "NVIDIA-A100-SXM4-80GB",
                 "labels of the new driver's answer", p)
        stop(p)


def test_daemon_sigterm_during_sleep_and_during_a_request():
    with Cluster() as c:
        p = c.start("--sleep-interval", "1h")
        wait_for(lambda: c.labels().get("aliyun.accelerator/nvidia_count") == "1", "labels", p)
        wait_for(lambda: len(c.node_requests()) == 2, "the first cycle", p)
        time.sleep(0.2)  # now in its 1 h sleep
        stop(p)  # a 1 h sleep: only the signal can end it
        util.check_eq(c.labels(), dict(FOREIGN, **M40_LABELS), "labels after SIGTERM")

        c.api.delay("GET", "^" + NODE_PATH + "$", 30)
        p = c.start("--sleep-interval", "1h")
        wait_for(lambda: len(c.node_requests()) == 3, "a GET in flight", p)
        stop(p)  # the GET is answered only in 30 s: the daemon must not wait for it
        util.check_eq(c.labels(), dict(FOREIGN, **M40_LABELS), "labels after SIGTERM mid-request")


def test_daemon_sigint_stops_too():
    with Cluster() as c:
        p = c.start()
        wait_for(lambda: len(c.node_requests("GET")) >= 2, "two cycles", p)
        p.send_signal(signal.SIGINT)
        util.check_eq(p.wait(timeout=10), 0, "exit status after SIGINT")
        if "stopping on SIGINT" not in stderr_of(p):
            raise AssertionError("no stop line")


def test_daemon_without_node_name_is_a_usage_error():
    with Cluster() as c:
        argv = [util.binary("gpulabel"), "--kubeconfig", c.kubeconfig, "--nvml-lib", util.fake_nvml()]
        p = subprocess.run(argv, env=c.env(), capture_output=True, text=True, timeout=60)
        util.check_eq(p.returncode, 2, "exit status")
        if "no node name" not in p.stderr or "NODE_NAME" not in p.stderr:
            raise AssertionError("stderr %r" % p.stderr)
        util.check_eq(c.api.requests, [], "requests")


def test_daemon_writes_feature_file_only_when_changed():
    with Cluster() as c:
        ff = os.path.join(c.dir, "features.d", "gpulabel")
        os.mkdir(os.path.dirname(ff))
        p = c.start("--no-sync", "--feature-file", ff)
        wait_for(lambda: os.path.exists(ff), "the feature file", p)
        ino = os.stat(ff).st_ino
        time.sleep(1.0)  # about five 200 ms cycles with the same GPUs
        util.check_eq(os.stat(ff).st_ino, ino, "feature file rewritten although unchanged")
        c.set_gpus('device name="Tesla M40" memory=12802064384 repeat=4\n')
        wait_for(lambda: "aliyun.accelerator/nvidia_count=4" in open(ff).read(), "new content", p)
        util.check_eq(c.api.requests, [], "requests with --no-sync")
        stop(p)


def test_daemon_unauthorized_then_rotated_token():
    with Cluster() as c:
        token_file = os.path.join(c.dir, "token")
        with open(token_file, "w") as f:
            f.write(TOKEN + "\n")
        kc = c.api.write_kubeconfig(os.path.join(c.dir, "kubeconfig-file"), token=None,
                                    token_file=token_file)
        argv = [util.binary("gpulabel"), "--kubeconfig", kc, "--node-name", NODE,
                "--nvml-lib", util.fake_nvml(), "--sleep-interval", "200ms"]
        p = c.start(argv=argv)
        wait_for(lambda: c.labels().get("aliyun.accelerator/nvidia_count") == "1", "labels", p)
        c.api.set_tokens("rotated-token")  # the old token is revoked
        wait_for(lambda: len([r for r in c.api.requests if not r["authenticated"]]) >= 3,
                 "three refused requests", p)
        lines = [l for l in stderr_of(p).splitlines() if "unauthorized" in l]
        util.check_eq(len(lines), 1, "unauthorized lines")
        if "(check the service account token or the kubeconfig credentials)" not in lines[0]:
            raise AssertionError("line %r" % lines[0])
        with open(token_file + ".tmp", "w") as f:
            f.write("rotated-token\n")
        os.rename(token_file + ".tmp", token_file)  # as the kubelet does: a new file
        c.set_gpus('device name="Tesla M40" memory=12802064384 repeat=2\n')
        wait_for(lambda: c.labels().get("aliyun.accelerator/nvidia_count") == "2",
                 "labels with the rotated token", p)
        wait_for(lambda: "in sync again" in stderr_of(p), "the recovery line", p)
        err = stderr_of(p)
        if TOKEN in err or "rotated-token" in err:
            raise AssertionError("log:\n" + err)
        stop(p)


def test_daemon_survives_api_server_outage():
    with Cluster() as c:
        p = c.start()
        wait_for(lambda: c.labels().get("aliyun.accelerator/nvidia_count") == "1", "labels", p)
        c.api.stop()  # connection refused from now on
        c.set_gpus('device name="Tesla M40" memory=12802064384 repeat=3\n')
        wait_for(lambda: "connection refused" in stderr_of(p).lower() or
                 "couldn't connect" in stderr_of(p).lower(), "the refused line", p)
        time.sleep(0.5)  # a few more refused attempts with backoff
        c.api.start()  # same port, same objects
        wait_for(lambda: c.labels().get("aliyun.accelerator/nvidia_count") == "3",
                 "labels after the outage", p)
        wait_for(lambda: "in sync again" in stderr_of(p), "the recovery line", p)
        err = stderr_of(p)
        # once per kind of failure: the kept-alive connection may first be reset, then refused
        refused = [l for l in err.splitlines() if "cannot get node" in l]
        if not 1 <= len(refused) <= 2:
            raise AssertionError("failure lines in %r" % err)
        if "retrying in" not in refused[0]:
            raise AssertionError("log:\n" + err)
        stop(p)


def test_oneshot_retries_transient_failures():
    with Cluster() as c:
        c.api.inject("GET", "^" + NODE_PATH + "$", 503, times=2)
        p = c.oneshot("-v", "1")
        util.check_eq(p.returncode, 0, "exit status (stderr: %s)" % p.stderr)
        util.check_eq(p.stderr.count("; retrying in "), 2, "retry lines: %s" % p.stderr)
        util.check_eq(c.labels(), dict(FOREIGN, **M40_LABELS), "labels")
        if 'node "gpu-1" carries its 3 labels' not in p.stderr:
            raise AssertionError("-v does not say what it did: %r" % p.stderr)


def test_oneshot_gives_up_after_timeout():
    with Cluster() as c:
        c.api.inject("GET", "^" + NODE_PATH + "$", 503, times=None)
        t = time.monotonic()
        p = c.oneshot("--timeout", "2s")
        took = time.monotonic() - t
        util.check_eq(p.returncode, 1, "exit status")
        if took > 30:
            raise AssertionError("--timeout 2s took %.0fs" % took)
        last = p.stderr.strip().splitlines()[-1]
        if not last.startswith('gpulabel: cannot get node "gpu-1": server error 503'):
            raise AssertionError("last line: %r" % last)
        # not transient: no retry
        c.api.clear_faults()
        c.api.inject("GET", "^" + NODE_PATH + "$", 403, times=None)
        p = c.oneshot()
        util.check_eq((p.returncode, p.stderr.count("retrying")), (1, 0), "403 is not retried")
