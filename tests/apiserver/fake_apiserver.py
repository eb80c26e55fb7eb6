#!/usr/bin/env python3
"""A Kubernetes API server test double: speaks kube-apiserver's REST and watch wire format.

Used in-process by the integration tests (FakeApiServer) and standalone for benchmarks
(`fake_apiserver.py --help`). Objects live in memory; every write bumps one global
resourceVersion and is appended to a bounded event history that watches replay. Errors are
real `Status` bodies with the API server's reasons and message formats. Bearer tokens are
checked but never recorded anywhere. Python 3 standard library only.
"""
import argparse
import base64
import bisect
import copy
import datetime
import gzip
import http.server
import json
import os
import random
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid

# ---------------------------------------------------------------------------------------------
# Resources the double serves: (group, version, plural) -> kind, namespaced, list kind

RESOURCES = {
    ("", "v1", "nodes"): ("Node", False),
    ("", "v1", "pods"): ("Pod", True),
    ("", "v1", "events"): ("Event", True),
    ("events.k8s.io", "v1", "events"): ("Event", True),
    ("coordination.k8s.io", "v1", "leases"): ("Lease", True),
    ("scheduling.k8s.io", "v1", "priorityclasses"): ("PriorityClass", False),
    ("policy", "v1", "poddisruptionbudgets"): ("PodDisruptionBudget", True),
    ("", "v1", "persistentvolumeclaims"): ("PersistentVolumeClaim", True),
    ("", "v1", "persistentvolumes"): ("PersistentVolume", False),
    ("storage.k8s.io", "v1", "storageclasses"): ("StorageClass", False),
    ("storage.k8s.io", "v1", "csinodes"): ("CSINode", False),
    # what gpusched serve watches besides: namespaceSelector's labels, the selectors of
    # PodTopologySpread's system defaults
    ("", "v1", "namespaces"): ("Namespace", False),
    ("", "v1", "services"): ("Service", True),
    ("", "v1", "replicationcontrollers"): ("ReplicationController", True),
    ("apps", "v1", "replicasets"): ("ReplicaSet", True),
    ("apps", "v1", "statefulsets"): ("StatefulSet", True),
    # Dynamic Resource Allocation (what gpusched's live input lists; gpulabel's DRA mode reads
    # claims and publishes slices)
    ("resource.k8s.io", "v1", "deviceclasses"): ("DeviceClass", False),
    ("resource.k8s.io", "v1", "resourceslices"): ("ResourceSlice", False),
    ("resource.k8s.io", "v1", "resourceclaims"): ("ResourceClaim", True),
    ("resource.k8s.io", "v1", "resourceclaimtemplates"): ("ResourceClaimTemplate", True),
    ("resource.k8s.io", "v1", "devicetaintrules"): ("DeviceTaintRule", False),
}

# status subresources: main-resource writes keep the old status, /status writes keep the rest
HAS_STATUS = {("", "v1", "nodes"), ("", "v1", "pods"), ("policy", "v1", "poddisruptionbudgets"),
              ("resource.k8s.io", "v1", "resourceclaims")}

OPTIMISTIC_LOCK_MSG = ("the object has been modified; please apply your changes to the latest "
                       "version and try again")
CONTINUE_EXPIRED_MSG = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this response "
    "to retrieve the remainder of the results. Continuing with the provided token results in an "
    "inconsistent list - objects that were created, modified, or deleted between the time the "
    "first chunk was returned and now may show up in the list.")
UNSUPPORTED_MEDIA_MSG = (
    "the body of the request was in an unknown format - accepted media types include: "
    "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, "
    "application/strategic-merge-patch+json")

# strategic-merge-patch list merge keys (patchStrategy:"merge" in core/v1 and resource/v1
# types.go)
SMP_MERGE_KEYS = {
    "status.conditions": "type",
    "status.addresses": "type",
    "spec.containers": "name",
    "spec.initContainers": "name",
    "spec.volumes": "name",
    "spec.containers.ports": "containerPort",
    "spec.containers.env": "name",
    "metadata.ownerReferences": "uid",
    "metadata.finalizers": None,  # merge of a primitive list: union
    "status.reservedFor": "uid",  # resource.k8s.io ResourceClaimStatus
}

DEFAULT_REASONS = {
    400: ("BadRequest", "the server rejected our request for an unknown reason"),
    401: ("Unauthorized", "Unauthorized"),
    403: ("Forbidden", "forbidden"),
    404: ("NotFound", "the server could not find the requested resource"),
    405: ("MethodNotAllowed", "the server does not allow this method on the requested resource"),
    409: ("Conflict", "the server reported a conflict"),
    410: ("Expired", "the resource version is too old"),
    415: ("UnsupportedMediaType", UNSUPPORTED_MEDIA_MSG),
    422: ("Invalid", "the server rejected our request due to an error in our request"),
    429: ("TooManyRequests", "Too many requests, please try again later."),
    500: ("InternalError", "Internal error occurred: injected fault"),
    503: ("ServiceUnavailable", "the server is currently unable to handle the request"),
    504: ("Timeout", "the server was unable to return a response in the time allotted"),
}


def now_rfc3339():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def status_body(code, reason, message, name=None, kind=None, group=None, retry_after=None,
                causes=None):
    """A metav1.Status failure object as the API server writes it."""
    st = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
          "message": message, "reason": reason}
    details = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    if kind:
        details["kind"] = kind
    if causes:
        details["causes"] = causes
    if retry_after is not None:
        details["retryAfterSeconds"] = retry_after
    if details:
        st["details"] = details
    if not reason:
        del st["reason"]
    st["code"] = code
    return st


class ApiError(Exception):
    """Raised by handlers; carries the HTTP code, the Status body and extra headers."""

    def __init__(self, code, body, headers=None):
        super().__init__(body.get("message", ""))
        self.code = code
        self.body = body
        self.headers = headers or {}


def gr_name(res):
    """'nodes' or 'leases.coordination.k8s.io': how the API server names a resource in text."""
    group, _, plural = res
    return plural + ("." + group if group else "")


def err_not_found(res, name):
    return ApiError(404, status_body(404, "NotFound", '%s "%s" not found' % (gr_name(res), name),
                                     name=name, kind=res[2], group=res[0] or None))


def err_already_exists(res, name):
    return ApiError(409, status_body(409, "AlreadyExists",
                                     '%s "%s" already exists' % (gr_name(res), name),
                                     name=name, kind=res[2], group=res[0] or None))


def err_conflict(res, name, why=OPTIMISTIC_LOCK_MSG, what=None):
    what = what or gr_name(res)
    return ApiError(409, status_body(409, "Conflict",
                                     'Operation cannot be fulfilled on %s "%s": %s' % (what, name, why),
                                     name=name, kind=what if what != gr_name(res) else res[2],
                                     group=res[0] or None))


def err_bad_request(message):
    return ApiError(400, status_body(400, "BadRequest", message))


def err_invalid(res, kind, name, causes):
    """422 Invalid in the API server's format: Kind.group "name" is invalid: [causes]."""
    qual = kind + ("." + res[0] if res[0] else "")
    texts = ["%s: %s" % (c["field"], c["message"]) for c in causes]
    msg = '%s "%s" is invalid: %s' % (qual, name, texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]")
    return ApiError(422, status_body(422, "Invalid", msg, name=name, kind=kind, group=res[0] or None,
                                     causes=[{"reason": c.get("reason", "FieldValueRequired"),
                                              "message": c["message"], "field": c["field"]} for c in causes]))


def err_patch_apply(message):
    return ApiError(422, status_body(
        422, "Invalid", "the server rejected our request due to an error in our request",
        causes=[{"reason": "UnexpectedServerResponse", "message": message}]))


def err_expired(message):
    return ApiError(410, status_body(410, "Expired", message))


# ---------------------------------------------------------------------------------------------
# Selectors

_SEL_SPLIT = re.compile(r",(?![^()]*\))")


def parse_label_selector(s):
    """labels.Parse subset: k=v, k==v, k!=v, k, !k, k in (a,b), k notin (a,b). Returns a
    predicate over a labels dict; raises ApiError 400 on syntax errors."""
    reqs = []
    for part in _SEL_SPLIT.split(s or ""):
        part = part.strip()
        if not part:
            continue
        m = re.match(r"^([^\s!=()]+)\s+(in|notin)\s+\(([^)]*)\)$", part)
        if m:
            vals = {v.strip() for v in m.group(3).split(",")}
            reqs.append((m.group(1), m.group(2), vals))
            continue
        m = re.match(r"^([^\s!=()]+)\s*(==|=|!=)\s*([^\s!=(),]*)$", part)
        if m:
            reqs.append((m.group(1), "!=" if m.group(2) == "!=" else "=", {m.group(3)}))
            continue
        m = re.match(r"^(!?)\s*([^\s!=()]+)$", part)
        if m:
            reqs.append((m.group(2), "!" if m.group(1) else "exists", None))
            continue
        raise err_bad_request("unable to parse requirement: invalid label selector: %r" % part)

    def match(labels):
        labels = labels or {}
        for key, op, vals in reqs:
            has = key in labels
            if op == "=" and not (has and labels[key] in vals):
                return False
            if op == "in" and not (has and labels[key] in vals):
                return False
            if op in ("!=", "notin") and has and labels[key] in vals:
                return False
            if op == "exists" and not has:
                return False
            if op == "!" and has:
                return False
        return True
    return match if reqs else None


def field_value(obj, path):
    cur = obj
    for p in path.split("."):
        if not isinstance(cur, dict) or p not in cur:
            return ""
        cur = cur[p]
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return "" if cur is None else str(cur)


FIELD_SELECTABLE = {
    "pods": {"metadata.name", "metadata.namespace", "spec.nodeName", "spec.restartPolicy",
             "spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
             "status.podIP", "status.nominatedNodeName"},
    "nodes": {"metadata.name", "spec.unschedulable"},
    "resourceslices": {"spec.driver", "spec.nodeName", "spec.pool.name"},
}


def parse_field_selector(s, res):
    reqs = []
    for part in (s or "").split(","):
        part = part.strip()
        if not part:
            continue
        m = re.match(r"^([A-Za-z0-9_.]+)\s*(==|=|!=)\s*(.*)$", part)
        if not m:
            raise err_bad_request("invalid selector: '%s'; can't understand '%s'" % (s, part))
        key = m.group(1)
        allowed = FIELD_SELECTABLE.get(res[2], set()) | {"metadata.name", "metadata.namespace"}
        if key not in allowed:
            raise err_bad_request('field label not supported: %s' % key)
        reqs.append((key, m.group(2) != "!=", m.group(3)))

    def match(obj):
        for key, eq, val in reqs:
            if (field_value(obj, key) == val) != eq:
                return False
        return True
    return match if reqs else None


# ---------------------------------------------------------------------------------------------
# Patches

def merge_patch(target, patch):
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def strategic_merge_patch(target, patch, path=""):
    """Strategic merge patch for the built-in fields the double knows (SMP_MERGE_KEYS); other
    lists are replaced. $patch: delete in merge-key lists and $setElementOrder/$retainKeys
    directives are understood (the latter two are accepted and ignored)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if patch.get("$patch") == "delete":
        return None
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if k.startswith("$setElementOrder/") or k in ("$retainKeys", "$patch"):
            continue
        if k.startswith("$deleteFromPrimitiveList/"):
            name = k.split("/", 1)[1]
            if isinstance(out.get(name), list):
                out[name] = [x for x in out[name] if x not in v]
            continue
        sub = (path + "." + k) if path else k
        if v is None:
            out.pop(k, None)
        elif isinstance(v, list) and sub in SMP_MERGE_KEYS and isinstance(out.get(k), list):
            key = SMP_MERGE_KEYS[sub]
            cur = list(out[k])
            if key is None:
                for item in v:
                    if item not in cur:
                        cur.append(item)
            else:
                for item in v:
                    if not isinstance(item, dict):
                        raise err_bad_request("unable to find merge key %s in %r" % (key, item))
                    idx = next((i for i, c in enumerate(cur)
                                if isinstance(c, dict) and c.get(key) == item.get(key)), None)
                    if item.get("$patch") == "delete":
                        if idx is not None:
                            del cur[idx]
                    elif idx is None:
                        cur.append({a: b for a, b in item.items() if b is not None})
                    else:
                        cur[idx] = strategic_merge_patch(cur[idx], item, sub)
            out[k] = cur
        elif isinstance(v, dict):
            r = strategic_merge_patch(out.get(k), v, sub)
            if r is None:
                out.pop(k, None)
            else:
                out[k] = r
        else:
            out[k] = copy.deepcopy(v)
    return out


def _pointer(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise err_patch_apply("invalid JSON pointer %r" % path)
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _resolve(doc, parts, op, path):
    cur = doc
    for p in parts[:-1]:
        if isinstance(cur, dict) and p in cur:
            cur = cur[p]
        elif isinstance(cur, list) and p.isdigit() and int(p) < len(cur):
            cur = cur[int(p)]
        else:
            raise err_patch_apply('%s operation does not apply: doc is missing path: "%s": missing value'
                                  % (op, path))
    return cur


def json_patch(doc, ops):
    """RFC 6902 JSON patch; failures are the API server's 422."""
    if not isinstance(ops, list):
        raise err_bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    if len(ops) > 10000:
        raise ApiError(413, status_body(413, "RequestEntityTooLarge",
                                        "The request is too large: too many patch operations"))
    doc = copy.deepcopy(doc)
    for op in ops:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise err_patch_apply("invalid JSON patch operation %r" % (op,))
        kind, path = op["op"], op["path"]
        parts = _pointer(path)
        if kind == "move" or kind == "copy":
            src = _pointer(op.get("from", ""))
            sp = _resolve(doc, src, kind, op.get("from", ""))
            val = _get_child(sp, src[-1], kind, op.get("from", "")) if src else doc
            val = copy.deepcopy(val)
            if kind == "move":
                _remove_child(sp, src[-1], kind, op.get("from", ""))
            doc = _add(doc, parts, val, kind, path)
            continue
        if not parts:
            if kind in ("add", "replace"):
                doc = copy.deepcopy(op.get("value"))
                continue
            raise err_patch_apply("%s operation on the root is not supported" % kind)
        parent = _resolve(doc, parts, kind, path)
        last = parts[-1]
        if kind == "add":
            if "value" not in op:
                raise err_patch_apply("add operation missing value")
            doc = _add(doc, parts, copy.deepcopy(op["value"]), kind, path)
        elif kind == "remove":
            _remove_child(parent, last, kind, path)
        elif kind == "replace":
            _get_child(parent, last, kind, path)
            if isinstance(parent, list):
                parent[int(last)] = copy.deepcopy(op.get("value"))
            else:
                parent[last] = copy.deepcopy(op.get("value"))
        elif kind == "test":
            if _get_child(parent, last, kind, path) != op.get("value"):
                raise err_patch_apply("testing value %s failed: test failed" % path)
        else:
            raise err_patch_apply("Unexpected kind: %s" % kind)
    return doc


def _get_child(parent, last, op, path):
    if isinstance(parent, dict) and last in parent:
        return parent[last]
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        return parent[int(last)]
    raise err_patch_apply('%s operation does not apply: doc is missing path: "%s": missing value'
                          % (op, path))


def _remove_child(parent, last, op, path):
    _get_child(parent, last, op, path)
    if isinstance(parent, list):
        del parent[int(last)]
    else:
        del parent[last]


def _add(doc, parts, val, op, path):
    if not parts:
        return val
    parent = _resolve(doc, parts, op, path)
    last = parts[-1]
    if isinstance(parent, dict):
        parent[last] = val
    elif isinstance(parent, list):
        if last == "-":
            parent.append(val)
        elif last.isdigit() and int(last) <= len(parent):
            parent.insert(int(last), val)
        else:
            raise err_patch_apply('add operation does not apply: doc is missing path: "%s": missing value'
                                  % path)
    else:
        raise err_patch_apply('add operation does not apply: doc is missing path: "%s": missing value' % path)
    return doc


# ---------------------------------------------------------------------------------------------
# TLS material

def make_tls(directory, hosts=("127.0.0.1", "::1", "localhost", "kubernetes.default.svc"),
             client_cn="gpulabel-test"):
    """Generates a CA, a server certificate for hosts and a client certificate (CN=client_cn)
    with the openssl CLI into directory. Returns a dict of paths: ca, ca_key, cert, key,
    client_cert, client_key."""
    os.makedirs(directory, exist_ok=True)
    p = lambda n: os.path.join(directory, n)  # noqa: E731

    def run(*args):
        subprocess.run(["openssl"] + list(args), check=True, capture_output=True)

    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run("req", "-x509", *ec, "-keyout", p("ca.key"), "-out", p("ca.crt"), "-days", "3",
        "-subj", "/CN=fake-apiserver-ca", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    san = ",".join(("IP:" if re.match(r"^[0-9.:]+$", h) else "DNS:") + h for h in hosts)
    with open(p("server.ext"), "w") as f:
        f.write("subjectAltName=%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n" % san)
    with open(p("client.ext"), "w") as f:
        f.write("basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n")
    for name, subj in (("server", "/CN=fake-apiserver"), ("client", "/CN=" + client_cn)):
        run("req", *ec, "-keyout", p(name + ".key"), "-out", p(name + ".csr"), "-subj", subj)
        run("x509", "-req", "-in", p(name + ".csr"), "-CA", p("ca.crt"), "-CAkey", p("ca.key"),
            "-CAcreateserial", "-out", p(name + ".crt"), "-days", "3", "-extfile", p(name + ".ext"))
    return {"ca": p("ca.crt"), "ca_key": p("ca.key"), "cert": p("server.crt"), "key": p("server.key"),
            "client_cert": p("client.crt"), "client_key": p("client.key")}


# ---------------------------------------------------------------------------------------------
# The server

class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-apiserver/1"
    disable_nagle_algorithm = True  # headers and body go out in separate writes

    def log_message(self, fmt, *args):  # quiet: tests read .requests instead
        pass

    def setup(self):
        super().setup()
        self.run_gen = self.server.api._run_gen  # stop() ends the watches of older runs
        self.server.api._track(self.connection, True)

    def finish(self):
        try:
            super().finish()
        finally:
            self.server.api._track(self.connection, False)

    def do_GET(self):
        self.server.api._dispatch(self, "GET")

    def do_POST(self):
        self.server.api._dispatch(self, "POST")

    def do_PUT(self):
        self.server.api._dispatch(self, "PUT")

    def do_PATCH(self):
        self.server.api._dispatch(self, "PATCH")

    def do_DELETE(self):
        self.server.api._dispatch(self, "DELETE")


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def handle_error(self, request, client_address):
        pass  # TLS handshake failures and dropped clients are part of the tests



class _Server6(_Server):
    address_family = socket.AF_INET6


class FakeApiServer:
    """In-process Kubernetes API server double.

    api = FakeApiServer(tls=True, tokens=["t0"]); api.start(); ... api.stop()
    See docs/testing.md for the whole surface (objects, faults, RBAC, watch history)."""

    def __init__(self, tls=True, tokens=("test-token",), host="127.0.0.1", port=0,
                 user="system:serviceaccount:gpu:labeler", history=100000, tls_dir=None,
                 bookmark_interval=1.0):
        self.tls = tls
        self.tokens = set(tokens) if tokens is not None else None
        self.client_cert_auth = True
        self.user = user
        self.host = host
        self.port = port
        self.history_max = history
        self.bookmark_interval = bookmark_interval
        self.requests = []
        self.log_requests = True  # False: keep no request log (long benchmark runs)
        # a list at resourceVersion=0 is answered from the watch cache, whole, as
        # kube-apiserver's cacher does (computeListLimit ignores the limit); False: as a
        # resource without a cache, from storage in pages of the limit
        self.watch_cache = True
        self._own_tls_dir = None
        if tls:
            if tls_dir is None:
                tls_dir = self._own_tls_dir = tempfile.mkdtemp(prefix="fake-apiserver-tls-")
            self.tls_files = make_tls(tls_dir)
        else:
            self.tls_files = None
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._store = {res: {} for res in RESOURCES}
        self._sorted_keys = {res: None for res in RESOURCES}
        self._rv = 1
        self._events = []   # (rv, type, res, obj, old_obj), ordered by rv
        self._event_rvs = []
        self._compacted_rv = 0  # watches and continue tokens older than this expire
        self._faults = []
        self._delays = []
        self._trickles = []
        self._endless = []
        self._holds = []
        self._held = 0          # requests waiting in a hold now
        self._release_gen = 0   # bumped by release(): held requests go on
        self._hold_cv = threading.Condition(self._lock)
        self.in_flight = 0      # requests (not watches) being answered now, come since reset()
        self.max_in_flight = 0  # the most at once since the start or reset()
        self._flight_gen = 0    # bumped by reset(): requests from before it no longer count
        self.review_tokens = {}    # TokenReview: token -> user ({"username", "groups", ...})
        self.review_allowed = set()  # SubjectAccessReview: (username, verb, path) allowed
        self._forbidden = set()
        self._conns = set()
        self._run_gen = 0       # bumped by stop(): live watches end
        self._expire_gen = 0    # bumped by compact(close_watches=True): live watches get 410
        self._force_bookmark = 0.0
        self._compact_epoch = 0  # continue tokens from an older epoch expire
        self._httpd = None
        self._thread = None

    # ---- lifecycle -------------------------------------------------------------------------

    def start(self):
        cls = _Server6 if ":" in self.host else _Server
        self._httpd = cls((self.host, self.port), _Handler, bind_and_activate=True)
        self._httpd.api = self
        if self.tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(self.tls_files["cert"], self.tls_files["key"])
            ctx.load_verify_locations(self.tls_files["ca"])
            ctx.verify_mode = ssl.CERT_OPTIONAL
            self._httpd.socket = ctx.wrap_socket(self._httpd.socket, server_side=True,
                                                 do_handshake_on_connect=False)
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self):
        """Stops listening and closes every live connection and watch."""
        if not self._httpd:
            return
        with self._cond:
            self._run_gen += 1
            self._cond.notify_all()
            self._release_locked()
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join(5)
        self._httpd = None

    def restart(self, keep_history=True):
        """stop() then start() on the same port; objects are kept, and the event history unless
        keep_history is False: then, as kube-apiserver's watch cache after a restart while
        etcd's revision moved on (writes to other kinds), it begins past every resourceVersion
        handed out, and a watch resumed from any of them gets 410."""
        self.stop()
        if not keep_history:
            with self._cond:
                self._rv += 1
            self.compact()
        self.start()

    def close(self):
        self.stop()
        if self._own_tls_dir:
            shutil.rmtree(self._own_tls_dir, ignore_errors=True)
            self._own_tls_dir = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    @property
    def url(self):
        host = "[%s]" % self.host if ":" in self.host else self.host
        return "%s://%s:%d" % ("https" if self.tls else "http", host, self.port)

    @property
    def ca_file(self):
        return self.tls_files["ca"] if self.tls_files else None

    def ca_pem(self):
        with open(self.tls_files["ca"], "rb") as f:
            return f.read()

    def write_kubeconfig(self, path, token="test-token", ca="data", insecure=False, client_cert=False,
                         token_file=None, server=None, namespace="default"):
        """Writes a kubeconfig for this server. ca: "data" (certificate-authority-data), "file"
        (certificate-authority path) or None. client_cert=True uses client-certificate-data/
        client-key-data instead of a token. Returns path."""
        lines = ["apiVersion: v1", "kind: Config", "clusters:", "- name: fake", "  cluster:",
                 "    server: %s" % (server or self.url)]
        if self.tls and ca == "data":
            lines.append("    certificate-authority-data: %s" % base64.b64encode(self.ca_pem()).decode())
        elif self.tls and ca == "file":
            lines.append("    certificate-authority: %s" % self.tls_files["ca"])
        if insecure:
            lines.append("    insecure-skip-tls-verify: true")
        lines += ["users:", "- name: fake", "  user:"]
        user = []
        if token:
            user.append("    token: %s" % token)
        if token_file:
            user.append("    tokenFile: %s" % token_file)
        if client_cert:
            for key, f in (("client-certificate-data", "client_cert"), ("client-key-data", "client_key")):
                with open(self.tls_files[f], "rb") as fh:
                    user.append("    %s: %s" % (key, base64.b64encode(fh.read()).decode()))
        if not user:
            lines[-1] = "  user: {}"
        lines += user
        lines += ["contexts:", "- name: fake", "  context:", "    cluster: fake", "    user: fake",
                  "    namespace: %s" % namespace, "current-context: fake", ""]
        with open(path, "w") as f:
            f.write("\n".join(lines))
        return path

    # ---- test control ----------------------------------------------------------------------

    def set_tokens(self, *tokens):
        """Replaces the accepted bearer tokens (for rotation tests)."""
        with self._lock:
            self.tokens = set(tokens)

    def reset(self, tokens=("test-token",)):
        """Back to an empty store with no faults, denials or logged requests; accepted tokens
        set to `tokens`. The resourceVersion keeps counting up."""
        with self._cond:
            for res in self._store:
                self._store[res].clear()
                self._sorted_keys[res] = None
            self._forbidden.clear()
            self._faults = []
            self._delays = []
            self._trickles = []
            self._endless = []
            self.review_tokens = {}
            self.review_allowed = set()
            self.requests = []
            self.in_flight = self.max_in_flight = 0
            self._flight_gen += 1
            self._release_locked()
            self.tokens = set(tokens) if tokens is not None else None
            self.watch_cache = True
            self.compact()

    def clear_requests(self):
        with self._lock:
            self.requests = []

    def inject(self, method, path_regex, status, times=1, retry_after=None, message=None, reason=None,
               raw=None, query=None):
        """The next `times` requests (None: all) whose method matches (or "*") and whose path
        matches path_regex (re.search) get `status` with a Status body; with query, only those
        whose query parameters include each of its keys (a value of None: any value). status 0
        drops the connection without an answer. raw (bytes) replaces the body as is (malformed
        answers)."""
        with self._lock:
            self._faults.append({"method": method, "re": re.compile(path_regex), "status": status,
                                 "times": times, "retry_after": retry_after, "message": message,
                                 "reason": reason, "raw": raw, "query": query})

    def delay(self, method, path_regex, seconds, times=1):
        """The next `times` matching requests wait `seconds` before being served."""
        with self._lock:
            self._delays.append({"method": method, "re": re.compile(path_regex), "seconds": seconds,
                                 "times": times})

    def trickle(self, method, path_regex, interval=1.0, times=1):
        """The next `times` matching requests (None: all) are answered as usual, but the body
        goes out one byte every `interval` seconds: a server (or a proxy) that stalls without
        ever going quiet, which no low-speed limit catches. The answer stops when the client
        goes away or the server stops."""
        with self._lock:
            self._trickles.append({"method": method, "re": re.compile(path_regex),
                                   "interval": interval, "times": times})

    def endless(self, path_regex, item_bytes=200, times=None):
        """LIST requests matching path_regex answer a page of `limit` (default 500) new objects
        with a continue token, whatever continue they bring: a list that never ends. Pods are
        bound to node "endless" (so a scheduler keeps them); each object carries an annotation
        of item_bytes bytes."""
        with self._lock:
            self._endless.append({"method": "GET", "re": re.compile(path_regex),
                                  "item_bytes": item_bytes, "times": times, "page": 0})

    def hold(self, method, path_regex, times=None):
        """The next `times` matching requests (None: all, until release()) wait before they are
        served, until release(): what a test needs to see requests in flight at once."""
        with self._lock:
            self._holds.append({"method": method, "re": re.compile(path_regex), "times": times})

    def held(self):
        """How many requests wait in a hold now."""
        with self._lock:
            return self._held

    def wait_held(self, n, timeout=20.0):
        """Until n requests wait in a hold at once; False when timeout passes first."""
        end = time.monotonic() + timeout
        with self._lock:
            while self._held < n:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._hold_cv.wait(left)
            return True

    def release(self):
        """The held requests are served, and the holds end."""
        with self._lock:
            self._release_locked()

    def _release_locked(self):
        self._holds = []
        self._release_gen += 1
        self._hold_cv.notify_all()

    def _wait_release(self):
        with self._lock:
            gen = self._release_gen
            self._held += 1
            self._hold_cv.notify_all()
            while self._release_gen == gen:
                self._hold_cv.wait()
            self._held -= 1

    def set_reviews(self, tokens=None, allowed=()):
        """TokenReview (POST /apis/authentication.k8s.io/v1/tokenreviews) and
        SubjectAccessReview (.../authorization.k8s.io/v1/subjectaccessreviews) as the API server
        answers a delegating component: tokens maps a bearer token to the user it stands for
        ({"username": ..., "groups": [...]}; any other token is not authenticated); allowed holds
        the (username, verb, path) of non-resource requests that are allowed. The token of a
        TokenReview is never recorded in `requests`."""
        with self._lock:
            self.review_tokens = dict(tokens or {})
            self.review_allowed = set(allowed)

    def clear_faults(self):
        with self._lock:
            self._faults = []
            self._delays = []
            self._trickles = []
            self._endless = []
            self._release_locked()

    def forbid(self, verb, resource):
        """RBAC denial: verb (get/list/watch/create/update/patch/delete) on resource ("nodes",
        "pods/binding", "leases.coordination.k8s.io"...) answers 403 Forbidden."""
        with self._lock:
            self._forbidden.add((verb, resource))

    def allow(self, verb, resource):
        with self._lock:
            self._forbidden.discard((verb, resource))

    def compact(self, close_watches=False):
        """Drops the event history: watches from any RV seen so far and continue tokens issued
        so far now expire (410 / ERROR event). close_watches=True also ends every live watch
        with the ERROR event, as if its position had been compacted away."""
        with self._cond:
            self._compacted_rv = self._rv
            self._compact_epoch += 1
            if close_watches:
                self._expire_gen += 1
            self._events = []
            self._event_rvs = []
            self._cond.notify_all()

    @property
    def resource_version(self):
        return self._rv

    def _resolve_kind(self, kind):
        k = kind.lower()
        for res, (knd, _) in RESOURCES.items():
            full = gr_name(res)
            if k in (full, knd.lower() + ("." + res[0] if res[0] else "")):
                return res
        for res, (knd, _) in RESOURCES.items():
            if k in (res[2], knd.lower()):
                return res
        raise KeyError("unknown kind %r" % kind)

    def _res_of(self, obj):
        api = obj.get("apiVersion", "v1")
        group, _, version = api.rpartition("/")
        for res, (knd, _) in RESOURCES.items():
            if res[0] == group and res[1] == version and knd == obj.get("kind"):
                return res
        raise KeyError("unknown apiVersion/kind %s/%s" % (api, obj.get("kind")))

    def add(self, obj):
        """Creates or replaces an object (by apiVersion/kind, namespace, name) as a write: new
        resourceVersion, ADDED/MODIFIED event. Returns the stored copy."""
        res = self._res_of(obj)
        obj = copy.deepcopy(obj)
        md = obj.setdefault("metadata", {})
        if RESOURCES[res][1]:
            md.setdefault("namespace", "default")
        with self._cond:
            key = (md.get("namespace", ""), md["name"])
            old = self._store[res].get(key)
            if old:
                md["uid"] = old["metadata"]["uid"]
                md["creationTimestamp"] = old["metadata"]["creationTimestamp"]
                md.pop("resourceVersion", None)
                return copy.deepcopy(self._write(res, key, obj, old, "MODIFIED"))
            self._fill_new(res, obj)
            return copy.deepcopy(self._write(res, key, obj, None, "ADDED"))

    def add_many(self, objs):
        for o in objs:
            self.add(o)

    def get(self, kind, name, ns=None):
        """A copy of the stored object, or None. kind: "nodes", "Pod", "leases", ...; events:
        "events" (core/v1) or "events.events.k8s.io"."""
        res = self._resolve_kind(kind)
        if RESOURCES[res][1] and ns is None:
            ns = "default"
        with self._lock:
            o = self._store[res].get((ns or "", name))
            return copy.deepcopy(o) if o else None

    def list(self, kind, ns=None):
        res = self._resolve_kind(kind)
        with self._lock:
            return [copy.deepcopy(o) for (n, _), o in sorted(self._store[res].items())
                    if ns is None or n == ns]

    def delete(self, kind, name, ns=None):
        res = self._resolve_kind(kind)
        if RESOURCES[res][1] and ns is None:
            ns = "default"
        with self._cond:
            return self._delete(res, (ns or "", name))

    def bookmark(self):
        """Wakes every watch so those that asked for bookmarks get one now."""
        with self._cond:
            self._force_bookmark = time.monotonic()
            self._cond.notify_all()

    # ---- storage ---------------------------------------------------------------------------

    def _fill_new(self, res, obj):
        kind, _ = RESOURCES[res]
        obj["kind"] = kind
        obj["apiVersion"] = (res[0] + "/" if res[0] else "") + res[1]
        md = obj["metadata"]
        md["uid"] = str(uuid.uuid4())
        md["creationTimestamp"] = now_rfc3339()
        md.pop("resourceVersion", None)
        if res[2] == "pods":
            spec = obj.setdefault("spec", {})
            spec.setdefault("schedulerName", "default-scheduler")
            obj.setdefault("status", {}).setdefault("phase", "Pending")

    def _write(self, res, key, obj, old, etype):
        """Stores obj (caller holds the lock); obj must not be mutated afterwards."""
        self._rv += 1
        obj["metadata"]["resourceVersion"] = str(self._rv)
        if old is None:
            self._sorted_keys[res] = None
        self._store[res][key] = obj
        self._record(etype, res, obj, old)
        return obj

    def _delete(self, res, key):
        old = self._store[res].pop(key, None)
        if old is None:
            return None
        self._sorted_keys[res] = None
        self._rv += 1
        gone = dict(old)
        gone["metadata"] = dict(old["metadata"], resourceVersion=str(self._rv))
        self._record("DELETED", res, gone, old)
        return gone

    def _record(self, etype, res, obj, old):
        self._events.append((self._rv, etype, res, obj, old))
        self._event_rvs.append(self._rv)
        if len(self._events) > 2 * self.history_max:
            drop = len(self._events) - self.history_max
            self._compacted_rv = self._events[drop - 1][0]
            del self._events[:drop]
            del self._event_rvs[:drop]
        self._cond.notify_all()

    def _keys_sorted(self, res):
        keys = self._sorted_keys[res]
        if keys is None:
            keys = self._sorted_keys[res] = sorted(self._store[res])
        return keys

    # ---- HTTP dispatch ---------------------------------------------------------------------

    def _track(self, conn, add):
        with self._lock:
            if add:
                self._conns.add(conn)
            else:
                self._conns.discard(conn)

    def _read_body(self, h):
        if h.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(h.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while h.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += h.rfile.read(size)
                h.rfile.readline()
        n = int(h.headers.get("Content-Length") or 0)
        return h.rfile.read(n) if n else b""

    def _send_json(self, h, code, body, headers=None, raw=None):
        data = raw if raw is not None else json.dumps(body, separators=(",", ":")).encode()
        h.send_response(code)
        h.send_header("Content-Type", "application/json")
        # like kube-apiserver (APIResponseCompression): gzip answers over 128 KiB when asked
        if len(data) > 128 * 1024 and "gzip" in h.headers.get("Accept-Encoding", ""):
            data = gzip.compress(data, compresslevel=1)
            h.send_header("Content-Encoding", "gzip")
            if getattr(h, "log_entry", None) is not None:
                h.log_entry["gzip"] = True
        h.send_header("Content-Length", str(len(data)))
        h.send_header("Cache-Control", "no-cache, private")
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        # one write for head and body: no small-packet round trip per response
        h._headers_buffer.append(b"\r\n" + data)
        h.flush_headers()

    def _endless_page(self, rule, path, query):
        with self._lock:
            rule["page"] += 1
            page = rule["page"]
        kind = path.rstrip("/").rsplit("/", 1)[-1]
        limit = int(query.get("limit") or 500)
        pad = "x" * rule["item_bytes"]
        items = []
        for i in range(limit):
            name = "endless-%d-%d" % (page, i)
            o = {"metadata": {"name": name, "uid": "uid-%s" % name, "resourceVersion": "1",
                              "annotations": {"pad": pad}}}
            if kind == "pods":
                o["metadata"]["namespace"] = "default"
                o["spec"] = {"nodeName": "endless", "containers": [{"name": "c", "image": "x"}]}
                o["status"] = {"phase": "Running"}
            items.append(o)
        return {"kind": "List", "apiVersion": "v1",
                "metadata": {"resourceVersion": str(self._rv), "continue": "endless-%d" % page},
                "items": items}

    def _send_trickle(self, h, code, body, interval):
        data = json.dumps(body, separators=(",", ":")).encode()
        gen = self._run_gen
        try:
            h.send_response(code)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.flush()
            for i in range(len(data)):
                if self._run_gen != gen:
                    break
                h.wfile.write(data[i:i + 1])
                h.wfile.flush()
                time.sleep(interval)
        except OSError:
            pass
        h.close_connection = True

    def _user_of(self, h):
        """Authenticates: a client certificate (CN) or a bearer token. None when neither."""
        if self.tls and self.client_cert_auth:
            try:
                cert = h.connection.getpeercert()
            except (ValueError, AttributeError):
                cert = None
            if cert:
                for rdn in cert.get("subject", ()):
                    for k, v in rdn:
                        if k == "commonName":
                            return v
        if self.tokens is None:
            return self.user
        auth = h.headers.get("Authorization", "")
        if auth.startswith("Bearer ") and auth[7:].strip() in self.tokens:
            return self.user
        return None

    def _dispatch(self, h, method):
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(h.path).query)
        counted = query.get("watch", [""])[0] not in ("1", "true")
        with self._lock:
            gen = self._flight_gen
            if counted:
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            self._serve(h, method)
        finally:
            with self._lock:
                if counted and gen == self._flight_gen:
                    self.in_flight -= 1

    def _serve(self, h, method):
        t = time.monotonic()
        parsed = urllib.parse.urlsplit(h.path)
        path = parsed.path
        query = {k: v[0] for k, v in urllib.parse.parse_qs(parsed.query, keep_blank_values=True).items()}
        try:
            raw = self._read_body(h)
        except (ValueError, OSError):
            h.close_connection = True
            return
        ctype = h.headers.get("Content-Type", "") or ""
        body = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
        logged = body
        if isinstance(body, dict) and body.get("kind") == "TokenReview":
            logged = json.loads(json.dumps(body))
            logged.get("spec", {})["token"] = "(redacted)"
        entry = {"method": method, "path": path, "query": query, "content_type": ctype.split(";")[0].strip(),
                 "body": logged, "user_agent": h.headers.get("User-Agent", ""), "time": t,
                 "peer": "%s:%d" % h.client_address[:2], "gzip": False,
                 "authenticated": False}
        h.log_entry = entry
        with self._lock:
            if self.log_requests:
                self.requests.append(entry)
            hold = self._match_rule(self._holds, method, path)
            delay = self._match_rule(self._delays, method, path)
            fault = self._match_rule(self._faults, method, path, query)
            trickle = self._match_rule(self._trickles, method, path)
            endless = (self._match_rule(self._endless, method, path)
                       if "watch" not in query else None)
        if hold:
            self._wait_release()
        if delay:
            time.sleep(delay["seconds"])
        try:
            if fault:
                if fault["status"] == 0:
                    h.close_connection = True
                    try:
                        h.connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    return
                code = fault["status"]
                if fault["raw"] is not None:
                    self._send_json(h, code, None, raw=fault["raw"])
                    return
                reason, msg = DEFAULT_REASONS.get(code, ("", "injected fault"))
                headers = {}
                if fault["retry_after"] is not None:
                    headers["Retry-After"] = str(fault["retry_after"])
                raise ApiError(code, status_body(code, fault["reason"] or reason, fault["message"] or msg,
                                                 retry_after=fault["retry_after"]), headers)
            user = self._user_of(h)
            if user is None:
                raise ApiError(401, status_body(401, "Unauthorized", "Unauthorized"))
            entry["authenticated"] = True
            if endless:
                code, out, headers = 200, self._endless_page(endless, path, query), {}
            else:
                code, out, headers = self._route(h, method, path, query, ctype, raw, body, user)
            if code is None:
                return  # streamed (watch)
            if trickle:
                self._send_trickle(h, code, out, trickle["interval"])
                return
            self._send_json(h, code, out, headers)
        except ApiError as e:
            try:
                self._send_json(h, e.code, e.body, e.headers)
            except OSError:
                h.close_connection = True
        except OSError:
            h.close_connection = True

    @staticmethod
    def _match_rule(rules, method, path, query=None):
        for r in rules:
            if r["method"] not in ("*", method) or not r["re"].search(path):
                continue
            if any(k not in (query or {}) or (v is not None and query[k] != v)
                   for k, v in (r.get("query") or {}).items()):
                continue
            if r["times"] is not None:
                r["times"] -= 1
                if r["times"] <= 0:
                    rules.remove(r)
            return r
        return None

    def _route(self, h, method, path, query, ctype, raw, body, user):
        if method == "POST" and path == "/apis/authentication.k8s.io/v1/tokenreviews":
            with self._lock:
                u = self.review_tokens.get(((body or {}).get("spec") or {}).get("token"))
            status = {"authenticated": True, "user": u} if u else {"user": {}, "error": "invalid bearer token"}
            return 201, {"kind": "TokenReview", "apiVersion": "authentication.k8s.io/v1", "metadata": {},
                         "spec": {}, "status": status}, None
        if method == "POST" and path == "/apis/authorization.k8s.io/v1/subjectaccessreviews":
            spec = (body or {}).get("spec") or {}
            nra = spec.get("nonResourceAttributes") or {}
            with self._lock:
                ok = (spec.get("user"), nra.get("verb"), nra.get("path")) in self.review_allowed
            return 201, {"kind": "SubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
                         "metadata": {}, "spec": spec, "status": {"allowed": ok}}, None
        if path in ("/version", "/healthz", "/readyz", "/livez"):
            if path == "/version":
                return 200, {"major": "1", "minor": "36", "gitVersion": "v1.36.0-fake",
                             "platform": "linux/amd64"}, None
            return 200, "ok", None
        segs = [urllib.parse.unquote(s) for s in path.strip("/").split("/")]
        if len(segs) >= 2 and segs[0] == "api" and segs[1] == "v1":
            group, version, rest = "", "v1", segs[2:]
        elif len(segs) >= 3 and segs[0] == "apis":
            group, version, rest = segs[1], segs[2], segs[3:]
        else:
            raise ApiError(404, status_body(404, "NotFound", "the server could not find the requested resource"))
        ns = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            ns, rest = rest[1], rest[2:]
        if not rest:
            raise ApiError(404, status_body(404, "NotFound", "the server could not find the requested resource"))
        res = (group, version, rest[0])
        if res not in RESOURCES or len(rest) > 3:
            raise ApiError(404, status_body(404, "NotFound", "the server could not find the requested resource"))
        namespaced = RESOURCES[res][1]
        if ns is not None and not namespaced:
            raise ApiError(404, status_body(404, "NotFound", "the server could not find the requested resource"))
        name = rest[1] if len(rest) >= 2 else None
        sub = rest[2] if len(rest) == 3 else None
        if sub and not ((sub == "status" and res in HAS_STATUS) or (sub == "binding" and res[2] == "pods")):
            raise ApiError(404, status_body(404, "NotFound", "the server could not find the requested resource"))
        if namespaced and name is not None and ns is None:
            raise ApiError(404, status_body(404, "NotFound", "the server could not find the requested resource"))

        watch = query.get("watch") in ("1", "true")
        verb = {"GET": "watch" if watch else ("get" if name else "list"), "POST": "create",
                "PUT": "update", "PATCH": "patch", "DELETE": "delete" if name else "deletecollection"}[method]
        if sub == "binding" and method != "POST":
            raise ApiError(405, status_body(405, "MethodNotAllowed",
                                            "the server does not allow this method on the requested resource"))
        self._authorize(user, verb, res, sub, name, ns)

        if method == "GET" and not name:
            self._check_list_options(query, watch)
        if method == "GET" and watch:
            self._watch(h, res, ns, query)
            return None, None, None
        if method == "GET" and name:
            with self._lock:
                o = self._store[res].get((ns or "", name))
                if o is None:
                    raise err_not_found(res, name)
                return 200, o, None
        if method == "GET":
            return 200, self._list(res, ns, query), None
        if method == "POST" and sub == "binding":
            return self._bind(res, ns, name, body)
        if method == "POST":
            if name:
                raise ApiError(405, status_body(405, "MethodNotAllowed",
                                                "the server does not allow this method on the requested resource"))
            return self._create(res, ns, body)
        if method == "PUT":
            if not name:
                raise ApiError(405, status_body(405, "MethodNotAllowed",
                                                "the server does not allow this method on the requested resource"))
            return self._update(res, ns, name, sub, body)
        if method == "PATCH":
            if not name:
                raise ApiError(405, status_body(405, "MethodNotAllowed",
                                                "the server does not allow this method on the requested resource"))
            return self._patch(res, ns, name, sub, ctype, raw, query)
        if method == "DELETE":
            if not name:
                raise ApiError(405, status_body(405, "MethodNotAllowed",
                                                "the server does not allow this method on the requested resource"))
            with self._cond:
                gone = self._delete(res, (ns or "", name))
            if gone is None:
                raise err_not_found(res, name)
            return 200, gone, None
        raise ApiError(405, status_body(405, "MethodNotAllowed", "the server does not allow this method"))

    def _authorize(self, user, verb, res, sub, name, ns):
        resource = res[2] + ("/" + sub if sub else "")
        with self._lock:
            denied = {(verb, resource), (verb, gr_name(res) + ("/" + sub if sub else "")), ("*", resource)}
            if not (denied & self._forbidden):
                return
        scope = 'in the namespace "%s"' % ns if ns else "at the cluster scope"
        why = 'User "%s" cannot %s resource "%s" in API group "%s" %s' % (user, verb, resource, res[0], scope)
        head = '%s "%s"' % (gr_name(res), name) if name else gr_name(res)
        raise ApiError(403, status_body(403, "Forbidden", "%s is forbidden: %s" % (head, why),
                                        name=name, kind=res[2], group=res[0] or None))

    # ---- list ------------------------------------------------------------------------------

    def _selectors(self, res, query):
        lsel = parse_label_selector(query.get("labelSelector", ""))
        fsel = parse_field_selector(query.get("fieldSelector", ""), res)

        def match(o):
            if lsel and not lsel(o.get("metadata", {}).get("labels")):
                return False
            if fsel and not fsel(o):
                return False
            return True
        return match if (lsel or fsel) else None

    @staticmethod
    def _check_list_options(query, watch):
        """ListOptions validation the API server does before anything else (422s)."""
        rvm = query.get("resourceVersionMatch")
        if "sendInitialEvents" in query:
            if not watch:
                raise ApiError(422, status_body(422, "Invalid", "sendInitialEvents: Forbidden: "
                                                "sendInitialEvents is forbidden for list"))
            if rvm != "NotOlderThan":
                raise ApiError(422, status_body(422, "Invalid", "resourceVersionMatch: Forbidden: "
                                                "sendInitialEvents requires setting resourceVersionMatch "
                                                "to NotOlderThan"))
        elif rvm and not query.get("resourceVersion"):
            raise ApiError(422, status_body(422, "Invalid", "resourceVersionMatch: Forbidden: "
                                            "resourceVersionMatch is forbidden unless resourceVersion "
                                            "is provided"))
        if rvm not in (None, "", "Exact", "NotOlderThan"):
            raise ApiError(422, status_body(422, "Invalid", 'resourceVersionMatch: Unsupported value: "%s": '
                                            'supported values: "Exact", "NotOlderThan"' % rvm))
        for k in ("limit", "timeoutSeconds"):
            if query.get(k) and not query[k].isdigit():
                raise err_bad_request("%s: invalid value %r" % (k, query[k]))

    def _list(self, res, ns, query):
        match = self._selectors(res, query)
        limit = int(query.get("limit") or 0)
        cont = query.get("continue") or ""
        rv_param = query.get("resourceVersion") or ""
        if rv_param == "0" and not cont and self.watch_cache:
            limit = 0
        with self._lock:
            list_rv = self._rv
            start_key = None
            # resourceVersion=N served exactly (with limit, or resourceVersionMatch=Exact):
            # history older than the compaction point is gone
            exact = rv_param not in ("", "0") and (limit or query.get("resourceVersionMatch") == "Exact")
            if exact and not cont:
                if not rv_param.isdigit():
                    raise err_bad_request("resourceVersion: Invalid value: %r: must be an integer" % rv_param)
                if int(rv_param) < self._compacted_rv:
                    raise err_expired("too old resource version: %s (%d)" % (rv_param, self._compacted_rv + 1))
            if cont:
                try:
                    tok = json.loads(base64.urlsafe_b64decode(cont.encode()).decode())
                    list_rv, start_key, epoch = int(tok["rv"]), tuple(tok["start"]), tok["epoch"]
                except (ValueError, KeyError, TypeError):
                    raise err_bad_request("continue key is not valid: invalid continue token")
                if list_rv < self._compacted_rv or epoch != self._compact_epoch:
                    raise err_expired(CONTINUE_EXPIRED_MSG)
            store = self._store[res]
            keys = self._keys_sorted(res)
            i = bisect.bisect_right(keys, start_key) if start_key else 0
            items = []
            next_key = None
            while i < len(keys):
                k = keys[i]
                i += 1
                if ns is not None and k[0] != ns:
                    continue
                o = store[k]
                if match and not match(o):
                    continue
                items.append({a: b for a, b in o.items() if a not in ("kind", "apiVersion")})
                if limit and len(items) >= limit:
                    next_key = k
                    break
            md = {"resourceVersion": str(list_rv)}
            if next_key is not None and i < len(keys):
                md["continue"] = base64.urlsafe_b64encode(
                    json.dumps({"rv": list_rv, "start": list(next_key),
                                "epoch": self._compact_epoch}).encode()).decode()
                if not match and ns is None:
                    md["remainingItemCount"] = len(keys) - i
        kind = RESOURCES[res][0]
        return {"kind": kind + "List", "apiVersion": (res[0] + "/" if res[0] else "") + res[1],
                "metadata": md, "items": items}

    # ---- writes ----------------------------------------------------------------------------

    def _need_object(self, body):
        if not isinstance(body, dict):
            raise err_bad_request("the body of the request could not be decoded as a JSON object")
        return body

    def _create(self, res, ns, body):
        obj = copy.deepcopy(self._need_object(body))
        md = obj.setdefault("metadata", {})
        kind = RESOURCES[res][0]
        if obj.get("kind") not in (None, kind):
            raise err_bad_request("the API version in the data (%s) does not match the expected API version"
                                  % obj.get("apiVersion"))
        if RESOURCES[res][1]:
            if md.get("namespace") not in (None, "", ns):
                raise err_bad_request("the namespace of the provided object does not match the namespace "
                                      "sent on the request")
            md["namespace"] = ns
        if not md.get("name") and md.get("generateName"):
            md["name"] = md["generateName"] + "".join(random.choice("bcdfghjklmnpqrstvwxz2456789")
                                                      for _ in range(5))
        if not md.get("name"):
            raise err_invalid(res, kind, "", [{"field": "metadata.name",
                                               "message": "Required value: name or generateName is required"}])
        if res == ("events.k8s.io", "v1", "events"):
            self._validate_event(res, obj)
        with self._cond:
            key = (ns or "", md["name"])
            if key in self._store[res]:
                raise err_already_exists(res, md["name"])
            self._fill_new(res, obj)
            return 201, self._write(res, key, obj, None, "ADDED"), None

    def _validate_event(self, res, obj):
        causes = []
        for f in ("eventTime", "reportingController", "reportingInstance", "action", "reason"):
            if not obj.get(f):
                causes.append({"field": f, "message": "Required value"})
        if obj.get("type") not in ("Normal", "Warning"):
            causes.append({"field": "type", "reason": "FieldValueNotSupported",
                           "message": 'Unsupported value: "%s": supported values: "Normal", "Warning"'
                           % (obj.get("type") or "")})
        if len(obj.get("note") or "") > 1024:
            causes.append({"field": "note", "message": "Too long: may not be more than 1024 bytes"})
        if causes:
            raise err_invalid(res, "Event", obj["metadata"]["name"], causes)

    def _finish_update(self, res, old, new, sub):
        """Applies subresource rules and immutable fields; returns the object to store."""
        md = new.setdefault("metadata", {})
        omd = old["metadata"]
        for k in ("name", "namespace", "uid", "creationTimestamp"):
            if k in omd:
                md[k] = omd[k]
            else:
                md.pop(k, None)
        new["kind"], new["apiVersion"] = old["kind"], old["apiVersion"]
        if res in HAS_STATUS:
            if sub == "status":
                fixed = dict(old)
                fixed["status"] = new.get("status", {})
                fixed["metadata"] = dict(omd, resourceVersion=md.get("resourceVersion", omd["resourceVersion"]))
                new = fixed
            elif "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)
        return new

    def _update(self, res, ns, name, sub, body):
        obj = copy.deepcopy(self._need_object(body))
        with self._cond:
            key = (ns or "", name)
            old = self._store[res].get(key)
            if old is None:
                raise err_not_found(res, name)
            bname = obj.get("metadata", {}).get("name")
            if bname and bname != name:
                raise err_bad_request("the name of the object (%s) does not match the name on the URL (%s)"
                                      % (bname, name))
            rv = obj.get("metadata", {}).get("resourceVersion")
            if rv and rv != old["metadata"]["resourceVersion"]:
                raise err_conflict(res, name)
            new = self._finish_update(res, old, obj, sub)
            return 200, self._commit(res, key, old, new), None

    def _commit(self, res, key, old, new):
        new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
        if new == old:
            return old  # no-op writes do not bump the resourceVersion
        return self._write(res, key, new, old, "MODIFIED")

    def _patch(self, res, ns, name, sub, ctype, raw, query):
        ct = ctype.split(";")[0].strip().lower()
        kinds = ("application/json-patch+json", "application/merge-patch+json",
                 "application/strategic-merge-patch+json", "application/apply-patch+yaml")
        if ct not in kinds:
            raise ApiError(415, status_body(415, "UnsupportedMediaType", UNSUPPORTED_MEDIA_MSG))
        if ct == "application/apply-patch+yaml":
            if not query.get("fieldManager"):
                raise ApiError(422, status_body(422, "Invalid", "fieldManager: Required value: is required "
                                                "for apply patch"))
        elif "force" in query:
            raise ApiError(422, status_body(422, "Invalid", "force: Forbidden: may not be specified for "
                                            "non-apply patch"))
        try:
            patch = json.loads(raw or b"null")
        except ValueError as e:
            raise err_bad_request("error decoding patch: %s" % e)
        if ct != "application/json-patch+json" and not isinstance(patch, dict):
            raise err_bad_request("error decoding patch: json: cannot unmarshal into Go value of type map")
        with self._cond:
            key = (ns or "", name)
            old = self._store[res].get(key)
            if old is None:
                if ct == "application/apply-patch+yaml" and not sub:
                    obj = copy.deepcopy(patch)
                    obj.setdefault("metadata", {})["name"] = name
                    if ns:
                        obj["metadata"]["namespace"] = ns
                    self._fill_new(res, obj)
                    return 201, self._write(res, key, obj, None, "ADDED"), None
                raise err_not_found(res, name)
            if ct == "application/json-patch+json":
                new = json_patch(old, patch)
                if not isinstance(new, dict):
                    raise err_patch_apply("patched object is not a JSON object")
            elif ct == "application/strategic-merge-patch+json":
                new = strategic_merge_patch(old, patch)
            else:
                # apply is approximated by a merge patch: fields are never removed by omission
                new = merge_patch(old, patch)
            rv = (new.get("metadata") or {}).get("resourceVersion")
            if rv and rv != old["metadata"]["resourceVersion"]:
                raise err_conflict(res, name)
            new = self._finish_update(res, old, copy.deepcopy(new), sub)
            return 200, self._commit(res, key, old, new), None

    def _bind(self, res, ns, name, body):
        body = self._need_object(body)
        bname = (body.get("metadata") or {}).get("name")
        if bname != name:
            raise err_bad_request("name in URL does not match name in Binding object")
        target = body.get("target") or {}
        if target.get("kind") not in (None, "", "Node"):
            raise ApiError(500, status_body(500, "", "target.kind: Invalid value: \"%s\": must be empty "
                                            "or 'Node'" % target.get("kind")))
        if not target.get("name"):
            raise ApiError(500, status_body(500, "", "target.name: Required value"))
        with self._cond:
            key = (ns, name)
            old = self._store[res].get(key)
            if old is None:
                raise err_not_found(res, name)
            if old["metadata"].get("deletionTimestamp"):
                raise err_conflict(res, name, "pod %s is being deleted, cannot be assigned to a host" % name,
                                   what="pods/binding")
            bound = (old.get("spec") or {}).get("nodeName")
            if bound:
                raise err_conflict(res, name, 'pod %s is already assigned to node "%s"' % (name, bound),
                                   what="pods/binding")
            new = copy.deepcopy(old)
            new.setdefault("spec", {})["nodeName"] = target["name"]
            ann = (body.get("metadata") or {}).get("annotations")
            if ann:
                new["metadata"].setdefault("annotations", {}).update(ann)
            conds = new.setdefault("status", {}).setdefault("conditions", [])
            conds[:] = [c for c in conds if c.get("type") != "PodScheduled"]
            conds.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                          "lastTransitionTime": now_rfc3339()})
            self._write(res, key, new, old, "MODIFIED")
        return 201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}, None

    # ---- watch -----------------------------------------------------------------------------

    def _watch(self, h, res, ns, query):
        match = self._selectors(res, query)
        bookmarks = query.get("allowWatchBookmarks") in ("1", "true")
        initial = query.get("sendInitialEvents") in ("1", "true")
        timeout = query.get("timeoutSeconds")
        deadline = time.monotonic() + (float(timeout) if timeout else 1800.0)
        rv_param = query.get("resourceVersion") or ""
        kind = RESOURCES[res][0]
        api_version = (res[0] + "/" if res[0] else "") + res[1]

        def visible(o):
            if o is None:
                return False
            if ns is not None and o["metadata"].get("namespace") != ns:
                return False
            return match(o) if match else True

        def chunk(data):
            h.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

        def event(etype, obj):
            chunk(json.dumps({"type": etype, "object": obj}, separators=(",", ":")).encode() + b"\n")

        def bookmark(rv, annotations=None):
            md = {"resourceVersion": str(rv)}
            if annotations:
                md["annotations"] = annotations
            event("BOOKMARK", {"kind": kind, "apiVersion": api_version, "metadata": md})

        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Transfer-Encoding", "chunked")
        h.send_header("Cache-Control", "no-cache, private")
        h.end_headers()
        try:
            with self._lock:
                snapshot = None
                if rv_param in ("", "0") or initial:
                    pos = self._rv
                    snapshot = [o for k, o in sorted(self._store[res].items()) if visible(o)]
                else:
                    try:
                        pos = int(rv_param)
                    except ValueError:
                        pos = -1
                    if pos < self._compacted_rv:
                        event("ERROR", status_body(410, "Expired", "too old resource version: %s (%d)"
                                                   % (rv_param, self._compacted_rv + 1)))
                        chunk(b"")
                        h.close_connection = True
                        return
                run_gen, expire_gen = h.run_gen, self._expire_gen
            for o in snapshot or ():
                event("ADDED", o)
            if initial and bookmarks:
                bookmark(pos, {"k8s.io/initial-events-end": "true"})
            last_bookmark = time.monotonic()
            h.wfile.flush()
            while True:
                now = time.monotonic()
                if now >= deadline:
                    break
                with self._cond:
                    i = bisect.bisect_right(self._event_rvs, pos)
                    if (i >= len(self._events) and run_gen == self._run_gen
                            and expire_gen == self._expire_gen and self._force_bookmark <= last_bookmark):
                        self._cond.wait(min(0.25, deadline - now))
                        i = bisect.bisect_right(self._event_rvs, pos)
                    if run_gen != self._run_gen:
                        break
                    expired = pos < self._compacted_rv or expire_gen != self._expire_gen
                    batch = [] if expired else self._events[i:i + 1000]
                    forced = self._force_bookmark > last_bookmark
                if expired:
                    st = status_body(410, "Expired", "too old resource version: %d (%d)"
                                     % (pos, self._compacted_rv + 1))
                    event("ERROR", st)
                    break
                for rv, etype, eres, obj, old in batch:
                    pos = rv
                    if eres != res:
                        continue
                    now_in, was_in = visible(obj), visible(old)
                    if etype == "DELETED":
                        if was_in:
                            event("DELETED", obj)
                    elif now_in and (was_in or etype == "ADDED"):
                        event(etype, obj)
                    elif now_in:
                        event("ADDED", obj)
                    elif was_in:
                        event("DELETED", obj)
                if bookmarks and (forced or time.monotonic() - last_bookmark >= self.bookmark_interval):
                    bookmark(pos)
                    last_bookmark = time.monotonic()
                h.wfile.flush()
            chunk(b"")
            h.wfile.flush()
        except OSError:
            pass
        h.close_connection = True


# ---------------------------------------------------------------------------------------------
# Standalone mode (benchmarks, manual poking)

def load_state(path):
    with open(path) as f:
        data = json.load(f)
    if isinstance(data, dict) and "items" in data:
        return data["items"]
    if isinstance(data, dict):
        return [data]
    return data


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Kubernetes API server test double (nodes, pods, events, leases, priorityclasses; "
                    "list/watch/patch/binding with kube-apiserver's wire format).",
        epilog="Prints 'READY <url>' on stdout once serving; runs until SIGINT/SIGTERM. "
               "--dump-state writes all objects as a v1 List at exit.")
    ap.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    ap.add_argument("--port", type=int, default=0, help="port (0: pick a free one)")
    ap.add_argument("--state", action="append", default=[],
                    help="JSON file with objects to load: a List ({items:[...]}), an array or one object")
    ap.add_argument("--plain-http", action="store_true", help="serve HTTP instead of HTTPS")
    ap.add_argument("--token", action="append", default=None,
                    help="accepted bearer token (repeatable; default test-token)")
    ap.add_argument("--no-auth", action="store_true", help="accept every request")
    ap.add_argument("--tls-dir", help="where to generate the CA and certificates (default: a temp dir)")
    ap.add_argument("--print-kubeconfig", metavar="PATH",
                    help="write a kubeconfig for this server to PATH (and print its path)")
    ap.add_argument("--history", type=int, default=100000, help="watch events retained (default 100000)")
    ap.add_argument("--dump-state", metavar="PATH", help="write every object to PATH at exit")
    ap.add_argument("--log-requests", metavar="PATH",
                    help="write the request log (JSON lines, never tokens) to PATH at exit; "
                         "without it no log is kept")
    a = ap.parse_args(argv)
    tokens = None if a.no_auth else (a.token or ["test-token"])
    api = FakeApiServer(tls=not a.plain_http, tokens=tokens, host=a.host, port=a.port,
                        history=a.history, tls_dir=a.tls_dir)
    api.log_requests = bool(a.log_requests)
    for path in a.state:
        for obj in load_state(path):
            api.add(obj)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())  # before READY: callers may stop us at once
    signal.signal(signal.SIGINT, lambda *_: done.set())
    api.start()
    if a.print_kubeconfig:
        api.write_kubeconfig(a.print_kubeconfig, token=(tokens or [None])[0])
        print("KUBECONFIG %s" % a.print_kubeconfig, flush=True)
    print("READY %s" % api.url, flush=True)
    while not done.wait(0.5):
        pass
    api.stop()
    if a.log_requests:
        with open(a.log_requests, "w") as f:
            for r in api.requests:
                f.write(json.dumps(r) + "\n")
    if a.dump_state:
        items = []
        for res in RESOURCES:
            items += api.list(gr_name(res))
        with open(a.dump_state, "w") as f:
            json.dump({"kind": "List", "apiVersion": "v1", "items": items}, f)
    api.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
