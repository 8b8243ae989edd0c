# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A node's init: `unshare --mount --uts --propagation private python -m sandbox.node_init <node.json>`.

The sandbox's supervisord runs this once per inventory node (docs/development.md, "Nodes"). In its
own mount and UTS namespaces it mounts the node's root filesystem (an overlay of this machine's / with
the node's upper dir, so every write the node makes stays the node's), chroots into it, creates the
node's accounts the first time (an HDInsight node's: `sshuser` with passwordless sudo, and on the
MirrorMaker node the service account `kafka` in group `hadoop`), and execs the node's own supervisord,
which runs sshd on the node's address. Nothing in here runs outside the node's namespaces.
"""
from __future__ import annotations

import ctypes
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

# Written inside the node once its accounts exist; its absence means the node is new.
PROVISIONED_MARKER = "/etc/kafkaops-sandbox-node.json"
SUPERVISOR_CONFIG = "/etc/supervisor/supervisord.conf"
SUPERVISOR_CONF_D = "/etc/supervisor/conf.d"
SUPERVISOR_SOCKET = "/run/supervisor/supervisor.sock"
SSHD_CONFIG = "/etc/ssh/sshd_config"
SSHD_HOST_KEY = "/etc/ssh/ssh_host_ed25519_key"
LOGIN_USER = "sshuser"
SUDOERS_FILE = f"/etc/sudoers.d/{LOGIN_USER}"
# The environment of everything the node runs: a fresh host's, not the test process's.
BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


_MS_BIND = 4096
_MS_REC = 16384
_MS_RDONLY = 1
_MS_REMOUNT = 32
_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p)


class NodeInitError(RuntimeError):
    pass


def _run(argv: list) -> None:
    result = subprocess.run(argv, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise NodeInitError(f"`{' '.join(argv)}` failed (exit {result.returncode}): {(result.stdout + result.stderr).strip()}")


def _mount(source: str, target: str, fstype: str | None = None, flags: int = 0, options: str | None = None) -> None:
    # mount(2) itself: six nodes starting at once would otherwise fork 30 mount(8) processes, which shows under load.
    if _LIBC.mount(source.encode(), target.encode(), fstype.encode() if fstype else None, flags, options.encode() if options else None) != 0:
        error = ctypes.get_errno()
        raise NodeInitError(f"mount {source} on {target} ({fstype or 'bind'}) failed: {os.strerror(error)}")


def _mount_root(spec: dict) -> None:
    """The node's / at spec["root"]: the machine's / below, the node's upper dir on top; kernel filesystems bound in."""
    root = spec["root"]
    _mount("overlay", root, "overlay", 0, f"lowerdir=/,upperdir={spec['upper']},workdir={spec['work']}")
    _mount("/dev", f"{root}/dev", flags=_MS_BIND | _MS_REC)
    _mount("proc", f"{root}/proc", "proc")
    _mount("/sys", f"{root}/sys", flags=_MS_BIND | _MS_REC)
    # The sandbox dir at its own path, shared with the machine: node logs and the init's PID file live there.
    _mount(spec["sandbox_dir"], f"{root}{spec['sandbox_dir']}", flags=_MS_BIND)
    if spec.get("kafka_home_source"):  # apache provider: the real distribution, at the HDInsight path
        _mount(spec["kafka_home_source"], f"{root}{spec['kafka_home']}", flags=_MS_BIND)
    for bind in spec.get("extra_binds", []):
        target = f"{root}{bind['target']}"
        os.makedirs(target, exist_ok=True)  # in the node's upper dir
        _mount(bind["source"], target, flags=_MS_BIND)
        # Read-only takes a remount of the bind (mount(2): MS_RDONLY is ignored on the first MS_BIND).
        _mount(bind["source"], target, flags=_MS_BIND | _MS_REMOUNT | _MS_RDONLY)


def _has_entry(path: str, name: str) -> bool:
    return any(line.split(":", 1)[0] == name for line in Path(path).read_text().splitlines())


def _write(path: str, content: str, mode: int, owner: str | None = None) -> None:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content)
    target.chmod(mode)
    if owner:
        os.chown(target, *_ids(owner))


def _ids(user: str) -> tuple:
    for line in Path("/etc/passwd").read_text().splitlines():
        fields = line.split(":")
        if fields[0] == user:
            return int(fields[2]), int(fields[3])
    raise NodeInitError(f"user {user} is not in the node's /etc/passwd")


def _nsswitch() -> str:
    """The machine's nsswitch.conf with `hosts: files` (its resolver is not on 127/8: a sandbox name must never reach DNS)."""
    lines = [line for line in Path("/etc/nsswitch.conf").read_text().splitlines() if not line.startswith("hosts:")]
    return "\n".join(lines + ["hosts:          files"]) + "\n"


def _provision(spec: dict) -> None:
    """What an HDInsight node has before anyone logs in. Each step is skipped if done (an interrupted first start)."""
    _write("/etc/hosts", spec["hosts"], 0o644)
    _write("/etc/hostname", f"{spec['short']}\n", 0o644)
    _write("/etc/nsswitch.conf", _nsswitch(), 0o644)
    if not _has_entry("/etc/passwd", LOGIN_USER):
        # Password `*`, not useradd's `!`: with UsePAM no, sshd refuses keys for a `!` (locked) account.
        _run(["useradd", "--create-home", "--shell", "/bin/bash", "--password", "*", LOGIN_USER])
    home = f"/home/{LOGIN_USER}"
    Path(f"{home}/.ssh").mkdir(mode=0o700, exist_ok=True)
    os.chown(f"{home}/.ssh", *_ids(LOGIN_USER))
    _write(f"{home}/.ssh/authorized_keys", spec["authorized_key"], 0o600, owner=LOGIN_USER)
    _write(SUDOERS_FILE, f"{LOGIN_USER} ALL=(ALL) NOPASSWD:ALL\n", 0o440)
    _run(["visudo", "-c", "-q", "-f", SUDOERS_FILE])
    for account in spec["service_accounts"]:
        if not _has_entry("/etc/group", account["group"]):
            _run(["groupadd", account["group"]])
        if not _has_entry("/etc/passwd", account["user"]):
            _run(["useradd", "--create-home", "--shell", account["shell"], "--gid", account["group"], account["user"]])
    _write(PROVISIONED_MARKER, json.dumps({"node": spec["name"], "login_user": LOGIN_USER,
                                           "service_accounts": spec["service_accounts"]}, indent=2) + "\n", 0o644)


def _sshd_config(spec: dict) -> str:
    return "\n".join([
        "# Written by the sandbox's node init at every start: only the node's address, only sshuser, keys only.",
        f"ListenAddress {spec['ip']}:22",
        f"HostKey {SSHD_HOST_KEY}",
        "PermitRootLogin no",
        f"AllowUsers {LOGIN_USER}",
        "UsePAM no",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "PubkeyAuthentication yes",
        "AuthorizedKeysFile .ssh/authorized_keys",
        "PidFile /run/sshd.pid",
        "PrintMotd no",
        "X11Forwarding no",
        "Subsystem sftp /usr/lib/openssh/sftp-server",
        "",
    ])


def _supervisor_config(spec: dict) -> str:
    logs = spec["log_dir"]
    return "\n".join([
        "; Written by the sandbox's node init at every start. Programs go in conf.d; the socket is root's only.",
        "[unix_http_server]",
        f"file={SUPERVISOR_SOCKET}",
        "chmod=0700",
        "",
        "[supervisord]",
        f"logfile={logs}/supervisord.log",
        "pidfile=/run/supervisord.pid",
        "user=root",
        "childlogdir=/var/log/supervisor",
        f"identifier={spec['short']}",
        "",
        "[rpcinterface:supervisor]",
        "supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface",
        "",
        "[supervisorctl]",
        f"serverurl=unix://{SUPERVISOR_SOCKET}",
        "",
        "[program:sshd]",
        f"command=/usr/sbin/sshd -D -e -f {SSHD_CONFIG}",
        "autorestart=true",
        "startsecs=0",  # RUNNING once spawned: `up` waits for its SSH banner instead
        "redirect_stderr=true",
        f"stdout_logfile={logs}/sshd.log",
        "",
        "[include]",
        f"files = {SUPERVISOR_CONF_D}/*.conf",
        "",
    ])


def _configure(spec: dict) -> None:
    """The node's services, rewritten at every start (the sandbox owns them; conf.d and everything else is the node's)."""
    for directory, mode in (("/run/sshd", 0o755), ("/run/supervisor", 0o755), ("/var/log/supervisor", 0o755), (SUPERVISOR_CONF_D, 0o755)):
        Path(directory).mkdir(parents=True, exist_ok=True)
        Path(directory).chmod(mode)
    Path(spec["log_dir"]).mkdir(parents=True, exist_ok=True)
    if not Path(SSHD_HOST_KEY).exists():
        _run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", SSHD_HOST_KEY])
    _write(SSHD_CONFIG, _sshd_config(spec), 0o644)
    _write(SUPERVISOR_CONFIG, _supervisor_config(spec), 0o644)


def main(spec_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    socket.sethostname(spec["short"])  # as on HDInsight: `hostname` is the short name, `hostname -f` the FQDN
    _mount_root(spec)
    os.chroot(spec["root"])
    os.chdir("/")
    if not Path(PROVISIONED_MARKER).exists():
        _provision(spec)
    _configure(spec)
    env = {"PATH": BASE_PATH, "LANG": "C.UTF-8", "HOME": "/root", "PYTHONDONTWRITEBYTECODE": "1",
           spec["marker_name"]: spec["sandbox_dir"]}
    # The PID stays the same through exec: the node's `exec` wrapper enters the namespaces of this PID.
    Path(spec["pid_file"]).write_text(f"{os.getpid()}\n")
    os.execve(spec["python"], [spec["python"], "-m", "supervisor.supervisord", "-n", "-c", SUPERVISOR_CONFIG], env)


if __name__ == "__main__":
    try:
        main(sys.argv[1])
    except (NodeInitError, OSError) as exc:
        print(f"node init failed: {exc}", file=sys.stderr)
        sys.exit(1)
