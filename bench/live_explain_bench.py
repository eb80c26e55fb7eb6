#!/usr/bin/env python3
"""Benchmark (not a test): `gpusched explain pod/NAME` of one pending pod on a live cluster,
end to end (the kubeconfig, every paginated list, the explanation), against the local
control plane (build/k8s/k8s-cluster: the real kube-apiserver, no controller manager, no audit
log). N nodes of 4 CPU / 32 Gi / 110 pods / 8 GPUs, P pods bound through spec.nodeName
(100m, 500 Mi), one pending 8-GPU pod. Each run's wall time and peak RSS (getrusage of the
child); medians of R runs, the rows interleaved. Side by side: the same lists as kubectl
fetches them (`kubectl get pods -A -o json` and nodes); gpusched with the kubeconfig's
disable-compression; and the bound pods fetched by a bare client that parses nothing (wall
only), from the watch cache as gpusched asks for them and in consistent pages of 500 as it
asked before: what the API server alone needs, the floor of any tool.

  python3 bench/live_explain_bench.py --build build --nodes 5000 --pods 50000 --runs 5
  ... --runs 1 --hold 1800     (then profile gpusched against the printed KUBECONFIG)
"""
import argparse
import http.client
import json
import os
import subprocess
import sys
import threading
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SRC, "tests", "integration"))


def post_all(c, path_of, objs, threads=8):
    errors = []

    def work(chunk):
        conn = http.client.HTTPSConnection(c._host, c._port, context=c._ssl, timeout=120)
        for o in chunk:
            conn.request("POST", path_of(o), body=json.dumps(o),
                         headers={"Content-Type": "application/json"})
            r = conn.getresponse()
            r.read()
            if r.status != 201:
                errors.append(r.status)
                break
        conn.close()
    ts = [threading.Thread(target=work, args=(objs[i::threads],)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise SystemExit("creation failed: %s" % errors[:5])


def pages_floor(c, limit=500, rv="0"):
    """(wall seconds, 0, 0) of fetching the bound pods as gpusched asks for them (same field
    selector, resourceVersion=0 from the watch cache, limit, following continue) with a bare
    client that parses nothing: what the API server alone needs. rv=None: the consistent pages
    gpusched asked for before."""
    import re
    sel = "fieldSelector=spec.nodeName%21%3D%2Cstatus.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed"
    conn = http.client.HTTPSConnection(c._host, c._port, context=c._ssl, timeout=120)
    t = time.monotonic()
    cont = None
    while True:
        conn.request("GET", "/api/v1/pods?%s&limit=%d" % (sel, limit) +
                     ("&continue=" + cont if cont else "") +
                     ("&resourceVersion=" + rv if rv and not cont else ""))
        r = conn.getresponse()
        body = r.read()
        if r.status != 200:
            raise SystemExit("list failed: %d" % r.status)
        m = re.search(rb'"continue":"([^"]*)"', body[:4096])
        cont = m.group(1).decode() if m and m.group(1) else None
        if not cont:
            break
    conn.close()
    return time.monotonic() - t, 0.0, 0.0


def timed(argv, env):
    """(wall seconds, peak RSS MiB, CPU seconds) of one run, as GNU time measures the command
    itself (the rusage of a child forked from this large Python process would count the
    pages it shared with us before exec)."""
    t = time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-f", "BENCH-TIME %M %U %S"] + argv,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    wall = time.monotonic() - t
    err = p.stderr.decode()
    if p.returncode != 0:
        raise SystemExit("%s failed: %s" % (argv[:3], err[-500:]))
    rss, user, sys_ = err.rsplit("BENCH-TIME ", 1)[1].split()
    return wall, int(rss) / 1024.0, float(user) + float(sys_)


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=50000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--hold", type=int, default=0, metavar="SECONDS",
                    help="keep the cluster up this long after the runs (to profile against it; "
                         "the KUBECONFIG is printed), or until the file it names is removed")
    a = ap.parse_args()
    import k8s_util
    c = k8s_util.Cluster(name="bench-live", audit=False, run_pods=False, controller_manager=False)
    try:
        t = time.monotonic()
        nodes = []
        for i in range(a.nodes):
            n = k8s_util.gpu_node("node-%05d" % i, gpus=8)
            n["status"]["allocatable"]["cpu"] = n["status"]["capacity"]["cpu"] = "4"
            nodes.append(n)
        post_all(c, lambda o: "/api/v1/nodes", nodes)
        # no controller manager: the ServiceAccount admission plugin still wants "default"
        if c.request("GET", "/api/v1/namespaces/default/serviceaccounts/default", ok=(200, 404))[0] == 404:
            c.create("/api/v1/namespaces/default/serviceaccounts",
                     {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}})
        pods = []
        for i in range(a.pods):
            pods.append({"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": "p-%06d" % i, "namespace": "default"},
                         "spec": {"nodeName": "node-%05d" % (i % a.nodes),
                                  "automountServiceAccountToken": False,
                                  "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                                  "resources": {"requests": {"cpu": "100m",
                                                                             "memory": "500Mi"}}}]}})
        post_all(c, lambda o: "/api/v1/namespaces/default/pods", pods)
        c.create("/api/v1/namespaces/default/pods", {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "want-9"},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {
                "limits": {"nvidia.com/gpu": "9"}}}]}})
        print("# %d nodes, %d pods created in %.0fs" % (a.nodes, a.pods, time.monotonic() - t),
              flush=True)
        env = dict(os.environ, KUBECONFIG=c.kubeconfig, HOME=c.dir)
        # the same cluster without compression (kubectl's disable-compression: true)
        nozip = os.path.join(c.dir, "nozip.kubeconfig")
        with open(c.kubeconfig) as f, open(nozip, "w") as g:
            g.write(f.read().replace("    server:", "    disable-compression: true\n    server:", 1))
        kubectl = [k8s_util.KUBECTL, "--kubeconfig", c.kubeconfig]
        explain = [os.path.join(SRC, a.build, "gpusched"), "explain", "pod/want-9", "-n", "default"]
        rows = {}
        cases = (("kubectl get nodes,pods -A -o json", kubectl + ["get", "nodes,pods", "-A", "-o", "json"]),
                 ("gpusched explain pod/want-9", explain),
                 ("... with disable-compression", explain + ["--kubeconfig", nozip]),
                 ("bound pods from the cache, bare", None),
                 ("bound pods' consistent pages, bare", None))
        for name, argv in cases:
            rows[name] = []
        # interleaved, so that a slow phase of the machine hits every row alike
        for _ in range(a.runs):
            for name, argv in cases:
                if argv:
                    rows[name].append(timed(argv, env))
                else:
                    rows[name].append(pages_floor(c, rv="0" if "cache" in name else None))
        for name, argv in cases:
            runs = rows[name]
            print("%-36s wall median %.2f s (min %.2f, max %.2f), CPU median %.2f s, peak RSS %.0f MiB"
                  % (name, median([r[0] for r in runs]), min(r[0] for r in runs),
                     max(r[0] for r in runs), median([r[2] for r in runs]), max(r[1] for r in runs)), flush=True)
        ratio = median([r[0] for r in rows["gpusched explain pod/want-9"]]) / \
            median([r[0] for r in rows["kubectl get nodes,pods -A -o json"]])
        print("# gpusched explain / kubectl get: %.2f" % ratio, flush=True)
        if a.hold:
            flag = os.path.join(c.dir, "hold")
            open(flag, "w").close()
            print("# holding the cluster %d s: KUBECONFIG=%s HOME=%s (rm %s to end)"
                  % (a.hold, c.kubeconfig, c.dir, flag), flush=True)
            end = time.monotonic() + a.hold
            while time.monotonic() < end and os.path.exists(flag):
                time.sleep(1)
    finally:
        c.close()


if __name__ == "__main__":
    main()
