# run.py: python /usr/bin/python3
"""gpulabel as the kubelet's device plugin, against a fake kubelet on the real gRPC stack.

Each case runs the real build/gpulabel (daemon, --no-sync unless it needs the API server
double) with the fake NVML and the sysfs fixture, and tests/kubelet/fake_kubelet.py as the
kubelet: registration, the ListAndWatch stream, Allocate (every device list strategy, many
at once while the stream is open), GetPreferredAllocation on an NVLink topology, a kubelet
restart, the plugin's socket removed, the plugin killed and started again, health events
injected through the fake NVML's event file, and the Warning Event on the Node. Waits poll
for a condition with a generous deadline; nothing asserts how fast something happened.
"""
import os
import signal
import threading
import time

import plugin_util as pu
import util
from plugin_util import A100, WAIT, uuid

SKIP = pu.grpc_skip("api_pb2")
if not SKIP:
    import grpc
    from fake_kubelet import FakeKubelet

SYSFS = os.path.join(util.SRC, "tests", "fixtures", "sysfs")
# four GPUs: NVLink pairs (0,1) and (2,3); 0-1 on NUMA 0 in the fixture, 2-3 too (0x0a, 0x0b)
FOUR = "".join("device %s nvlink=%s\n" % (A100, peer) for peer in ("1+1", "0+0", "3+3", "2+2"))
# four GPUs, the third answering GPU_IS_LOST from the start
GPU_2_LOST = "".join("device %s%s\n" % (A100, " lost=1" if i == 2 else "") for i in range(4))


class Node(pu.Node):
    """The fake NVML's node with the kubelet's device-plugin directory and the fake kubelet."""

    def __init__(self, gpus=FOUR, kubelet=True):
        super().__init__("gpulabel-dp-", gpus)
        self.dp_dir = os.path.join(self.dir, "device-plugins")
        os.makedirs(self.dp_dir)
        self.kubelet = FakeKubelet(self.dp_dir, util.BUILD)
        if kubelet:
            self.kubelet.start()

    def start(self, *extra, env=None):
        argv = [util.binary("gpulabel"), "--nvml-lib", util.fake_nvml(), "--sysfs-root", SYSFS,
                "--device-plugin-dir", self.dp_dir, "--sleep-interval", "1s"]
        if "--kubeconfig" not in extra:
            argv.append("--no-sync")
        e = pu.agent_env(FAKE_NVML_CONFIG=self.nvml, FAKE_NVML_EVENTS=self.events)
        e.update(env or {})
        return self.spawn(argv + list(extra), e)


def run(fn, **kw):
    pu.run(Node(**kw), fn)


def healthy_ids(devs):
    return sorted(d[0] for d in devs if d[1] == "Healthy")


def test_registers_and_lists_gpus():
    def body(n):
        n.start()
        pl = n.kubelet.wait_registration()
        util.check_eq(pl.request.version, "v1beta1", "version")
        util.check_eq(pl.request.endpoint, "gpulabel-gpu.sock", "endpoint")
        util.check_eq(pl.request.resource_name, "nvidia.com/gpu", "resource name")
        util.check_eq(pl.request.options.get_preferred_allocation_available, True, "options")
        util.check_eq(pl.options.get_preferred_allocation_available, True, "GetDevicePluginOptions")
        util.check_eq(pl.options.pre_start_required, False, "pre_start_required")
        devs = pl.wait_update()
        util.check_eq(devs, [(uuid(i), "Healthy", [0]) for i in range(4)], "ListAndWatch")
        # PreStartContainer answers empty, as the API defines it
        resp = pl.unary("PreStartContainer", pl.api.PreStartContainerRequest(devices_ids=[uuid(0)]),
                        pl.api.PreStartContainerResponse)
        util.check_eq(resp.ByteSize(), 0, "PreStartContainerResponse")
    run(body)


def test_numa_from_sysfs():
    gpus = "device %s repeat=6\n" % A100
    def body(n):
        n.start()
        devs = n.kubelet.wait_registration().wait_update()
        util.check_eq([d[2] for d in devs], [[0], [0], [0], [0], [1], [1]], "NUMA nodes")
    run(body, gpus=gpus)


def test_allocate_envvar_concurrently():
    def body(n):
        n.start()
        pl = n.kubelet.wait_registration()
        pl.wait_update()
        results, errors = [], []

        def one(i):
            try:
                ids = [uuid(i % 4), uuid((i + 1) % 4)]
                r = pl.allocate(ids)
                results.append((ids, dict(r.container_responses[0].envs)))
            except Exception as e:  # noqa: BLE001
                errors.append(repr(e))
        threads = [threading.Thread(target=one, args=(i,)) for i in range(32)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        util.check_eq(errors, [], "errors")
        util.check_eq(len(results), 32, "answers")
        for ids, envs in results:
            util.check_eq(envs, {"NVIDIA_VISIBLE_DEVICES": ",".join(ids)}, "envs")
        # two containers in one request, and the stream still open afterwards
        r = pl.allocate([uuid(3)], [uuid(0), uuid(2)])
        util.check_eq([dict(c.envs)["NVIDIA_VISIBLE_DEVICES"] for c in r.container_responses],
                      [uuid(3), uuid(0) + "," + uuid(2)], "two containers")
        util.check_eq(pl.stream_ended, False, "ListAndWatch stream still open")
    run(body)


def test_allocate_unknown_device_fails():
    def body(n):
        n.start()
        pl = n.kubelet.wait_registration()
        try:
            pl.allocate(["GPU-not-there"])
        except grpc.RpcError as e:
            util.check_eq(e.code(), grpc.StatusCode.NOT_FOUND, "status")
            util.check_eq(e.details(), "unknown device ID 'GPU-not-there'", "details")
        else:
            raise AssertionError("Allocate of an unknown device succeeded")
    run(body)


def test_allocate_cdi_annotations():
    def body(n):
        n.start("--device-list-strategy", "cdi-annotations")
        pl = n.kubelet.wait_registration()
        c = pl.allocate([uuid(1), uuid(2)]).container_responses[0]
        util.check_eq(dict(c.envs), {}, "no env var")
        ann = dict(c.annotations)
        util.check_eq(len(ann), 1, "one annotation")
        key, value = list(ann.items())[0]
        if not key.startswith("cdi.k8s.io/"):
            raise AssertionError("annotation key %r" % key)
        util.check_eq(value, "k8s.device-plugin.nvidia.com/gpu=%s,k8s.device-plugin.nvidia.com/gpu=%s"
                      % (uuid(1), uuid(2)), "annotation value")
        util.check_eq(list(c.cdi_devices), [], "no CDI devices")
    run(body)


def test_allocate_cdi_cri_and_envvar():
    def body(n):
        n.start("--device-list-strategy", "cdi-cri,envvar")
        pl = n.kubelet.wait_registration()
        c = pl.allocate([uuid(3)]).container_responses[0]
        util.check_eq([d.name for d in c.cdi_devices], ["k8s.device-plugin.nvidia.com/gpu=" + uuid(3)],
                      "CDI devices")
        util.check_eq(dict(c.envs), {"NVIDIA_VISIBLE_DEVICES": uuid(3)}, "env var")
        util.check_eq(dict(c.annotations), {}, "no annotation")
    run(body)


def test_preferred_allocation_keeps_nvlink_pairs():
    def body(n):
        n.start()
        pl = n.kubelet.wait_registration()
        all4 = [uuid(i) for i in range(4)]
        util.check_eq(sorted(pl.preferred(all4, [], 2)), [uuid(0), uuid(1)], "a pair")
        util.check_eq(sorted(pl.preferred([uuid(0), uuid(2), uuid(3)], [], 2)),
                      [uuid(2), uuid(3)], "the whole pair")
        util.check_eq(pl.preferred([uuid(0), uuid(1), uuid(2)], [], 1), [uuid(2)],
                      "the lone GPU, not half a pair")
        util.check_eq(sorted(pl.preferred(all4, [uuid(3)], 2)), [uuid(2), uuid(3)], "must include")
    run(body)


def test_replicas_time_slicing():
    def body(n):
        n.start("--replicas", "3", "--schema", "gfd", "-o", os.path.join(n.dir, "labels"))
        pl = n.kubelet.wait_registration()
        devs = pl.wait_update()
        util.check_eq([d[0] for d in devs], ["%s::%d" % (uuid(g), r) for g in range(4) for r in range(3)],
                      "replica IDs")
        c = pl.allocate([uuid(1) + "::2", uuid(1) + "::0"]).container_responses[0]
        util.check_eq(dict(c.envs), {"NVIDIA_VISIBLE_DEVICES": uuid(1)}, "one GPU behind two replicas")
        got = pl.preferred([d[0] for d in devs], [], 2)
        util.check_eq(len({i.split("::")[0] for i in got}), 2, "replicas of two GPUs")
        deadline = time.monotonic() + WAIT
        labels = {}
        while time.monotonic() < deadline:
            if os.path.exists(os.path.join(n.dir, "labels")):
                with open(os.path.join(n.dir, "labels")) as f:
                    labels = dict(l.strip().split("=", 1) for l in f if "=" in l)
                if labels:
                    break
            time.sleep(0.1)
        util.check_eq(labels.get("nvidia.com/gpu.replicas"), "3", "gpu.replicas")
        util.check_eq(labels.get("nvidia.com/gpu.sharing-strategy"), "time-slicing", "sharing")
        util.check_eq(labels.get("nvidia.com/gpu.product"), "NVIDIA-A100-SXM4-40GB-SHARED", "product")
    run(body)


def test_kubelet_restart_registers_again():
    def body(n):
        n.start()
        pl = n.kubelet.wait_registration()
        pl.wait_update()
        n.kubelet.restart()  # removes every socket, ours too, and serves kubelet.sock again
        pl2 = n.kubelet.wait_registration(2)
        util.check_eq(healthy_ids(pl2.wait_update()), [uuid(i) for i in range(4)], "devices")
        util.check_eq(pl2.allocate([uuid(2)]).container_responses[0].envs["NVIDIA_VISIBLE_DEVICES"],
                      uuid(2), "Allocate after the restart")
        # its own restart removes its old socket: that is not a reason to restart again
        time.sleep(1.5)
        util.check_eq(len(n.kubelet.plugins), 2, "registrations")
    run(body)


def test_plugin_socket_removed_registers_again():
    def body(n):
        p = n.start()
        n.kubelet.wait_registration().wait_update()
        os.unlink(os.path.join(n.dp_dir, "gpulabel-gpu.sock"))
        pl2 = n.kubelet.wait_registration(2)
        pl2.wait_update()
        if "the plugin socket was removed" not in n.stderr(p) and "socket is gone" not in n.stderr(p):
            raise AssertionError("no log line on the removed socket: %r" % n.stderr(p)[-500:])
        time.sleep(1.5)
        util.check_eq(len(n.kubelet.plugins), 2, "registrations")
    run(body)


def test_kubelet_late_then_registers():
    def body(n):
        p = n.start()
        time.sleep(1.5)
        util.check_eq(p.poll(), None, "still running without a kubelet")
        n.kubelet.start()
        n.kubelet.wait_registration().wait_update()
        # kubelet.sock's creation event, read after the plugin registered with that very
        # socket, is not a kubelet restart: no second registration tears the stream down
        time.sleep(1.5)
        util.check_eq(len(n.kubelet.plugins), 1, "registrations: %s" % n.stderr(p)[-600:])
    run(body, kubelet=False)


def test_plugin_killed_and_restarted():
    def body(n):
        p = n.start()
        n.kubelet.wait_registration().wait_update()
        p.kill()  # SIGKILL: the socket stays behind, stale
        p.wait()
        n.start()
        pl2 = n.kubelet.wait_registration(2)
        util.check_eq(healthy_ids(pl2.wait_update()), [uuid(i) for i in range(4)], "devices")
    run(body)


def test_health_xid_marks_unhealthy_and_ignored_xid_does_not():
    def body(n):
        p = n.start()
        pl = n.kubelet.wait_registration()
        pl.wait_update(lambda d: len(healthy_ids(d)) == 4)
        n.inject("xid 0 13")   # an application XID, ignored by default
        n.inject("xid 2 79")   # GPU fallen off the bus
        devs = pl.wait_update(lambda d: any(x[1] == "Unhealthy" for x in d))
        util.check_eq([x[1] for x in devs], ["Healthy", "Healthy", "Unhealthy", "Healthy"], "health")
        try:
            pl.allocate([uuid(2)])
        except grpc.RpcError as e:
            util.check_eq(e.code(), grpc.StatusCode.INVALID_ARGUMENT, "status")
        else:
            raise AssertionError("Allocate of an unhealthy GPU succeeded")
        n.inject("ecc %s" % uuid(3))
        devs = pl.wait_update(lambda d: d[3][1] == "Unhealthy")
        util.check_eq(devs[0][1], "Healthy", "GPU 0 after the ignored XID 13")
        err = n.stderr(p)
        if "GPU 2 (%s) is unhealthy: XID 79" % uuid(2) not in err:
            raise AssertionError("no log line for XID 79: %r" % err[-800:])
    run(body)


def test_health_ignore_xids_flag():
    def body(n):
        n.start("--health-ignore-xids", "79")
        pl = n.kubelet.wait_registration()
        pl.wait_update()
        n.inject("xid 1 79")
        n.inject("xid 0 13")  # no longer ignored
        devs = pl.wait_update(lambda d: any(x[1] == "Unhealthy" for x in d))
        util.check_eq([x[1] for x in devs], ["Unhealthy", "Healthy", "Healthy", "Healthy"], "health")
    run(body)


def test_lost_gpu_is_unhealthy():
    def body(n):
        n.start()
        pl = n.kubelet.wait_registration()
        pl.wait_update()
        n.inject("lost %s" % uuid(1))
        devs = pl.wait_update(lambda d: any(x[1] == "Unhealthy" for x in d))
        util.check_eq([x[1] for x in devs], ["Healthy", "Unhealthy", "Healthy", "Healthy"], "health")
    run(body)


def wait_events(api, pred=lambda evs: evs, timeout=WAIT):
    deadline = time.monotonic() + timeout
    evs = []
    while time.monotonic() < deadline:
        evs = api.list("events", "default")
        if pred(evs):
            return evs
        time.sleep(0.1)
    raise AssertionError("events: %r" % evs)


def check_gpu_2_lost(n, said):
    """GPU 2 of four lost from the start: advertised Unhealthy as lost-gpu-2 beside the three
    others, and one Warning Event on the Node whose message ends with said."""
    util.check_eq([(d[0], d[1]) for d in n.kubelet.wait_registration().wait_update()],
                  [(uuid(0), "Healthy"), (uuid(1), "Healthy"), ("lost-gpu-2", "Unhealthy"),
                   (uuid(3), "Healthy")], "ListAndWatch")
    util.check_eq([(e["type"], e["reason"], e["message"]) for e in wait_events(n.api)],
                  [("Warning", "GPUUnhealthy", "GPU 2 (lost-gpu-2) is unhealthy: GPU is lost"
                    + said)], "events")


def test_lost_gpu_at_start_never_hides_the_others():
    # issue 24 item 1: the third GPU of four answers GPU_IS_LOST from the start
    def body(n):
        kc = n.start_api("gpu-1")
        p = n.start("--kubeconfig", kc, "--node-name", "gpu-1", "--schema", "ack,gfd")
        check_gpu_2_lost(n, "; the device plugin reports it Unhealthy to the kubelet")
        deadline = time.monotonic() + WAIT
        labels = {}
        while time.monotonic() < deadline:
            labels = (n.api.get("nodes", "gpu-1") or {}).get("metadata", {}).get("labels") or {}
            if labels.get("aliyun.accelerator/nvidia_count"):
                break
            time.sleep(0.1)
        util.check_eq((labels.get("aliyun.accelerator/nvidia_count"),
                       labels.get("nvidia.com/gpu.count")), ("3", "3"), "labels")
        err = n.stderr(p)
        for want in ("device plugin: GPU 2 (lost-gpu-2) is unhealthy: GPU is lost",
                     "GPU 2 cannot be read: GPU 2: nvmlDeviceGetName: GPU is lost; the "
                     "other GPUs are labelled and advertised"):
            if want not in err:
                raise AssertionError("no %r in the log: %r" % (want, err[-1500:]))
    run(body, gpus=GPU_2_LOST)


def health(devs):
    return [d[1][0] for d in devs]  # "H"ealthy / "U"nhealthy, in device order


def test_health_recovers_after_the_quiet_period():
    # issue 24 item 5: XID 79 makes GPU 2 Unhealthy; with no new critical event for the
    # recovery period and NVML answering, it is Healthy again, with a Normal Event
    def body(n):
        kc = n.start_api("gpu-1")
        p = n.start("--kubeconfig", kc, "--node-name", "gpu-1",
                    "--health-recovery-period", "2s")
        pl = n.kubelet.wait_registration()
        pl.wait_update(lambda d: health(d) == list("HHHH"))
        n.inject("xid 2 79")
        t_bad = time.monotonic()
        pl.wait_update(lambda d: health(d) == list("HHUH"))
        k = len(pl.updates)
        pl.wait_update(lambda d: health(d) == list("HHHH"), timeout=WAIT, after=k)
        if time.monotonic() - t_bad < 2.0:
            raise AssertionError("healthy again before the 2 s quiet period")
        evs = wait_events(n.api, lambda e: len(e) == 2)
        util.check_eq(sorted((e["type"], e["reason"]) for e in evs),
                      [("Normal", "GPUHealthy"), ("Warning", "GPUUnhealthy")], "events")
        msg = [e["message"] for e in evs if e["reason"] == "GPUHealthy"][0]
        if not msg.startswith("GPU 2 (%s) is healthy again: no critical event for " % uuid(2)) \
                or "after XID 79, and NVML answers" not in msg:
            raise AssertionError("message %r" % msg)
        if "device plugin: GPU 2 (%s) is healthy again" % uuid(2) not in n.stderr(p):
            raise AssertionError("no log line: %r" % n.stderr(p)[-800:])
    run(body)


def test_health_waits_for_the_gpu_reset_the_driver_asks_for():
    def body(n):
        p = n.start("--health-recovery-period", "1s")
        pl = n.kubelet.wait_registration()
        pl.wait_update(lambda d: health(d) == list("HHHH"))
        n.inject("xid 1 79 reset")  # NVML's recovery action: GPU reset
        pl.wait_update(lambda d: health(d) == list("HUHH"))
        n.wait_log(p, "GPU 1 (%s) stays unhealthy: the driver asks for a GPU reset (NVML "
                      "recovery action 1)" % uuid(1))
        util.check_eq(health(pl.updates[-1]), list("HUHH"), "still unhealthy after the period")
        util.check_eq(n.stderr(p).count("stays unhealthy"), 1, "said once")
        n.inject("clear 1")  # the GPU was reset
        pl.wait_update(lambda d: health(d) == list("HHHH"), timeout=WAIT)
    run(body)


def test_lost_gpu_heals_when_it_answers_again():
    def body(n):
        n.start("--health-recovery-period", "1s")
        pl = n.kubelet.wait_registration()
        pl.wait_update(lambda d: health(d) == list("HHHH"))
        n.inject("lost %s" % uuid(3))
        pl.wait_update(lambda d: health(d) == list("HHHU"))
        time.sleep(2.5)  # still lost: the quiet period restarts at every probe
        util.check_eq(health(pl.updates[-1]), list("HHHU"), "lost stays unhealthy")
        n.inject("found 3")
        pl.wait_update(lambda d: health(d) == list("HHHH"), timeout=WAIT)
    run(body)


def test_gpu_lost_at_start_heals_under_its_uuid():
    def body(n):
        p = n.start("--health-recovery-period", "1s")
        pl = n.kubelet.wait_registration()
        pl.wait_update(lambda d: [x[0] for x in d][2] == "lost-gpu-2")
        n.inject("found 2")
        devs = pl.wait_update(lambda d: d[2] == (uuid(2), "Healthy", [0]), timeout=WAIT)
        util.check_eq(health(devs), list("HHHH"), "health")
        if "GPU 2 (lost-gpu-2 until now) answers again as %s" % uuid(2) not in n.stderr(p):
            raise AssertionError("no log line: %r" % n.stderr(p)[-800:])
    run(body, gpus=GPU_2_LOST)


def test_no_flapping_a_relapse_waits_twice_as_long():
    def body(n):
        n.start("--health-recovery-period", "1s")
        pl = n.kubelet.wait_registration()
        pl.wait_update(lambda d: health(d) == list("HHHH"))
        n.inject("xid 0 48")
        pl.wait_update(lambda d: health(d) == list("UHHH"))
        k = len(pl.updates)
        pl.wait_update(lambda d: health(d) == list("HHHH"), timeout=WAIT, after=k)
        n.inject("xid 0 48")  # at once after recovering: a relapse, 2 s this time
        t_bad = time.monotonic()
        k = len(pl.updates)
        pl.wait_update(lambda d: health(d) == list("UHHH"), after=k)
        k = len(pl.updates)
        pl.wait_update(lambda d: health(d) == list("HHHH"), timeout=WAIT, after=k)
        if time.monotonic() - t_bad < 2.0:
            raise AssertionError("a relapse recovered before twice the period")
    run(body)


def test_recovery_switched_off():
    def body(n):
        p = n.start("--health-recovery-period", "0")
        pl = n.kubelet.wait_registration()
        pl.wait_update(lambda d: health(d) == list("HHHH"))
        n.inject("xid 2 79")
        pl.wait_update(lambda d: health(d) == list("HHUH"))
        time.sleep(3)
        util.check_eq(health(pl.updates[-1]), list("HHUH"), "still unhealthy")
        if "healthy again" in n.stderr(p):
            raise AssertionError("recovered with recovery off")
    run(body)


def test_warning_event_on_the_node():
    def body(n):
        kc = n.start_api("gpu-1")
        n.start("--kubeconfig", kc, "--node-name", "gpu-1")
        pl = n.kubelet.wait_registration()
        pl.wait_update()
        n.inject("xid 3 48")
        deadline = time.monotonic() + WAIT
        posts = []
        while time.monotonic() < deadline and not posts:
            posts = [r for r in list(n.api.requests)
                     if r["method"] == "POST" and r["path"] == "/api/v1/namespaces/default/events"]
            time.sleep(0.1)
        if not posts:
            raise AssertionError("no Event was posted")
        evs = []
        while time.monotonic() < deadline and not evs:
            evs = n.api.list("events", "default")
            time.sleep(0.1)
        util.check_eq(len(evs), 1, "events stored")
        ev = evs[0]
        util.check_eq(ev["type"], "Warning", "type")
        util.check_eq(ev["reason"], "GPUUnhealthy", "reason")
        util.check_eq(ev["involvedObject"]["kind"], "Node", "kind")
        util.check_eq(ev["involvedObject"]["name"], "gpu-1", "name")
        util.check_eq(ev["source"]["component"], "gpulabel", "source")
        util.check_eq(ev["message"], "GPU 3 (%s) is unhealthy: XID 48; the device plugin "
                      "reports it Unhealthy to the kubelet" % uuid(3), "message")
    run(body)


def test_split_pod_the_labeller_posts_the_plugins_events():
    # deploy/gpulabel/daemonset.yaml's two containers: the device plugin has no token
    # (--no-sync), the labeller (--device-plugin=false, the token) watches the same GPUs with
    # the same rules and posts the Warning and Normal Events; exactly one of each
    def body(n):
        kc = n.start_api("gpu-1")
        lab = n.start("--kubeconfig", kc, "--node-name", "gpu-1", "--device-plugin=false",
                      "--mode", "device-plugin", "--health-recovery-period", "2s", "-v", "1")
        n.start("--mode", "device-plugin", "--health-recovery-period", "2s")
        pl = n.kubelet.wait_registration()
        pl.wait_update(lambda d: health(d) == list("HHHH"))
        n.wait_log(lab, "watching GPU health for the Node's Events")
        n.inject("xid 2 79")
        pl.wait_update(lambda d: health(d) == list("HHUH"))
        evs = wait_events(n.api, lambda e: len(e) == 1)
        util.check_eq((evs[0]["type"], evs[0]["reason"], evs[0]["message"]),
                      ("Warning", "GPUUnhealthy", "GPU 2 (%s) is unhealthy: XID 79" % uuid(2)),
                      "the Warning")
        k = len(pl.updates)
        pl.wait_update(lambda d: health(d) == list("HHHH"), timeout=WAIT, after=k)
        evs = wait_events(n.api, lambda e: len(e) == 2)
        util.check_eq(sorted((e["type"], e["reason"]) for e in evs),
                      [("Normal", "GPUHealthy"), ("Warning", "GPUUnhealthy")], "events")
        time.sleep(1.0)
        util.check_eq(len(n.api.list("events", "default")), 2, "no other Event")
    run(body)


def test_split_pod_a_gpu_lost_at_start():
    # the same two containers, the third GPU lost from the start: the labeller's Warning names
    # the device as the plugin advertises it (lost-gpu-2), without the one-process words (this
    # process does not know which device plugin tells the kubelet: NVIDIA's with the Helm value
    # devicePlugin.enabled=false)
    def body(n):
        kc = n.start_api("gpu-1")
        n.start("--kubeconfig", kc, "--node-name", "gpu-1", "--device-plugin=false",
                "--mode", "device-plugin")
        n.start("--mode", "device-plugin")
        check_gpu_2_lost(n, "")
    run(body, gpus=GPU_2_LOST)


def test_device_plugin_off():
    def body(n):
        p = n.start("--device-plugin=false")
        time.sleep(1.5)
        util.check_eq(n.kubelet.plugins, [], "registrations")
        util.check_eq(os.listdir(n.dp_dir), ["kubelet.sock"], "sockets")
        util.check_eq(p.poll(), None, "running")
    run(body)


def test_sigterm_removes_the_socket():
    def body(n):
        p = n.start()
        n.kubelet.wait_registration().wait_update()
        time.sleep(1.2)  # let the first cycle finish, so the plugin is stopped in order
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=10)
        util.check_eq(sorted(os.listdir(n.dp_dir)), ["kubelet.sock"], "sockets after SIGTERM")
    run(body)


MIG_NODE = ('device %s mig=enabled mig_devices=1g.5gb+1g.5gb+3g.20gb\n' % A100 +
            'device %s\n' % A100)
MIG_SINGLE = 'device %s mig=enabled mig_devices=1g.5gb+1g.5gb repeat=2\n' % A100


def mig_uuid(gpu, k):
    return "MIG-00000000-fa4e-4e00-9000-%04x%08x" % (gpu, k)


def test_mig_single_advertises_mig_devices():
    def body(n):
        n.start("--mig-strategy", "single")
        pl = n.kubelet.wait_registration()
        util.check_eq(pl.request.resource_name, "nvidia.com/gpu", "resource")
        devs = pl.wait_update()
        util.check_eq([d[0] for d in devs], [mig_uuid(0, 0), mig_uuid(0, 1), mig_uuid(1, 0),
                                             mig_uuid(1, 1)], "MIG devices")
        util.check_eq(dict(pl.allocate([mig_uuid(1, 1)]).container_responses[0].envs),
                      {"NVIDIA_VISIBLE_DEVICES": mig_uuid(1, 1)}, "envs")
        n.inject("xid 1 79")  # on GPU 1: both its MIG devices
        devs = pl.wait_update(lambda d: any(x[1] == "Unhealthy" for x in d))
        util.check_eq([x[1] for x in devs], ["Healthy", "Healthy", "Unhealthy", "Unhealthy"],
                      "health after an XID on GPU 1")
    run(body, gpus=MIG_SINGLE)


def test_mig_mixed_one_resource_per_profile():
    def body(n):
        n.start("--mig-strategy", "mixed")
        n.kubelet.wait_registration(3)
        by_res = {p.request.resource_name: p for p in n.kubelet.plugins}
        util.check_eq(sorted(by_res), ["nvidia.com/gpu", "nvidia.com/mig-1g.5gb",
                                       "nvidia.com/mig-3g.20gb"], "resources")
        util.check_eq(sorted(p.request.endpoint for p in n.kubelet.plugins),
                      ["gpulabel-gpu.sock", "gpulabel-mig-1g.5gb.sock", "gpulabel-mig-3g.20gb.sock"],
                      "endpoints")
        util.check_eq([d[0] for d in by_res["nvidia.com/gpu"].wait_update()], [uuid(1)],
                      "full GPUs")
        util.check_eq([d[0] for d in by_res["nvidia.com/mig-1g.5gb"].wait_update()],
                      [mig_uuid(0, 0), mig_uuid(0, 1)], "1g.5gb devices")
        util.check_eq([d[0] for d in by_res["nvidia.com/mig-3g.20gb"].wait_update()],
                      [mig_uuid(0, 2)], "3g.20gb devices")
    run(body, gpus=MIG_NODE)


def test_registration_refused_is_logged_and_retried():
    def body(n):
        n.kubelet.reject = "resource nvidia.com/gpu is already taken"
        p = n.start()
        err = n.wait_log(p, "cannot register")
        if ("device plugin: cannot register nvidia.com/gpu with the kubelet: "
                "/v1beta1.Registration/Register on '%s/kubelet.sock': gRPC status 2: resource "
                "nvidia.com/gpu is already taken; retrying every 5s" % n.dp_dir) not in err:
            raise AssertionError("no refusal line: %r" % err[-600:])
        util.check_eq(p.poll(), None, "still running")
        n.kubelet.reject = None  # the next attempt, within 5 s, is accepted
        n.kubelet.wait_registration(timeout=15).wait_update()
        util.check_eq(err.count("cannot register"), 1, "the refusal is logged once")
    run(body)


def test_bad_flags():
    for args, want in (
            (["--replicas", "0"], "gpulabel: --replicas: invalid replicas '0' (want 1 to 256)"),
            (["--device-list-strategy", "volume-mounts"],
             "gpulabel: --device-list-strategy: unknown device list strategy 'volume-mounts' "
             "(want envvar, cdi-annotations or cdi-cri, or a comma list of them)"),
            (["--resource-name", "gpu"], "gpulabel: --resource-name: invalid resource name 'gpu' "
             "(want an extended resource such as nvidia.com/gpu)"),
            (["--health-ignore-xids", "13,abc"],
             "gpulabel: --health-ignore-xids: invalid XID 'abc' (want a number from 0 to 1023)"),
            (["--mig-strategy", "all"],
             "gpulabel: --mig-strategy: invalid MIG strategy 'all' (want none, single or mixed)")):
        p = util.run([util.binary("gpulabel")] + args)
        util.check_eq((p.returncode, p.stderr.strip()), (2, want), " ".join(args))


def http_get(port, path):
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read().decode()
    finally:
        c.close()


def metrics_port(n, p):
    import re
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        m = re.search(r"serving /healthz, /readyz and /metrics on port (\d+)", n.stderr(p))
        if m:
            return int(m.group(1))
        time.sleep(0.05)
    raise AssertionError("no metrics port line: %r" % n.stderr(p))


def test_metrics_and_probes():
    def body(n):
        p = n.start("--metrics-addr", "127.0.0.1:0")
        port = metrics_port(n, p)
        pl = n.kubelet.wait_registration()
        pl.wait_update()
        pl.allocate([uuid(0)])
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and http_get(port, "/healthz")[0] != 200:
            time.sleep(0.1)
        util.check_eq(http_get(port, "/healthz"), (200, "ok\n"), "/healthz")
        util.check_eq(http_get(port, "/readyz"), (200, "ok\n"), "/readyz")
        status, text = http_get(port, "/metrics")
        util.check_eq(status, 200, "/metrics")
        values = dict(l.split(" ", 1) for l in text.splitlines() if l and not l.startswith("#"))
        util.check_eq({k: values.get(k) for k in ("gpulabel_gpus", "gpulabel_gpus_healthy",
                                                   "gpulabel_nvml_up", "gpulabel_allocations_total",
                                                   "gpulabel_device_plugin_registered")},
                      {"gpulabel_gpus": "4", "gpulabel_gpus_healthy": "4", "gpulabel_nvml_up": "1",
                       "gpulabel_allocations_total": "1", "gpulabel_device_plugin_registered": "1"},
                      "metrics")
        n.inject("xid 1 79")
        pl.wait_update(lambda d: d[1][1] == "Unhealthy")
        values = dict(l.split(" ", 1) for l in http_get(port, "/metrics")[1].splitlines()
                      if l and not l.startswith("#"))
        util.check_eq(values.get("gpulabel_gpus_healthy"), "3", "healthy after an XID")
        # the kubelet refuses the plugin after its restart: not registered, /healthz fails
        n.kubelet.reject = "no"
        n.kubelet.restart()
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and http_get(port, "/healthz")[0] == 200:
            time.sleep(0.1)
        util.check_eq(http_get(port, "/healthz"),
                      (503, "the device plugin is not registered with the kubelet\n"), "/healthz")
        util.check_eq(http_get(port, "/nope")[0], 404, "unknown path")
    run(body)


def test_healthz_fails_while_nvml_is_down():
    def body(n):
        p = n.start("--metrics-addr", "127.0.0.1:0")
        port = metrics_port(n, p)
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and http_get(port, "/readyz")[0] != 200:
            time.sleep(0.1)
        util.check_eq(http_get(port, "/healthz"),
                      (503, "NVML is down: NVML cannot start: the NVIDIA driver is not loaded "
                            "(nvmlInit_v2: Driver Not Loaded)\n"), "/healthz")
        values = dict(l.split(" ", 1) for l in http_get(port, "/metrics")[1].splitlines()
                      if l and not l.startswith("#"))
        util.check_eq(values.get("gpulabel_nvml_up"), "0", "nvml_up")
    run(body, gpus="init=DRIVER_NOT_LOADED\n")
