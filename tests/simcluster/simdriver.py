"""What the simulated cluster's drivers (loop.py, canary.py, calibrate_heldout.py) share: where the
build puts what they run (`make build`) and the JDK the plugin and the command line run on, the
check that it is all there, the verdict lines, and the spelling of a byte size the nccl-tuner
command line prints ("32 KiB", "1 MiB", "4 B")."""
import os

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.join(REPO, "build")
SIM = os.path.join(BUILD, "tests", "simcluster")
JAR = os.path.join(BUILD, "lib", "nccl-tuner-tools.jar")  # the nccl-tuner command line
PLUGIN = os.path.join(BUILD, "lib", "libnccl-tuner-java.so")
JAVA_HOME = os.environ.get("JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64")
JAVA = os.path.join(JAVA_HOME, "bin", "java")


def build_missing(name, *more):
    """Whether one of SIM, JAR, PLUGIN, JAVA and the paths more (after SIM) is missing; if so it says
    "NAME: PATH is missing (make build first)"; the drivers then exit 2."""
    for p in (SIM,) + more + (JAR, PLUGIN, JAVA):
        if not os.path.exists(p):
            print("%s: %s is missing (make build first)" % (name, p))
            return True
    return False


def verdict(name, failures, work):
    """The end of a run: each failure as "NAME: FAIL: ..." and where the outputs are kept, then 1; or
    "NAME: ok (outputs in WORK)", then 0 (the exit status)."""
    if failures:
        for f in failures:
            print("%s: FAIL: %s" % (name, f))
        print("%s: outputs kept in %s" % (name, work))
        return 1
    print("%s: ok (outputs in %s)" % (name, work))
    return 0


def fmt_size(n):
    """n bytes in the largest binary unit that divides it: 32768 -> "32 KiB"."""
    for unit, s in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= s and n % s == 0:
            return "%d %s" % (n // s, unit)
    return "%d B" % n
