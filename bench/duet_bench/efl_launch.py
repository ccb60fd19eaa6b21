"""The launch experiment's app choice (`duet bench --launch-app`): duet's own
duet-launch (the default), or duet-launch-efl, the same launch written
with Elementary (clients/launch-efl.c), the toolkit of the study's apps.

duet-launch-efl takes duet-launch's command line (--backend, --engine,
--stay, --timeout-ms) and writes the same first_frame line and timeline,
so the launch experiment runs it unchanged on every stack. What differs is
set here: the environment Elementary reads (ELM_DISPLAY from the stack's
window system, ELM_ACCEL from --engine, a private HOME shared by the run so
no user's EFL profile or cache counts, ECORE_NO_SYSTEM_MODULES so it does
not look for a system bus), weston's timeline matched by the window's
app_id only (Elementary makes helper surfaces that commit first), and the
efreetd daemon Elementary starts, reaped after each stack's launches.
"""
import os

from duet_bench.efl import reap_strays

APPS = {"duet-launch": "launch", "duet-launch-efl": "launch-efl"}


def chosen(ctx):
    """The ctx.apps key of the launch experiment's app."""
    return APPS[getattr(ctx.opts, "launch_app", None) or "duet-launch"]


def is_efl(ctx):
    return chosen(ctx) == "launch-efl"


def env(ctx, stack):
    """Extra environment for the launch app (None for duet-launch)."""
    if not is_efl(ctx):
        return None
    home = os.path.join(ctx.workdir, "efl-launch-home")
    os.makedirs(home, exist_ok=True)
    return {"HOME": home, "XDG_CONFIG_HOME": os.path.join(home, "config"),
            "XDG_CACHE_HOME": os.path.join(home, "cache"), "ECORE_NO_SYSTEM_MODULES": "1",
            "ELM_DISPLAY": "wl" if stack.kind == "wayland" else "x11",
            "ELM_ACCEL": "gl" if ctx.opts.engine == "gl" else "none"}


def witness_args(ctx):
    """LaunchWitness's app_id and named_only for the chosen app."""
    if is_efl(ctx):
        return {"app_id": "duet-launch-efl", "named_only": True}
    return {}


def done(ctx, stack):
    """After a stack's launches: efreetd, which Elementary starts and
    which outlives the app, goes."""
    if is_efl(ctx):
        reap_strays(stack)


def missing(ctx):
    """None, or why the chosen launch app cannot run."""
    key = chosen(ctx)
    if ctx.apps.get(key):
        return None
    if key == "launch-efl":
        return ("duet-launch-efl is not built: EFL's development files were not found "
                "(Debian package libefl-all-dev; pkg-config elementary)")
    return None
