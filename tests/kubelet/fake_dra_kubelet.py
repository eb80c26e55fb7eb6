"""The kubelet's DRA side for tests, on Debian's python3-grpcio and python3-protobuf: its
plugin registration watcher and the NodePrepareResources / NodeUnprepareResources caller.

Like the kubelet's plugin manager it watches the registry directory (a poll every 50 ms), and
for each socket that appears dials it, calls GetInfo, checks what the kubelet checks (type
DRAPlugin, a name, an endpoint, a DRA service version it speaks) and answers with
NotifyRegistrationStatus. restart() behaves as a kubelet restart does for plugins: every
registration is forgotten and the sockets found in the directory are registered again. The
prepare/unprepare calls go to the registered plugin's endpoint, v1 by default (v1beta1 on
request: the same messages on the wire).

Runs under /usr/bin/python3; the messages come from build/gen/python/{dra,pluginregistration}_pb2.py.
"""
import os
import stat
import sys
import threading
import time

import grpc

V1 = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/"
V1BETA1 = "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/"


def load_api(build):
    sys.path.insert(0, os.path.join(build, "gen", "python"))
    import dra_pb2  # noqa: E402
    import pluginregistration_pb2  # noqa: E402
    return dra_pb2, pluginregistration_pb2


class Registration:
    def __init__(self, path, info):
        self.path = path      # the registration socket
        self.info = info      # its PluginInfo
        self.at = time.monotonic()


class FakeDraKubelet:
    def __init__(self, registry_dir, build, refuse=None):
        self.dir = registry_dir
        self.dra, self.reg = load_api(build)
        self.refuse = refuse  # an error text to refuse registrations with
        self.registrations = []  # every registration, in order
        self.errors = []
        self.cond = threading.Condition()
        self._known = set()
        self._channels = {}
        self._stop = threading.Event()
        self._thread = None

    # ---- the plugin watcher ------------------------------------------------------------------

    def start(self):
        os.makedirs(self.dir, exist_ok=True)
        self._stop.clear()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join(5)
            self._thread = None
        with self.cond:
            for ch, _ in self._channels.values():
                ch.close()
            self._channels = {}

    def restart(self):
        """A kubelet restart: registrations forgotten, the directory scanned again."""
        self.stop()
        with self.cond:
            self._known = set()
        self.start()

    def _watch(self):
        while not self._stop.is_set():
            try:
                names = os.listdir(self.dir)
            except OSError:
                names = []
            present = set()
            for name in names:
                path = os.path.join(self.dir, name)
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                if not stat.S_ISSOCK(st.st_mode):
                    continue
                key = (path, st.st_ino)
                present.add(key)
                if key not in self._known:
                    self._known.add(key)
                    self._register(path, key)
            with self.cond:
                self._known &= present  # a socket that went away may come back
            self._stop.wait(0.05)

    def _channel(self, path):
        """The kubelet keeps one connection to a plugin's DRA socket; so does this one (a new
        one after the socket changed)."""
        with self.cond:
            try:
                ino = os.stat(path).st_ino
            except OSError:
                ino = None
            ch = self._channels.get(path)
            if ch and ch[1] == ino:
                return ch[0]
            if ch:
                ch[0].close()
            ch = (grpc.insecure_channel("unix:" + path), ino)
            self._channels[path] = ch
            return ch[0]

    def _call(self, path, method, req, resp_type, timeout=10):
        f = self._channel(path).unary_unary(method, request_serializer=lambda m: m.SerializeToString(),
                                            response_deserializer=resp_type.FromString)
        return f(req, timeout=timeout)

    def _once(self, path, method, req, resp_type, timeout=10):
        """A call on a connection of its own, as the kubelet's registration makes one."""
        with grpc.insecure_channel("unix:" + path) as ch:
            f = ch.unary_unary(method, request_serializer=lambda m: m.SerializeToString(),
                               response_deserializer=resp_type.FromString)
            return f(req, timeout=timeout)

    def _register(self, path, key):
        try:
            info = self._once(path, "/pluginregistration.Registration/GetInfo",
                              self.reg.InfoRequest(), self.reg.PluginInfo)
            why = ""
            if info.type != "DRAPlugin":
                why = "type %r is not DRAPlugin" % info.type
            elif not info.name or not info.endpoint:
                why = "no name or endpoint"
            elif not {"v1.DRAPlugin", "v1beta1.DRAPlugin"} & set(info.supported_versions):
                why = "no DRA service version the kubelet speaks: %r" % list(info.supported_versions)
            elif self.refuse:
                why = self.refuse
            self._once(path, "/pluginregistration.Registration/NotifyRegistrationStatus",
                       self.reg.RegistrationStatus(plugin_registered=not why, error=why),
                       self.reg.RegistrationStatusResponse)
            with self.cond:
                if why:
                    self.errors.append(why)
                else:
                    self.registrations.append(Registration(path, info))
                self.cond.notify_all()
        except Exception as e:  # noqa: BLE001 - reported to the test, and tried again
            with self.cond:
                self.errors.append(repr(e))
                self._known.discard(key)  # the kubelet's reconciler tries again, as this does
                self.cond.notify_all()

    def wait_registration(self, n=1, timeout=15):
        end = time.monotonic() + timeout
        with self.cond:
            while len(self.registrations) < n:
                left = end - time.monotonic()
                if left <= 0:
                    raise AssertionError("%d registration(s) in %.0fs, want %d; errors %r"
                                         % (len(self.registrations), timeout, n, self.errors))
                self.cond.wait(left)
            return self.registrations[n - 1]

    # ---- the DRA calls ----------------------------------------------------------------------

    def _endpoint(self):
        return self.wait_registration().info.endpoint

    def prepare(self, *claims, version=V1, timeout=10):
        """claims: (namespace, name, uid) tuples. Returns {uid: NodePrepareResourceResponse}."""
        req = self.dra.NodePrepareResourcesRequest(
            claims=[self.dra.Claim(namespace=ns, name=n, uid=u) for ns, n, u in claims])
        r = self._call(self._endpoint(), version + "NodePrepareResources", req,
                       self.dra.NodePrepareResourcesResponse, timeout)
        return dict(r.claims)

    def unprepare(self, *claims, version=V1, timeout=10):
        req = self.dra.NodeUnprepareResourcesRequest(
            claims=[self.dra.Claim(namespace=ns, name=n, uid=u) for ns, n, u in claims])
        r = self._call(self._endpoint(), version + "NodeUnprepareResources", req,
                       self.dra.NodeUnprepareResourcesResponse, timeout)
        return dict(r.claims)

    def raw(self, method, data, timeout=10):
        """A call with raw request bytes; returns the raw answer."""
        with grpc.insecure_channel("unix:" + self._endpoint()) as ch:
            f = ch.unary_unary(method, request_serializer=lambda b: b,
                               response_deserializer=lambda b: b)
            return f(data, timeout=timeout)
