"""gpulabel --oneshot end to end: the built binary against the fake NVML library.

Each case writes a FAKE_NVML_CONFIG file (format at the top of tests/fake-nvml/fake_nvml.c),
runs build/gpulabel and checks stdout, stderr and the exit status exactly where it matters.
"""
import os
import subprocess
import tempfile

import util

SIMULATED = "gpulabel: using a simulated NVML (test double), not a real GPU driver"
M40 = ["aliyun.accelerator/nvidia_count=1",
       "aliyun.accelerator/nvidia_mem=12209MiB",
       "aliyun.accelerator/nvidia_name=Tesla-M40"]


def gpulabel(args, config=None, env=None, lib=None):
    """Run gpulabel with a clean environment (no NODE_NAME, KUBECONFIG or GPULABEL_*)."""
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("GPULABEL_", "GFD_")) and k not in ("NODE_NAME", "KUBECONFIG", "FAKE_NVML_CONFIG")}
    e["GPULABEL_BUILD"] = util.BUILD
    tmp = None
    if config is not None:
        fd, tmp = tempfile.mkstemp(prefix="fake-nvml-", suffix=".conf")
        with os.fdopen(fd, "w") as f:
            f.write(config)
        e["FAKE_NVML_CONFIG"] = tmp
    if env:
        e.update(env)
    argv = [util.binary("gpulabel")]
    if lib is not False and not any(a.startswith("--nvml-lib") for a in args) \
            and "GPULABEL_NVML_LIB" not in (env or {}):
        argv += ["--nvml-lib", lib or util.fake_nvml()]
    argv += list(args)
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30, env=e)
    finally:
        if tmp:
            os.unlink(tmp)


def lines(s):
    return s.splitlines()


def test_default_demo_device():
    p = gpulabel(["--oneshot", "--output", "-"])
    util.check_eq(p.returncode, 0, "exit status")
    util.check_eq(lines(p.stdout), M40, "stdout")
    util.check_eq(lines(p.stderr), [SIMULATED], "stderr")


def test_oneshot_prints_by_default():
    p = gpulabel(["--oneshot"])
    util.check_eq(p.returncode, 0, "exit status")
    util.check_eq(lines(p.stdout), M40, "stdout")


def test_eight_gpus():
    p = gpulabel(["--oneshot", "-o", "-"], config=(
        "driver=550.107.02\ncuda=12050\n"
        'device name="NVIDIA H100 80GB HBM3" memory=85520809984 cc=9.0 mig=disabled repeat=8\n'))
    util.check_eq(p.returncode, 0, "exit status")
    util.check_eq(lines(p.stdout), [
        "aliyun.accelerator/nvidia_count=8",
        "aliyun.accelerator/nvidia_mem=81559MiB",
        "aliyun.accelerator/nvidia_name=NVIDIA-H100-80GB-HBM3"], "stdout")


def test_zero_gpus_no_labels():
    p = gpulabel(["--oneshot", "-o", "-"], config="driver=550.107.02\n")
    util.check_eq(p.returncode, 0, "exit status")
    util.check_eq(p.stdout, "", "stdout")


def test_invalid_characters_in_name():
    p = gpulabel(["--oneshot", "-o", "-", "--schema", "ack,gfd"], config=(
        'device name="NVIDIA TITAN X (Pascal)" memory=12884901888 cc=6.1\n'
        'device name="Odd/GPU \\xe2\\x84\\xa2 \\xc3\\xa9dition" memory=1048576 cc=6.1\n'))
    util.check_eq(p.returncode, 0, "exit status")
    out = dict(l.split("=", 1) for l in lines(p.stdout))
    util.check_eq(out["aliyun.accelerator/nvidia_name"], "NVIDIA-TITAN-X-Pascal", "ack name")
    util.check_eq(out["nvidia.com/gpu.product"], "NVIDIA-TITAN-X-Pascal", "gfd product")
    util.check_eq(out["aliyun.accelerator/nvidia_count"], "2", "count")
    util.check_eq(out["nvidia.com/gpu.count"], "1", "gfd count of GPU 0's model")


def test_memory_not_supported_omits_mem():
    p = gpulabel(["--oneshot", "-o", "-"], config=(
        'device name="NVIDIA GB10" memory_error=NOT_SUPPORTED cc=12.1\n'))
    util.check_eq(p.returncode, 0, "exit status")
    util.check_eq(lines(p.stdout), [
        "aliyun.accelerator/nvidia_count=1",
        "aliyun.accelerator/nvidia_name=NVIDIA-GB10"], "stdout")


def test_driver_not_loaded():
    p = gpulabel(["--oneshot", "-o", "-"], config="init=DRIVER_NOT_LOADED\n")
    util.check_eq(p.returncode, 1, "exit status")
    util.check_eq(p.stdout, "", "stdout")
    util.check_eq(lines(p.stderr)[-1],
                  "gpulabel: NVML cannot start: the NVIDIA driver is not loaded "
                  "(nvmlInit_v2: Driver Not Loaded)", "stderr")


def test_missing_library():
    p = gpulabel(["--oneshot", "-o", "-", "--nvml-lib", "/nonexistent/libnvidia-ml.so.1"])
    util.check_eq(p.returncode, 1, "exit status")
    util.check_eq(p.stdout, "", "stdout")
    err = lines(p.stderr)
    util.check_eq(len(err), 1, "stderr lines: %r" % err)
    if not err[0].startswith("gpulabel: cannot load NVML library '/nonexistent/libnvidia-ml.so.1': "):
        raise AssertionError("stderr: %r" % err[0])


def test_not_an_nvml_library():
    p = gpulabel(["--oneshot", "--nvml-lib", "libm.so.6"])
    util.check_eq(p.returncode, 1, "exit status")
    err = lines(p.stderr)
    util.check_eq(len(err), 1, "stderr lines: %r" % err)
    if "has no symbol 'nvmlInit_v2'" not in err[0]:
        raise AssertionError("stderr: %r" % err[0])


def test_gpu_lost_never_hides_the_others():
    # the third GPU of four is lost: the other three are labelled, the lost one is named
    p = gpulabel(["--oneshot", "-o", "-", "--schema", "ack,gfd", "--machine-type-file",
                  "/nonexistent"], config=(
        'device name="Tesla V100-SXM2-16GB" memory=17163091968 repeat=2\n'
        'device name="Tesla V100-SXM2-16GB" lost=1\n'
        'device name="Tesla V100-SXM2-16GB" memory=17163091968\n'))
    util.check_eq(p.returncode, 0, "exit status: %s" % p.stderr)
    out = dict(l.split("=", 1) for l in lines(p.stdout))
    util.check_eq(out["aliyun.accelerator/nvidia_count"], "3", "ack count")
    util.check_eq(out["nvidia.com/gpu.count"], "3", "gfd count")
    util.check_eq(out["aliyun.accelerator/nvidia_name"], "Tesla-V100-SXM2-16GB", "name")
    util.check_eq(lines(p.stderr)[-1], "gpulabel: GPU 2 cannot be read: GPU 2: nvmlDeviceGetName: "
                  "GPU is lost; the other GPUs are labelled", "stderr")


def test_every_gpu_lost():
    p = gpulabel(["--oneshot", "-o", "-"], config=(
        'device name="Tesla V100-SXM2-16GB" lost=1 repeat=2\n'))
    util.check_eq(p.returncode, 1, "exit status")
    util.check_eq(p.stdout, "", "stdout: no partial label set")
    util.check_eq(lines(p.stderr)[-1], "gpulabel: every GPU is lost: GPU 0: nvmlDeviceGetName: "
                  "GPU is lost", "stderr")


def test_old_driver_without_optional_symbols():
    old = os.path.join(util.BUILD, "fake-nvml-old", "libnvidia-ml.so.1")
    p = gpulabel(["--oneshot", "-o", "-", "--schema", "ack,gfd",
                  "--machine-type-file", "/nonexistent"], lib=old, config=(
        "driver=384.81\ncuda=9000\n"
        'device name="Tesla P100-PCIE-16GB" memory=17071734784 cc=6.0\n'))
    util.check_eq(p.returncode, 0, "exit status: %s" % p.stderr)
    out = dict(l.split("=", 1) for l in lines(p.stdout))
    util.check_eq(out["aliyun.accelerator/nvidia_name"], "Tesla-P100-PCIE-16GB", "name")
    util.check_eq(out["aliyun.accelerator/nvidia_mem"], "16280MiB", "mem")
    util.check_eq(out["nvidia.com/cuda.driver.major"], "384", "driver major")
    for missing in ("nvidia.com/gpu.family", "nvidia.com/cuda.runtime-version.full"):
        if missing in out:
            raise AssertionError("%s present without the symbol behind it" % missing)
    util.check_eq(out["nvidia.com/mig.capable"], "false", "mig.capable")


def test_schema_ack_gfd():
    with tempfile.TemporaryDirectory() as d:
        machine = os.path.join(d, "product_name")
        with open(machine, "w") as f:
            f.write("PowerEdge XE9680\n")
        p = gpulabel(["--oneshot", "-o", "-", "--schema", "ack,gfd", "--machine-type-file", machine,
                      "--sysfs-root", os.path.join(util.SRC, "tests", "fixtures", "sysfs")],
                     config=("driver=550.107.02\ncuda=12050\n"
                             'device name="NVIDIA A100-SXM4-80GB" memory=85899345920 cc=8.0 '
                             "mig=enabled repeat=2\n"))
    util.check_eq(p.returncode, 0, "exit status")
    util.check_eq(lines(p.stdout), [
        "aliyun.accelerator/nvidia_count=2",
        "aliyun.accelerator/nvidia_mem=81920MiB",
        "aliyun.accelerator/nvidia_name=NVIDIA-A100-SXM4-80GB",
        "nvidia.com/cuda.driver-version.full=550.107.02",
        "nvidia.com/cuda.driver-version.major=550",
        "nvidia.com/cuda.driver-version.minor=107",
        "nvidia.com/cuda.driver-version.revision=02",
        "nvidia.com/cuda.driver.major=550",
        "nvidia.com/cuda.driver.minor=107",
        "nvidia.com/cuda.driver.rev=02",
        "nvidia.com/cuda.runtime-version.full=12.5",
        "nvidia.com/cuda.runtime-version.major=12",
        "nvidia.com/cuda.runtime-version.minor=5",
        "nvidia.com/cuda.runtime.major=12",
        "nvidia.com/cuda.runtime.minor=5",
        "nvidia.com/gpu.compute.major=8",
        "nvidia.com/gpu.compute.minor=0",
        "nvidia.com/gpu.count=2",
        "nvidia.com/gpu.family=ampere",
        "nvidia.com/gpu.machine=PowerEdge-XE9680",
        "nvidia.com/gpu.memory=81920",
        "nvidia.com/gpu.mode=compute",
        "nvidia.com/gpu.present=true",
        "nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB",
        "nvidia.com/gpu.replicas=1",
        "nvidia.com/gpu.sharing-strategy=none",
        "nvidia.com/mig.capable=true",
        "nvidia.com/mps.capable=false"], "stdout")


def test_feature_file_atomic_write():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "gpulabel")
        with open(path, "w") as f:
            f.write("stale=true\n")
        p = gpulabel(["--oneshot", "--feature-file", path])
        util.check_eq(p.returncode, 0, "exit status: %s" % p.stderr)
        util.check_eq(p.stdout, "", "stdout (feature file only)")
        with open(path) as f:
            util.check_eq(f.read(), "\n".join(M40) + "\n", "feature file")
        util.check_eq(sorted(os.listdir(d)), ["gpulabel"], "directory: no dot-file left")


def test_output_to_file_and_feature_file():
    with tempfile.TemporaryDirectory() as d:
        out, ff = os.path.join(d, "labels.txt"), os.path.join(d, "features")
        p = gpulabel(["--oneshot", "--output", out, "--feature-file", ff, "--schema", "ack,gfd",
                      "--machine-type-file", "/nonexistent"])
        util.check_eq(p.returncode, 0, "exit status: %s" % p.stderr)
        util.check_eq(p.stdout, "", "stdout")
        with open(out) as f:
            text = f.read()
        with open(ff) as f:
            util.check_eq(f.read(), text, "feature file == output file")
        util.check_eq(len(text.splitlines()), 28, "ack + gfd label count")
        util.check_eq(sorted(os.listdir(d)), ["features", "labels.txt"], "directory")


def test_feature_file_unwritable_dir():
    p = gpulabel(["--oneshot", "--feature-file", "/nonexistent-dir/gpulabel"])
    util.check_eq(p.returncode, 1, "exit status")
    util.check_eq(lines(p.stderr)[-1],
                  "gpulabel: cannot write '/nonexistent-dir/gpulabel': No such file or directory",
                  "stderr names the file asked for")


# The output files go through base/outfile, gpusched's policy too: a file replaced keeps its
# mode (an administrator's 0640 stays 0640; it used to become 0644), a new one gets 0666 less
# the umask, as any file gpulabel creates would.
def test_feature_file_keeps_its_mode():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "gpulabel")
        with open(path, "w") as f:
            f.write("stale=true\n")
        os.chmod(path, 0o640)
        p = gpulabel(["--oneshot", "--feature-file", path])
        util.check_eq(p.returncode, 0, "exit status: %s" % p.stderr)
        with open(path) as f:
            util.check_eq(f.read(), "\n".join(M40) + "\n", "feature file")
        util.check_eq(oct(os.stat(path).st_mode & 0o7777), oct(0o640), "mode kept")
        fresh = os.path.join(d, "fresh")
        old = os.umask(0o027)
        try:
            p = gpulabel(["--oneshot", "--output", fresh])
        finally:
            os.umask(old)
        util.check_eq(p.returncode, 0, "exit status: %s" % p.stderr)
        util.check_eq(oct(os.stat(fresh).st_mode & 0o7777), oct(0o640), "new file: 0666 & ~umask")
        util.check_eq(sorted(os.listdir(d)), ["fresh", "gpulabel"], "directory: no dot-file left")

# Only a regular file (or a missing one) is replaced atomically by rename: a FIFO, a character
# device or a symlink is not ours to replace.
def test_output_symlink_keeps_the_link_and_updates_its_target():
    with tempfile.TemporaryDirectory() as d:
        target, link = os.path.join(d, "real"), os.path.join(d, "link")
        with open(target, "w") as f:
            f.write("stale=true\n")
        os.symlink("real", link)
        p = gpulabel(["--oneshot", "--feature-file", link])
        util.check_eq(p.returncode, 0, "exit status: %s" % p.stderr)
        util.check_eq(os.path.islink(link), True, "the symlink is still a symlink")
        with open(target) as f:
            util.check_eq(f.read(), "\n".join(M40) + "\n", "the target was written")
        util.check_eq(sorted(os.listdir(d)), ["link", "real"], "directory: no dot-file left")


def test_output_to_a_symlink_to_standard_output_writes_there():
    # as `-o /dev/stdout` does: /dev/stdout is a symlink to /proc/self/fd/1
    with tempfile.TemporaryDirectory() as d:
        link = os.path.join(d, "stdout")
        os.symlink("/proc/self/fd/1", link)
        p = gpulabel(["--oneshot", "--output", link])
        util.check_eq(p.returncode, 0, "exit status: %s" % p.stderr)
        util.check_eq(lines(p.stdout), M40, "stdout")
        util.check_eq(os.readlink(link), "/proc/self/fd/1", "the symlink is untouched")
        util.check_eq(sorted(os.listdir(d)), ["stdout"], "directory: no dot-file left")


def test_output_to_a_fifo_writes_into_it():
    with tempfile.TemporaryDirectory() as d:
        fifo = os.path.join(d, "fifo")
        os.mkfifo(fifo)
        rd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, so the writer need not wait
        try:
            p = gpulabel(["--oneshot", "--output", fifo])
            got = os.read(rd, 65536).decode()
        finally:
            os.close(rd)
        util.check_eq(p.returncode, 0, "exit status: %s" % p.stderr)
        util.check_eq(os.path.exists(fifo) and not os.path.isfile(fifo), True, "still a FIFO")
        util.check_eq(got, "\n".join(M40) + "\n", "what the reader got")


def test_output_to_a_directory_or_dangling_symlink_is_refused():
    with tempfile.TemporaryDirectory() as d:
        sub, dangling = os.path.join(d, "sub"), os.path.join(d, "dangling")
        os.mkdir(sub)
        os.symlink("nowhere", dangling)
        p = gpulabel(["--oneshot", "--output", sub])
        util.check_eq(p.returncode, 1, "exit status")
        util.check_eq(lines(p.stderr)[-1], "gpulabel: cannot write '%s': is a directory" % sub,
                      "stderr")
        p = gpulabel(["--oneshot", "--feature-file", dangling])
        util.check_eq(p.returncode, 1, "exit status")
        util.check_eq(lines(p.stderr)[-1],
                      "gpulabel: cannot write '%s': a symlink to a missing file" % dangling,
                      "stderr")
        util.check_eq(os.path.islink(dangling), True, "the symlink is untouched")



def test_env_var_flags():
    p = gpulabel([], lib=False, env={"GPULABEL_ONESHOT": "true", "GPULABEL_OUTPUT": "-",
                                    "GPULABEL_SCHEMA": "gfd",
                                    "GPULABEL_MACHINE_TYPE_FILE": "/nonexistent",
                                    "GPULABEL_NVML_LIB": util.fake_nvml()})
    util.check_eq(p.returncode, 0, "exit status: %s" % p.stderr)
    keys = [l.split("=", 1)[0] for l in lines(p.stdout)]
    if not keys or not all(k.startswith("nvidia.com/") for k in keys):
        raise AssertionError("want only gfd keys, got %r" % keys)


def test_flags_win_over_env():
    p = gpulabel(["--schema", "ack"], env={"GPULABEL_ONESHOT": "1", "GPULABEL_SCHEMA": "gfd"})
    util.check_eq(p.returncode, 0, "exit status: %s" % p.stderr)
    util.check_eq(lines(p.stdout), M40, "stdout")


def test_node_name_without_sync():
    p = gpulabel(["--oneshot", "--no-sync", "-o", "-"], env={"NODE_NAME": "gpu-node-1"})
    util.check_eq(p.returncode, 0, "exit status: %s" % p.stderr)
    util.check_eq(lines(p.stdout), M40, "stdout")


def usage_error(args, want, env=None):
    def fn():
        p = gpulabel(args, env=env)
        util.check_eq(p.returncode, 2, "exit status")
        util.check_eq(p.stdout, "", "stdout")
        util.check_eq(lines(p.stderr), [want], "stderr")
    return fn


def cases():
    yield ("usage unknown flag", usage_error(["--oneshot", "--bogus"],
           "gpulabel: unknown flag '--bogus' (see gpulabel --help)"))
    yield ("usage unknown flag with value", usage_error(["--bogus=1"],
           "gpulabel: unknown flag '--bogus' (see gpulabel --help)"))
    yield ("usage unknown short flag", usage_error(["-x"],
           "gpulabel: unknown flag '-x' (see gpulabel --help)"))
    yield ("usage positional", usage_error(["--oneshot", "extra"],
           "gpulabel: unexpected argument 'extra' (see gpulabel --help)"))
    yield ("usage bad duration", usage_error(["--sleep-interval", "5x"],
           "gpulabel: --sleep-interval: invalid duration '5x' (want e.g. 30s, 1m30s, 500ms)"))
    yield ("usage bad schema", usage_error(["--schema=nfd"],
           "gpulabel: --schema: unknown schema 'nfd' (want ack, gfd or ack,gfd)"))
    yield ("usage bad verbosity", usage_error(["-v", "loud"],
           "gpulabel: -v: invalid level 'loud' (want 0 to 10)"))
    yield ("usage bad bool", usage_error(["--oneshot=maybe"],
           "gpulabel: --oneshot: invalid boolean 'maybe' (want true or false)"))
    yield ("usage missing value", usage_error(["--oneshot", "--feature-file"],
           "gpulabel: --feature-file: missing value"))
    yield ("usage bad env", usage_error(["--oneshot"],
           "gpulabel: GPULABEL_SLEEP_INTERVAL: invalid duration '1 minute' "
           "(want e.g. 30s, 1m30s, 500ms)", env={"GPULABEL_SLEEP_INTERVAL": "1 minute"}))


def test_help_and_version():
    p = gpulabel(["--help"], lib=False)
    util.check_eq(p.returncode, 0, "exit status")
    for flag in ("--oneshot", "--output", "--feature-file", "--schema", "--nvml-lib", "--node-name",
                 "--kubeconfig", "--sleep-interval", "--machine-type-file", "--no-sync",
                 "GPULABEL_SLEEP_INTERVAL"):
        if flag not in p.stdout:
            raise AssertionError("--help does not mention %s" % flag)
    p = gpulabel(["--version"], lib=False)
    util.check_eq(p.returncode, 0, "exit status")
    if not p.stdout.startswith("gpulabel "):
        raise AssertionError("--version: %r" % p.stdout)
