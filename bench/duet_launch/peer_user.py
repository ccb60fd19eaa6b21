"""The unprivileged user a peer that refuses root runs as (sway: "Unable
to drop root ... refusing to start"). The launcher never weakens such a
peer to run as root: as root, it runs it as this user, a system account
with no home, no shell and no password, made with useradd where missing."""
import pwd
import shutil
import subprocess

from duet_launch.errors import StackError


def ensure(name):
    """(uid, gid) of user name, made first where missing (root only)."""
    try:
        pw = pwd.getpwnam(name)
        return pw.pw_uid, pw.pw_gid
    except KeyError:
        pass
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    r = subprocess.run([useradd, "--system", "--user-group", "--no-create-home",
                        "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True)
    try:
        pw = pwd.getpwnam(name)
    except KeyError:
        raise StackError("cannot make the unprivileged user %s to run the peer as "
                         "(useradd: %s)" % (name, (r.stderr or r.stdout).strip()))
    return pw.pw_uid, pw.pw_gid
