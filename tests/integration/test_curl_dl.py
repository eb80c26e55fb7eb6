"""libcurl is loaded at run time (src/kube/curl_dl.c), not linked: a mode that never talks to
the API server does not need it, and a client that cannot load it says so in one line.

A directory with a broken libcurl.so.4 first on LD_LIBRARY_PATH stands in for a node without
a usable libcurl: dlopen finds that file and fails on it."""
import os
import subprocess
import tempfile

import util

_tmp = tempfile.mkdtemp(prefix="curl-dl-test-")
KUBECONFIG = os.path.join(_tmp, "kubeconfig")
LOAD_ERROR = ("cannot load libcurl.so.4: %s/libcurl.so.4: invalid ELF header; install libcurl4"
              % os.path.join(_tmp, "lib"))


def _setup():
    os.makedirs(os.path.join(_tmp, "lib"), exist_ok=True)
    with open(os.path.join(_tmp, "lib", "libcurl.so.4"), "wb") as f:
        f.write(b"\0" * 4096)
    with open(KUBECONFIG, "w") as f:
        f.write("apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                "clusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:1'}\n"
                "contexts:\n- name: c\n  context: {cluster: c, user: u}\n"
                "users:\n- name: u\n  user: {token: secret-token}\n")


_setup()


def run(args, **extra):
    """Run a built binary with the broken libcurl first on the search path."""
    return subprocess.run([util.binary(args[0])] + args[1:], capture_output=True, text=True,
                          timeout=30, env=env_without_curl(**extra))


def env_without_curl(**extra):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("GPULABEL_") and k not in ("NODE_NAME", "KUBECONFIG",
                                                         "FAKE_NVML_CONFIG")}
    e["LD_LIBRARY_PATH"] = os.path.join(_tmp, "lib")
    e["HOME"] = _tmp
    e.update(extra)
    return e


def test_oneshot_output_runs_without_libcurl():
    p = run(["gpulabel", "--oneshot", "--output", "-", "--nvml-lib", util.fake_nvml()])
    util.check_eq(p.returncode, 0, "exit status (stderr %r)" % p.stderr)
    if "aliyun.accelerator/nvidia_count=1" not in p.stdout.splitlines():
        raise AssertionError("no count label in %r" % p.stdout)


def test_client_reports_missing_libcurl():
    p = run(["kube-request", "--kubeconfig", KUBECONFIG, "GET", "/api"])
    util.check_eq(p.returncode, 1, "exit status")
    util.check_eq(p.stderr.splitlines(), ["kube-request: " + LOAD_ERROR], "stderr")


def test_daemon_reports_missing_libcurl():
    p = run(["gpulabel", "--nvml-lib", util.fake_nvml(), "--kubeconfig", KUBECONFIG],
            NODE_NAME="gpu-1")
    util.check_eq(p.returncode, 1, "exit status")
    util.check_eq(util.log_message(p.stderr.splitlines()[-1], sev="E"),
                  "cannot set up the API client: " + LOAD_ERROR, "last stderr line")
    if "secret-token" in p.stderr:
        raise AssertionError("token in stderr")
