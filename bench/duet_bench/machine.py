"""What every result carries: machine, versions, CPU governor and
frequencies, load and steal, and whether it ran in a VM or under an
emulator (where figures are not timings)."""
import glob
import os
import platform
import re
import shutil
import struct
import subprocess
import sys


def _run(argv):
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=10,
                           stdin=subprocess.DEVNULL)
        return (r.stdout + r.stderr).strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def _dpkg(pkg):
    """pkg's version for this machine's architecture: with a foreign one
    installed too (multiarch: the arm64 cross build's libraries), dpkg
    lists both, and their versions ran together ("1.15-11.15-1")."""
    if not shutil.which("dpkg-query"):
        return None
    out = _run(["dpkg-query", "-W", "-f=${Architecture} ${Version}\n", pkg])
    if not out or "no packages" in out:
        return None
    native = _run(["dpkg", "--print-architecture"])
    found = [line.split(" ", 1) for line in out.splitlines() if " " in line]
    for arch, version in found:
        if arch in (native, "all"):
            return version
    return found[0][1] if found else None


def machine():
    model = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    if not model:
        model = arm_cpu_model()
    mem = None
    try:
        with open("/proc/meminfo") as f:
            mem = int(f.readline().split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    virt = virtualization()
    return {"cpu_model": model or platform.processor() or "unknown",
            "cores": os.cpu_count(), "kernel": platform.release(),
            "arch": platform.machine(), "mem_mib": mem,
            "virtualization": virt["summary"], "virt": virt,
            "emulation": virt["emulation"], "cpufreq": cpufreq(),
            "loadavg": loadavg(), "steal": steal_since_boot(),
            "sched_autogroup": sched_autogroup()}


def sched_autogroup():
    """"on", "off" or "unavailable": whether the kernel's scheduler
    shares CPU time between sessions before threads. duet_launch starts
    every process of a stack in a session of its own, so with it on, a
    saturated CPU is shared per process (an llvmpipe client with 3 threads
    gets what a one-thread server gets), and beside other work each of a
    stack's processes weighs as much as a whole session of that work."""
    value = read_text("/proc/sys/kernel/sched_autogroup_enabled")
    return {"1": "on", "0": "off"}.get(value, "unavailable")


# Arm Ltd's CPU part numbers (/proc/cpuinfo "CPU part" with implementer 0x41).
ARM_PARTS = {0xc07: "Cortex-A7", 0xc09: "Cortex-A9", 0xc0f: "Cortex-A15", 0xc0e: "Cortex-A17",
             0xd03: "Cortex-A53", 0xd04: "Cortex-A35", 0xd05: "Cortex-A55",
             0xd07: "Cortex-A57", 0xd08: "Cortex-A72", 0xd09: "Cortex-A73",
             0xd0a: "Cortex-A75", 0xd0b: "Cortex-A76", 0xd0c: "Neoverse-N1",
             0xd0d: "Cortex-A77", 0xd41: "Cortex-A78", 0xd46: "Cortex-A510",
             0xd47: "Cortex-A710"}


def arm_cpu_model():
    """ARM kernels name no CPU model in /proc/cpuinfo: the board (device
    tree model) and the cores' part numbers say it, e.g. "Hardkernel
    ODROID-U3 board based on Exynos4412; 4x Cortex-A9"."""
    parts = []
    implementer = None
    for line in (read_text("/proc/cpuinfo") or "").splitlines():
        key, _, val = line.partition(":")
        key, val = key.strip().lower(), val.strip()
        try:
            if key == "cpu implementer":
                implementer = int(val, 16)
            elif key == "cpu part":
                n = int(val, 16)
                parts.append(ARM_PARTS.get(n, "part 0x%x" % n) if implementer == 0x41
                             else "implementer 0x%x part 0x%x" % (implementer or 0, n))
        except ValueError:
            pass
    board = (read_text("/proc/device-tree/model") or "").rstrip("\0")
    cores = ", ".join("%dx %s" % (parts.count(p), p) for p in dict.fromkeys(parts))
    return "; ".join(x for x in (board, cores) if x) or None


def read_text(path):
    """A small file's text, stripped, or None where it cannot be read."""
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _int(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def governor():
    """cpu0's governor, or "unavailable"; every CPU's is in cpufreq()."""
    return read_text("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor") or "unavailable"


def cpufreq():
    """Governor and current/min/max kHz of every CPU from sysfs; where the
    kernel exposes no cpufreq (VMs, containers), "unavailable" and the
    MHz /proc/cpuinfo shows, which is then the host's nominal figure."""
    cpus = []
    for d in sorted(glob.glob("/sys/devices/system/cpu/cpu[0-9]*"),
                    key=lambda p: int(re.sub(r"\D", "", os.path.basename(p)) or 0)):
        f = os.path.join(d, "cpufreq")
        if not os.path.isdir(f):
            continue
        cpus.append({"cpu": os.path.basename(d),
                     "governor": read_text(os.path.join(f, "scaling_governor")),
                     "cur_khz": _int(read_text(os.path.join(f, "scaling_cur_freq"))),
                     "min_khz": _int(read_text(os.path.join(f, "scaling_min_freq"))),
                     "max_khz": _int(read_text(os.path.join(f, "scaling_max_freq"))),
                     "hw_min_khz": _int(read_text(os.path.join(f, "cpuinfo_min_freq"))),
                     "hw_max_khz": _int(read_text(os.path.join(f, "cpuinfo_max_freq")))})
    if cpus:
        return {"status": "ok", "cpus": cpus}
    mhz = []
    for line in (read_text("/proc/cpuinfo") or "").splitlines():
        if line.lower().startswith("cpu mhz"):
            try:
                mhz.append(float(line.split(":", 1)[1]))
            except ValueError:
                pass
    return {"status": "unavailable", "why": "no /sys/devices/system/cpu/cpu*/cpufreq",
            "cpuinfo_mhz": mhz}


def cpufreq_now():
    """Per CPU governor and min/cur/max kHz now, in short, for every job's
    samples (cpufreq() is the run's full record): {"governor": [...],
    "min_khz": [...], "cur_khz": [...], "max_khz": [...]} in CPU order, or
    {"status": "unavailable", "cpuinfo_mhz": [...]} without cpufreq."""
    f = cpufreq()
    if f["status"] != "ok":
        return {"status": "unavailable", "cpuinfo_mhz": f.get("cpuinfo_mhz", [])}
    return {k: [c.get(k) for c in f["cpus"]] for k in ("governor", "min_khz", "cur_khz",
                                                        "max_khz")}


def loadavg():
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def cpu_ticks():
    """(steal, total) jiffies of all CPUs from /proc/stat, or None."""
    line = (read_text("/proc/stat") or "").split("\n", 1)[0].split()
    if not line or line[0] != "cpu":
        return None
    vals = [int(x) for x in line[1:9]]  # user..steal; guest is inside user
    while len(vals) < 8:
        vals.append(0)
    return vals[7], sum(vals)


def steal_pct(before, after):
    """Share of CPU time the hypervisor took between two cpu_ticks()."""
    if not before or not after or after[1] <= before[1]:
        return None
    return round(100.0 * (after[0] - before[0]) / (after[1] - before[1]), 3)


def steal_since_boot():
    t = cpu_ticks()
    return {"pct": steal_pct((0, 0), t), "ticks": t[0] if t else None} if t else None


# ------------------------------------------------------------ VMs and emulators
def _elf_header(path):
    try:
        with open(path, "rb") as f:
            return f.read(64)
    except OSError:
        return b""


def binfmt_emulator(exe=None):
    """The binfmt_misc interpreter (qemu-user and the like) whose magic
    matches our own interpreter's ELF header: the kernel then runs this
    process through it. None when no enabled entry matches."""
    head = _elf_header(exe or os.path.realpath(sys.executable))
    if len(head) < 20:
        return None
    for entry in glob.glob("/proc/sys/fs/binfmt_misc/*"):
        if os.path.basename(entry) in ("register", "status"):
            continue
        text = read_text(entry) or ""
        if not text.startswith("enabled"):
            continue
        fields = dict(line.split(" ", 1) for line in text.splitlines()[1:] if " " in line)
        try:
            magic = bytes.fromhex(fields.get("magic", ""))
            mask = bytes.fromhex(fields.get("mask", "")) or b"\xff" * len(magic)
            off = int(fields.get("offset", "0"))
        except ValueError:
            continue
        if not magic or len(head) < off + len(magic):
            continue
        if all((head[off + i] & mask[i]) == (magic[i] & mask[i]) for i in range(len(magic))):
            return fields.get("interpreter", os.path.basename(entry))
    return None


def auxv_platform():
    """AT_PLATFORM from /proc/self/auxv as the kernel (or qemu-user, which
    writes its own) gives it, with AT_SYSINFO_EHDR's presence: the vDSO a
    native kernel maps for every process on x86 and arm64, which qemu-user
    leaves out for most guests."""
    data = b""
    try:
        with open("/proc/self/auxv", "rb") as f:
            data = f.read()
    except OSError:
        return None
    word = struct.calcsize("P")
    fmt = "=" + ("Q" if word == 8 else "I") * 2
    keys = {}
    for i in range(0, len(data) - 2 * word + 1, 2 * word):
        k, v = struct.unpack_from(fmt, data, i)
        if k == 0:
            break
        keys[k] = v
    return {"has_vdso": 33 in keys, "entries": len(keys)}


def device_tree_model():
    """The device tree's model and compatible strings ("qemu virt board:
    linux,dummy-virt", "Hardkernel ODROID-U3 board: hardkernel,odroid-u3
    samsung,exynos4412 ..."), or None on a machine without one (x86)."""
    base = "/proc/device-tree"
    if not os.path.isdir(base):
        return None
    model = (read_text(os.path.join(base, "model")) or "").rstrip("\0")
    compat = (read_text(os.path.join(base, "compatible")) or "").split("\0")
    return ("%s: %s" % (model, " ".join(c for c in compat if c))).strip(": ") or None


def virtualization():
    """VM / container / emulator, from every source there is; summary is
    one line for the report."""
    out = {}
    if shutil.which("systemd-detect-virt"):
        out["systemd_detect_virt_vm"] = _run(["systemd-detect-virt", "--vm"]) or None
        out["systemd_detect_virt_container"] = _run(["systemd-detect-virt",
                                                     "--container"]) or None
    dmi = {}
    for k in ("sys_vendor", "product_name", "board_vendor", "bios_vendor"):
        v = read_text("/sys/class/dmi/id/" + k)
        if v:
            dmi[k] = v
    out["dmi"] = dmi or "unavailable"
    cpuinfo = read_text("/proc/cpuinfo") or ""
    out["cpuinfo_hypervisor_flag"] = bool(re.search(r"^flags\s*:.*\bhypervisor\b", cpuinfo,
                                                    re.M))
    out["binfmt_interpreter"] = binfmt_emulator()
    out["auxv"] = auxv_platform()
    out["device_tree"] = device_tree_model()
    vm = out.get("systemd_detect_virt_vm")
    if vm == "none":
        vm = None
    if not vm and out["device_tree"] and "linux,dummy-virt" in out["device_tree"]:
        # qemu's "virt" board (arm, arm64, riscv) has no DMI under a
        # direct kernel boot, and minimal images have no systemd.
        vm = "qemu"
    dmi_text = " ".join(dmi.values()).lower() if dmi else ""
    if not vm:
        for needle, name in (("qemu", "qemu"), ("kvm", "kvm"), ("vmware", "vmware"),
                             ("virtualbox", "oracle"), ("microsoft", "microsoft"),
                             ("xen", "xen"), ("amazon ec2", "amazon")):
            if needle in dmi_text:
                vm = name
                break
    if not vm and out["cpuinfo_hypervisor_flag"]:
        vm = "unknown hypervisor (cpuinfo flag)"
    container = out.get("systemd_detect_virt_container")
    if container == "none":
        container = None
    emulation = None
    if out["binfmt_interpreter"]:
        emulation = "user-mode emulator: %s" % out["binfmt_interpreter"]
    elif out["auxv"] and not out["auxv"]["has_vdso"] and platform.machine() in (
            "x86_64", "aarch64"):
        # binfmt_misc is often not visible inside a container whose host
        # runs it through qemu-user; the missing vDSO still shows.
        emulation = "probably user-mode emulation (no vDSO in /proc/self/auxv)"
    elif vm == "qemu" or "qemu virtual cpu" in cpuinfo.lower() and vm != "kvm":
        # systemd-detect-virt says "kvm" when qemu runs with KVM and "qemu"
        # when it translates every instruction (TCG).
        emulation = "qemu system emulation (TCG, no KVM)"
    # Detection cannot tell every emulator (qemu-system-aarch64 under TCG
    # shows the emulated CPU's own MIDR), and a qemu "virt" board under KVM
    # looks like TCG from inside: whoever starts the machine may say.
    override = os.environ.get("DUET_EMULATION")
    if override is not None:
        out["detected_emulation"] = emulation
        emulation = None if override.strip().lower() in ("", "none", "0", "no") else (
            "%s (declared by DUET_EMULATION)" % override.strip())
    out["override"] = override
    out["vm"] = vm
    out["container"] = container
    out["emulation"] = emulation
    parts = []
    if vm:
        parts.append("VM: " + vm)
    if container:
        parts.append("container: " + container)
    if emulation:
        parts.append("EMULATED: " + emulation)
    out["summary"] = ", ".join(parts) or "none detected"
    return out


def versions():
    v = {}
    v["mesa"] = _dpkg("libegl-mesa0") or _dpkg("libgl1-mesa-dri")
    xv = _run(["Xvfb", "-version"]) if shutil.which("Xvfb") else ""
    m = re.search(r"X\.Org X Server ([\d.]+)", xv)
    v["x_server"] = m.group(1) if m else _dpkg("xvfb")
    wv = _run(["weston", "--version"]) if shutil.which("weston") else ""
    v["weston"] = wv.split()[-1] if wv else None
    v["libwayland"] = _run(["pkg-config", "--modversion", "wayland-server"]) or \
        _dpkg("libwayland-server0")
    v["libxcb"] = _dpkg("libxcb1") or _run(["pkg-config", "--modversion", "xcb"])
    v["openbox"] = _dpkg("openbox")
    v["xcompmgr"] = _dpkg("xcompmgr")
    v["glmark2"] = _dpkg("glmark2-es2-wayland") or _dpkg("glmark2-es2-x11")
    # The peers people switch between, and the Xwayland the Wayland servers host.
    for name, pkg in (("mutter", "mutter"), ("sway", "sway"), ("wlroots", "libwlroots10"),
                      ("i3", "i3-wm"), ("picom", "picom"), ("xwayland", "xwayland")):
        v[name] = _dpkg(pkg)
    v["strace"] = (_run(["strace", "-V"]).splitlines() or [None])[0] \
        if shutil.which("strace") else None
    v["python"] = platform.python_version()
    return v


def render_env():
    return {k: os.environ.get(k) for k in ("GALLIUM_DRIVER", "LIBGL_ALWAYS_SOFTWARE",
                                           "EVAS_GL_NO_BLACKLIST")}
