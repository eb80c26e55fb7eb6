"""Two gpusched serve replicas with leader election against the API server double: only the
lease holder binds; when it is killed the other takes over once the lease expires; a replica
stopped with SIGTERM releases the lease so the other takes over at once."""
import signal

import util
from fake_apiserver import FakeApiServer
from serve_util import Serve, node, pod, wait_for, bound

LE = ["--leader-elect", "--leader-elect-lease-duration", "3s", "--leader-elect-renew-deadline",
      "2s", "--leader-elect-retry-period", "500ms", "--leader-elect-resource-namespace",
      "kube-system", "-v", "2"]


def holder(api):
    lease = api.get("leases", "gpusched", "kube-system")
    return lease and lease["spec"].get("holderIdentity")


def identity(sv):
    g = sv.grep(r'identity="([^"]+)"')
    return g and g[0]


def test_only_the_leader_binds_and_the_other_takes_over():
    with FakeApiServer() as api:
        api.add(node("n1"))
        a = Serve(api, LE, name="a")
        b = None
        try:
            wait_for("a to lead", lambda: holder(api) == identity(a))
            b = Serve(api, LE, name="b")
            wait_for("b ready", b.ready)
            for i in range(10):
                api.add(pod("p%d" % i))
            wait_for("10 pods bound", lambda: len(bound(api)) == 10)
            # the log line follows the API's answer: wait for it, then compare exactly
            wait_for("the leader's 10 bind log lines", lambda: a.count("Successfully bound pod") >= 10)
            util.check_eq(a.count("Successfully bound pod"), 10, "binds by the leader")
            util.check_eq(b.count("Successfully bound pod"), 0, "binds by the standby")
            util.check_eq(b.metric("leader_election_master_status", 'name="gpusched"'), 0.0,
                          "standby's leader gauge")
            util.check_eq(a.metric("leader_election_master_status", 'name="gpusched"'), 1.0,
                          "leader's leader gauge")
            # the leader dies without releasing: b waits for the lease to expire, then binds
            a.kill()
            for i in range(10, 15):
                api.add(pod("p%d" % i))
            wait_for("b to lead", lambda: holder(api) == identity(b), timeout=30)
            wait_for("15 pods bound", lambda: len(bound(api)) == 15, timeout=30)
            wait_for("the new leader's 5 bind log lines", lambda: b.count("Successfully bound pod") >= 5)
            util.check_eq(b.count("Successfully bound pod"), 5, "binds by the new leader")
            lease = api.get("leases", "gpusched", "kube-system")
            util.check_eq(lease["spec"]["leaseTransitions"], 1, "lease transitions")
            util.check_eq(lease["spec"]["leaseDurationSeconds"], 3, "lease duration")
        finally:
            a.kill()
            if b:
                util.check_eq(b.stop(), 0, "exit status of b")


def test_sigterm_releases_the_lease():
    with FakeApiServer() as api:
        api.add(node("n1"))
        a = Serve(api, LE, name="a")
        try:
            wait_for("a to lead", lambda: holder(api) == identity(a))
            util.check_eq(a.stop(signal.SIGTERM), 0, "exit status after SIGTERM")
            lease = api.get("leases", "gpusched", "kube-system")
            util.check_eq((lease["spec"]["holderIdentity"], lease["spec"]["leaseDurationSeconds"]),
                          ("", 1), "released lease")
            b = Serve(api, LE, name="b")
            # a released lease is free at once: no wait for the 3 s duration
            wait_for("b to lead", lambda: holder(api) == identity(b), timeout=30)
            util.check_eq(b.stop(), 0, "exit status of b")
        finally:
            a.kill()


def test_a_leader_that_cannot_renew_stops():
    with FakeApiServer() as api:
        api.add(node("n1"))
        a = Serve(api, LE, name="a")
        try:
            wait_for("a to lead", lambda: holder(api) == identity(a))
            api.forbid("update", "leases.coordination.k8s.io")
            # renew deadline 2 s: the leader gives up, stops scheduling and exits 1 so that its
            # Deployment restarts it as a standby (kube-scheduler does the same)
            rc = wait_for("a to exit", lambda: a.p.poll() is not None and (a.p.returncode,),
                          timeout=30)[0]
            util.check_eq(rc, 1, "exit status after losing the lease")
            if not a.grep(r"leader election lost"):
                raise AssertionError("no 'leader election lost' line: " + a.log_tail())
            api.allow("update", "leases.coordination.k8s.io")
            api.add(pod("p-after"))
            b = Serve(api, LE, name="b")
            wait_for("b bound the new pod", lambda: bound(api).get("p-after") == "n1", timeout=30)
            util.check_eq(b.stop(), 0, "exit status of b")
        finally:
            a.kill()
