"""gpusched serve at some scale against the API server double: 1,000 pods on 100 nodes with
none lost and none bound twice (nodes hold exactly 10 of them, so any double counting or a
missed assumed pod would show), and the API server restarting in the middle of a run."""
import util
from fake_apiserver import FakeApiServer
from serve_util import Serve, node, pod, wait_for, bound, binding_posts


def check_packing(api, npods, per_node):
    placed = bound(api)
    util.check_eq(len(placed), npods, "bound pods")
    per = {}
    for n in placed.values():
        per[n] = per.get(n, 0) + 1
    over = {n: c for n, c in per.items() if c > per_node}
    util.check_eq(over, {}, "nodes holding more than %d pods" % per_node)


def test_1000_pods_on_100_nodes():
    with FakeApiServer(tls=False, tokens=None) as api:
        api.add_many(node("node-%03d" % i, cpu="10", memory="64Gi") for i in range(100))
        api.add_many(pod("p-%04d" % i, cpu="1") for i in range(1000))
        sv = Serve(api, ["--kube-api-qps", "0", "--bind-workers", "16"])
        try:
            wait_for("1000 pods bound", lambda: len(bound(api)) == 1000, timeout=90, interval=0.2)
            check_packing(api, 1000, 10)
            posts = binding_posts(api)
            util.check_eq(len(posts), 1000, "pods with a binding POST")
            util.check_eq(sorted(set(posts.values())), [1], "binding POSTs per pod")
            # one more pod cannot fit anywhere
            api.add(pod("extra", cpu="1"))
            wait_for("extra reported", lambda: (api.get("pods", "extra").get("status") or {})
                     .get("conditions"))
            cond = api.get("pods", "extra")["status"]["conditions"][0]
            util.check_eq(cond["message"], "0/100 nodes are available: 100 Insufficient cpu. "
                          "preemption: 0/100 nodes are available: 100 No preemption victims found "
                          "for incoming pod.", "message for a pod that fits nowhere")
            wait_for("1000 scheduled attempts counted (at the binds' answers)", lambda: sv.metric(
                "scheduler_schedule_attempts_total", 'profile="gpusched",result="scheduled"') == 1000.0)
            util.check_eq(sv.metric("scheduler_pod_scheduling_attempts_count"), 1000.0,
                          "attempts histogram")
        finally:
            util.check_eq(sv.stop(), 0, "exit status")


def test_apiserver_restart_mid_run():
    with FakeApiServer(tls=False, tokens=None) as api:
        api.add_many(node("node-%02d" % i, cpu="10", memory="64Gi") for i in range(20))
        api.add_many(pod("p-%03d" % i, cpu="1") for i in range(100))
        # binds are slow so that the restart lands while some are in flight
        api.delay("POST", r"/binding$", 0.05, times=None)
        sv = Serve(api, ["--kube-api-qps", "0", "--bind-workers", "4", "-v", "2"])
        try:
            wait_for("some pods bound", lambda: len(bound(api)) >= 20, interval=0.02)
            # the restarted server's history begins now: the informers' watches resume with a
            # 410 and relist (kept, a watch resumed after the restart would carry on without
            # one, and one resumed while the server was down would relist: a race)
            api.restart(keep_history=False)
            api.add_many(pod("q-%03d" % i, cpu="1") for i in range(100))
            wait_for("200 pods bound", lambda: len(bound(api)) == 200, timeout=90, interval=0.2)
            check_packing(api, 200, 10)
            wait_for("a relist after the restart",
                     lambda: sv.metric("gpusched_informer_relists_total", 'resource="pods"') >= 2)
            # a bind cut off by the restart may have been applied: its retry then gets 409 and
            # the pod is left where it is; no pod ever gets a second node
            posts = binding_posts(api)
            util.check_eq(len(posts), 200, "pods with a binding POST")
        finally:
            util.check_eq(sv.stop(), 0, "exit status")
