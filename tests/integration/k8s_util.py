"""The real Kubernetes control plane for integration tests (tests/integration/test_k8s_*.py).

`cluster()` starts build/k8s/k8s-cluster (embedded etcd, the real kube-apiserver and
kube-controller-manager, no kubelet: tests/k8s/internal/cluster/) once per test module, in its
own directory and on its own free ports, so modules run in parallel without sharing anything.
It stops when the module's process exits, and also if that process dies: the harness watches
its stdin, which only this process holds.

    import k8s_util
    c = k8s_util.cluster()
    c.apply_file("deploy/gpulabel/rbac.yaml")
    kc = c.sa_kubeconfig("kube-system", "gpulabel")      # a token of that ServiceAccount
    c.kubectl("get", "nodes", "-o", "name")
    c.get("/api/v1/nodes/gpu-1")                        # REST as cluster-admin

tests/run.py runs these modules only when build/k8s/ is built (make k8s).
"""
import atexit
import base64
import http.client
import json
import os
import shutil
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.parse

import util

K8S = os.environ.get("GPULABEL_K8S") or os.path.join(util.SRC, "build", "k8s")
KUBECTL = os.path.join(K8S, "kubectl")
WAIT = 60  # upper bound for every wait; nothing asserts how long something took


class ApiError(Exception):
    def __init__(self, status, body):
        self.status = status
        self.body = body
        msg = body.get("message") if isinstance(body, dict) else body
        super().__init__("HTTP %d: %s" % (status, msg))


wait_for = util.wait_for  # (what, fn, timeout=WAIT): polls fn until it returns something true


class Cluster:
    """A running k8s-cluster. Every method that talks to the API uses the admin credentials
    unless it takes a kubeconfig."""

    def __init__(self, name="k8s", audit=True, run_pods=True, controller_manager=True):
        self.dir = tempfile.mkdtemp(prefix="k8s-%s-" % name)
        self.log_path = os.path.join(self.dir, "k8s-cluster.log")
        self._log = open(self.log_path, "w")
        argv = [os.path.join(K8S, "k8s-cluster"), "run", "--dir", self.dir, "--exit-on-stdin-eof",
                "--audit=%s" % str(audit).lower(), "--run-pods=%s" % str(run_pods).lower(),
                "--controller-manager=%s" % str(controller_manager).lower()]
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=self._log, stderr=subprocess.STDOUT)
        self._lock = threading.Lock()
        self._conn = None
        self._closed = False
        ready = os.path.join(self.dir, "ready")
        end = time.monotonic() + 180
        while not os.path.exists(ready):
            if self.p.poll() is not None:
                raise AssertionError("k8s-cluster exited %s: %s" % (self.p.returncode, self.log_tail()))
            if time.monotonic() > end:
                self.close()
                raise AssertionError("k8s-cluster not ready after 180 s: %s" % self.log_tail())
            time.sleep(0.05)
        with open(ready) as f:
            info = json.load(f)
        self.server = info["server"]
        self.kubeconfig = info["kubeconfig"]
        self.scheduler_kubeconfig = info["schedulerKubeconfig"]
        self.ca_file = info["ca"]
        self.audit_log = info.get("auditLog")
        self._ssl = ssl.create_default_context(cafile=self.ca_file)
        self._ssl.load_cert_chain(info["adminCert"], info["adminKey"])
        self._host, _, port = urllib.parse.urlsplit(self.server).netloc.rpartition(":")
        self._port = int(port)

    def log_tail(self, n=20):
        try:
            with open(self.log_path) as f:
                return " | ".join(f.read().splitlines()[-n:])
        except OSError:
            return ""

    def close(self):
        """Stops the cluster (closing its stdin is enough) and removes its directory."""
        if self._closed:
            return
        self._closed = True
        if self._conn:
            self._conn.close()
        if self.p.poll() is None:
            self.p.stdin.close()
            try:
                self.p.wait(30)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self._log.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    # ---- kubectl ---------------------------------------------------------------------------

    def kubectl(self, *args, input=None, kubeconfig=None, check=True, timeout=WAIT):
        """Runs the real kubectl; returns its stdout (raises with stderr if it fails and check)."""
        env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
        env["HOME"] = self.dir  # no ~/.kube cache shared between clusters
        p = subprocess.run([KUBECTL, "--kubeconfig", kubeconfig or self.kubeconfig] + list(args),
                           input=input, capture_output=True, text=True, timeout=timeout, env=env)
        if check and p.returncode != 0:
            raise AssertionError("kubectl %s: exit %d: %s" % (" ".join(args), p.returncode,
                                                              p.stderr.strip()))
        return p.stdout if check else p

    def apply(self, objs, *extra):
        """kubectl apply --server-side of objects (a dict, a list of dicts or YAML text)."""
        if not isinstance(objs, str):
            if isinstance(objs, dict):
                objs = [objs]
            # one document per object, as in a manifest file (kubectl validates a List
            # client-side against the OpenAPI schema, unlike the objects of a file)
            objs = "\n---\n".join(json.dumps(o) for o in objs)
        return self.kubectl("apply", "--server-side", "-f", "-", *extra, input=objs)

    def apply_file(self, path, *extra):
        return self.kubectl("apply", "--server-side", "-f", os.path.join(util.SRC, path), *extra)

    def token(self, ns, name, duration="1h"):
        """A token of ServiceAccount ns/name, issued through TokenRequest (kubectl create token)."""
        return self.kubectl("create", "token", name, "-n", ns, "--duration", duration).strip()

    def write_kubeconfig(self, path, token=None, server=None, ca=True, user=None):
        """A kubeconfig for this cluster: a bearer token, or no credentials at all (user {})."""
        with open(self.ca_file, "rb") as f:
            ca_data = base64.b64encode(f.read()).decode()
        cluster = {"server": server or self.server}
        if ca and (server or self.server).startswith("https:"):
            cluster["certificate-authority-data"] = ca_data
        u = user if user is not None else ({"token": token} if token else {})
        kc = {"apiVersion": "v1", "kind": "Config",
              "clusters": [{"name": "c", "cluster": cluster}],
              "users": [{"name": "u", "user": u}],
              "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
              "current-context": "c"}
        with open(path, "w") as f:
            json.dump(kc, f)
        return path

    def sa_kubeconfig(self, ns, name, path=None):
        """A kubeconfig holding a fresh token of ServiceAccount ns/name (created if missing)."""
        if self.request("GET", "/api/v1/namespaces/%s/serviceaccounts/%s" % (ns, name),
                        ok=(200, 404))[0] == 404:
            self.create("/api/v1/namespaces/%s/serviceaccounts" % ns,
                        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}})
        path = path or os.path.join(self.dir, "kubeconfig-%s-%s" % (ns, name))
        return self.write_kubeconfig(path, token=self.token(ns, name))

    # ---- REST as cluster-admin -------------------------------------------------------------

    def request(self, method, path, body=None, content_type="application/json", ok=(200, 201)):
        """(status, parsed body); raises ApiError unless the status is in ok."""
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, str)) else json.dumps(body)
        with self._lock:
            for attempt in (0, 1):
                if self._conn is None:
                    self._conn = http.client.HTTPSConnection(self._host, self._port,
                                                             context=self._ssl, timeout=WAIT)
                try:
                    self._conn.request(method, path, body=data,
                                       headers={"Content-Type": content_type,
                                                "Accept": "application/json"})
                    r = self._conn.getresponse()
                    raw = r.read()
                    break
                except (http.client.HTTPException, OSError):
                    self._conn.close()
                    self._conn = None
                    if attempt:
                        raise
        try:
            out = json.loads(raw) if raw else None
        except ValueError:
            out = raw.decode("utf-8", "replace")
        if r.status not in ok:
            raise ApiError(r.status, out)
        return r.status, out

    def get(self, path):
        return self.request("GET", path)[1]

    def get_or_none(self, path):
        st, out = self.request("GET", path, ok=(200, 404))
        return out if st == 200 else None

    def create(self, path, obj):
        return self.request("POST", path, obj)[1]

    def patch(self, path, patch, kind="strategic"):
        ct = {"strategic": "application/strategic-merge-patch+json",
              "merge": "application/merge-patch+json", "json": "application/json-patch+json"}[kind]
        return self.request("PATCH", path, patch, content_type=ct)[1]

    def delete(self, path, grace=None):
        q = "" if grace is None else "?gracePeriodSeconds=%d" % grace
        return self.request("DELETE", path + q, ok=(200, 202, 404))[1]

    def items(self, path):
        """Every item of a list (following continue tokens)."""
        out, cont = [], ""
        while True:
            sep = "&" if "?" in path else "?"
            page = self.get(path + sep + "limit=500" + ("&continue=" + urllib.parse.quote(cont) if cont else ""))
            out.extend(page.get("items") or [])
            cont = (page.get("metadata") or {}).get("continue")
            if not cont:
                return out

    def objects(self, path):
        """The objects of a manifest file (YAML or JSON, several documents), as dicts: kubectl
        parses it (no YAML module in the test Python)."""
        text = self.kubectl("create", "--dry-run=client", "-o", "json", "-f", os.path.join(util.SRC, path))
        dec, out, i = json.JSONDecoder(), [], 0
        while True:  # one JSON document per object, one after the other
            while i < len(text) and text[i].isspace():
                i += 1
            if i == len(text):
                return out
            obj, i = dec.raw_decode(text, i)
            out.extend(obj["items"] if obj.get("kind") == "List" else [obj])

    def events(self, ns, reason=None):
        """events.k8s.io/v1 Events in ns (what kube-scheduler and gpusched write)."""
        return [e for e in self.items("/apis/events.k8s.io/v1/namespaces/%s/events" % ns)
                if reason is None or e.get("reason") == reason]

    def pods(self, ns, selector=None):
        q = "?labelSelector=" + urllib.parse.quote(selector) if selector else ""
        return self.items("/api/v1/namespaces/%s/pods%s" % (ns, q))

    def create_node(self, node):
        """Creates a Node (status included: the create keeps it) and waits until the harness
        reported it Ready and the not-ready taint the admission plugin added is gone."""
        self.create("/api/v1/nodes", node)
        self.wait_nodes_ready([node["metadata"]["name"]])

    def wait_nodes_ready(self, names):
        def ready(n):
            conds = {c["type"]: c["status"] for c in (n.get("status") or {}).get("conditions") or []}
            taints = [t for t in (n.get("spec") or {}).get("taints") or []
                      if t["key"] == "node.kubernetes.io/not-ready"]
            return conds.get("Ready") == "True" and not taints
        want = set(names)
        wait_for("nodes %s Ready and untainted" % sorted(want)[:3], lambda: want <= {
            n["metadata"]["name"] for n in self.items("/api/v1/nodes") if ready(n)})

    def audit(self, user=None, verb=None, resource=None, subresource=None):
        """The audit events (every request but list and watch: gets and writes), optionally
        filtered by user name, verb, resource and subresource."""
        if not self.audit_log:
            raise AssertionError("this cluster runs without an audit log")
        out = []
        try:
            with open(self.audit_log) as f:
                lines = f.readlines()
        except FileNotFoundError:
            return out
        for line in lines:
            try:
                e = json.loads(line)
            except ValueError:
                continue  # a line being written
            ref = e.get("objectRef") or {}
            if user and (e.get("user") or {}).get("username") != user:
                continue
            if verb and e.get("verb") != verb:
                continue
            if resource and ref.get("resource") != resource:
                continue
            if subresource is not None and ref.get("subresource", "") != subresource:
                continue
            out.append(e)
        return out


# A process a test starts gets SIGKILL when the test's process dies (PR_SET_PDEATHSIG), so
# nothing outlives a crashed test. Start it from the module's main thread: the signal follows
# the thread that forked.
PDEATHSIG = ["setpriv", "--pdeathsig", "KILL"]


class Process:
    """A background command with its output in a file."""

    def __init__(self, argv, log_path, env=None):
        self.log_path = log_path
        self._log = open(log_path, "w")
        e = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
        e.update(env or {})
        self.p = subprocess.Popen(PDEATHSIG + list(argv), stdout=self._log, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, env=e)

    def log(self):
        with open(self.log_path) as f:
            return f.read()

    def alive(self):
        if self.p.poll() is not None:
            raise AssertionError("%s exited %s: %s" % (self.p.args[len(PDEATHSIG)], self.p.returncode,
                                                       " | ".join(self.log().splitlines()[-10:])))
        return False

    def stop(self, sig=15, timeout=30):
        if self.p.poll() is None:
            self.p.send_signal(sig)
            try:
                self.p.wait(timeout)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self._log.close()
        return self.p.returncode


def kube_scheduler(c, *extra):
    """The real kube-scheduler (default profile) on cluster c, as system:kube-scheduler."""
    kc = c.scheduler_kubeconfig
    return Process([os.path.join(K8S, "kube-scheduler"), "--kubeconfig", kc,
                    "--authentication-kubeconfig", kc, "--authorization-kubeconfig", kc,
                    "--secure-port", "0", "--leader-elect=false"] + list(extra),
                   os.path.join(c.dir, "kube-scheduler-%d.log" % time.monotonic_ns()))


def sa_user(ns, name):
    return "system:serviceaccount:%s:%s" % (ns, name)


def gpu_node(name, gpus=1, cpu="4", memory="30778040Ki", labels=None, taints=None):
    """A Node as a GPU worker's kubelet and the device plugin would report it."""
    alloc = {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "41152812Ki"}
    if gpus:
        alloc["nvidia.com/gpu"] = str(gpus)
    n = {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": name, "labels": dict({"kubernetes.io/hostname": name,
                                                     "kubernetes.io/os": "linux",
                                                     "kubernetes.io/arch": "amd64"}, **(labels or {}))},
         "spec": {}, "status": {"capacity": dict(alloc), "allocatable": dict(alloc)}}
    if taints:
        n["spec"]["taints"] = taints
    return n


def tmpdir(prefix):
    """A temporary directory removed when the module's process exits."""
    d = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, d, True)
    return d


_cluster = None


def cluster(name="k8s", **kw):
    """This module's control plane, started on first use and stopped at exit."""
    global _cluster
    if _cluster is None:
        _cluster = Cluster(name=name, **kw)
        atexit.register(_cluster.close)
    return _cluster
