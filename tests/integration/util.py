"""Shared helpers for integration tests: where the binaries are, running them."""
import os
import re
import shutil
import subprocess
import tempfile
import time

SRC = os.environ.get("GPULABEL_SRCDIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("GPULABEL_BUILD") or os.path.join(SRC, "build")


def binary(name):
    """Absolute path of a built binary (gpulabel, gpusched, ...)."""
    return os.path.join(BUILD, name)


def sanitized(path):
    """Whether the binary at path is an ASan/UBSan build (make check-san): they reserve memory
    of their own, so no bound on their RSS holds."""
    try:
        out = subprocess.run(["ldd", path], capture_output=True, text=True, timeout=30).stdout
    except OSError:
        return False
    return "libasan" in out or "libubsan" in out


def fake_nvml():
    """Absolute path of the fake libnvidia-ml.so.1 test double."""
    return os.path.join(BUILD, "fake-nvml", "libnvidia-ml.so.1")


def run(args, env=None, timeout=60, input=None):
    """Run a command; return CompletedProcess with text stdout/stderr."""
    e = dict(os.environ)
    if env:
        e.update(env)
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=e, input=input)


# a klog-style line of the daemons (src/base/log.h): severity, MMDD, UTC time to the
# microsecond, pid, tag, message
KLOG = re.compile(r"^([IWE])(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6}) +(\d+) ([\w.:-]+)\] (.*)$")


def log_message(line, tag="gpulabel", sev=None):
    """The message of one klog-style log line; raises if line is not one of tag's (or of
    severity sev, when given)."""
    m = KLOG.match(line)
    if not m or m.group(9) != tag or (sev and m.group(1) != sev):
        raise AssertionError("not a %s%s log line: %r" % (tag, " " + sev if sev else "", line))
    return m.group(10)


def wait_for(what, fn, timeout=60, interval=0.05):
    """Polls fn until it returns something true; returns it, or raises naming `what` once
    timeout seconds (an upper bound: nothing asserts how long it took) have passed."""
    end = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > end:
            raise AssertionError("timed out after %ds waiting for %s" % (timeout, what))
        time.sleep(interval)


class TempDir:
    """A directory for one test's files, removed on leaving the with block:

        with util.TempDir("gpusched-cli-") as t:
            path = t.write("nodes.yaml", TEXT)"""

    def __init__(self, prefix="gpulabel-test-"):
        self.prefix = prefix

    def __enter__(self):
        self.path = tempfile.mkdtemp(prefix=self.prefix)
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.path, ignore_errors=True)

    def write(self, name, text):
        """Writes text (UTF-8) to the file name in the directory; its path."""
        path = os.path.join(self.path, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path


def check_eq(got, want, what=""):
    if got != want:
        raise AssertionError("%s: got %r, want %r" % (what or "value", got, want))


# The Kubernetes API server double (tests/apiserver/fake_apiserver.py) is importable as
# `from fake_apiserver import FakeApiServer` once this module is imported.
import sys as _sys  # noqa: E402
_sys.path.insert(0, os.path.join(SRC, "tests", "apiserver"))


class KnownBug(Exception):
    """A test that shows a known bug in src/ (see known_bug)."""


class known_bug:
    """Wraps the assertions of a test that show a bug in src/ not fixed yet:

        with util.known_bug("gpusched ... (issue N)"):
            util.check_eq(got, want, "...")

    A failed assertion inside is reported by tests/run.py as `KNOWN-BUG name: what: why`,
    apart from the failures; once nothing inside fails, the case fails, so that the mark goes
    with the fix. Only the assertions inside are covered: a failure before them is a failure."""

    def __init__(self, what):
        self.what = what

    def __enter__(self):
        return self

    def __exit__(self, typ, e, tb):
        if typ is None:
            raise AssertionError("the known bug no longer shows (%s): remove the known_bug mark"
                                 % self.what)
        if issubclass(typ, AssertionError):
            raise KnownBug("%s: %s" % (self.what, e)) from e
        return False
