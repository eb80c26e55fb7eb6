"""Shared helpers for integration tests: where the binaries are, running them."""
import os
import subprocess

SRC = os.environ.get("GPULABEL_SRCDIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("GPULABEL_BUILD") or os.path.join(SRC, "build")


def binary(name):
    """Absolute path of a built binary (gpulabel, gpusched, ...)."""
    return os.path.join(BUILD, name)


def fake_nvml():
    """Absolute path of the fake libnvidia-ml.so.1 test double."""
    return os.path.join(BUILD, "fake-nvml", "libnvidia-ml.so.1")


def run(args, env=None, timeout=60, input=None):
    """Run a command; return CompletedProcess with text stdout/stderr."""
    e = dict(os.environ)
    if env:
        e.update(env)
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=e, input=input)


def check_eq(got, want, what=""):
    if got != want:
        raise AssertionError("%s: got %r, want %r" % (what or "value", got, want))


# The Kubernetes API server double (tests/apiserver/fake_apiserver.py) is importable as
# `from fake_apiserver import FakeApiServer` once this module is imported.
import sys as _sys  # noqa: E402
_sys.path.insert(0, os.path.join(SRC, "tests", "apiserver"))
