"""What every result carries: machine, versions, CPU governor."""
import os
import platform
import re
import shutil
import subprocess


def _run(argv):
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=10,
                           stdin=subprocess.DEVNULL)
        return (r.stdout + r.stderr).strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def _dpkg(pkg):
    out = _run(["dpkg-query", "-W", "-f=${Version}", pkg]) if shutil.which("dpkg-query") else ""
    return out if out and "no packages" not in out else None


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
    mem = None
    try:
        with open("/proc/meminfo") as f:
            mem = int(f.readline().split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return {"cpu_model": model or platform.processor() or "unknown",
            "cores": os.cpu_count(), "kernel": platform.release(),
            "arch": platform.machine(), "mem_mib": mem,
            "virtualization": _run(["systemd-detect-virt"]) or "unknown"}


def governor():
    path = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return "unavailable"


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
    v["strace"] = (_run(["strace", "-V"]).splitlines() or [None])[0] \
        if shutil.which("strace") else None
    v["python"] = platform.python_version()
    return v


def render_env():
    return {k: os.environ.get(k) for k in ("GALLIUM_DRIVER", "LIBGL_ALWAYS_SOFTWARE",
                                           "EVAS_GL_NO_BLACKLIST")}
