"""Where things are: duet's own programs in its build trees (the source
tree's, $DUET_BUILD_DIR), the IPC counter library, and scratch directories
in memory for the files the measured processes write."""
import os
import shutil
import tempfile


def build_dirs():
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    dirs = []
    if os.environ.get("DUET_BUILD_DIR"):
        dirs.append(os.environ["DUET_BUILD_DIR"])
    dirs += [os.path.join(here, "build"), os.path.join(os.getcwd(), "build")]
    return dirs


# Where a build keeps bench/'s C probes (bench/probes/meson.build).
PROBES = os.path.join("bench", "probes")


def find_own(name, subdir):
    for d in build_dirs():
        p = os.path.join(d, subdir, name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return os.path.abspath(p)
    return shutil.which(name)


def find_bench_lib(name):
    """The path of one of bench/'s preloaded libraries (libNAME.so) in a
    build, or None."""
    for d in build_dirs():
        p = os.path.join(d, PROBES, "lib%s.so" % name)
        if os.path.isfile(p):
            return os.path.abspath(p)
    return None


def find_ipc_lib():
    return find_bench_lib("duet-ipc-count")


def memory_dir(prefix):
    """A new directory in memory (/dev/shm) where there is one, else in the
    temporary directory. The stacks' traces, logs and Xvfb's framebuffer
    file go there: on a disk the kernel writes such files back every few
    seconds, I/O that the measured processes would pay for."""
    shm = "/dev/shm"
    if os.path.isdir(shm) and os.access(shm, os.W_OK):
        return tempfile.mkdtemp(prefix=prefix, dir=shm)
    return tempfile.mkdtemp(prefix=prefix)
