# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""supervisord for one sandbox: its config, starting it, and talking to it over its unix socket."""
from __future__ import annotations

import hashlib
import shlex
import subprocess
import sys
import tempfile
import time
import xmlrpc.client
from dataclasses import dataclass, field
from pathlib import Path

from supervisor.xmlrpc import SupervisorTransport

# sun_path is 108 bytes including the NUL, and supervisord first binds "<path>.<its pid>" then renames.
SOCKET_PATH_MAX = 107 - len(".4194304")
# supervisord process states that mean the program is not (or no longer) running.
STOPPED_STATES = {"STOPPED", "EXITED", "FATAL", "BACKOFF", "UNKNOWN"}
# ... and the subset that means it died rather than being stopped on purpose.
CRASHED_STATES = STOPPED_STATES - {"STOPPED"}


@dataclass(frozen=True)
class Program:
    name: str
    command: list
    environment: dict = field(default_factory=dict)
    # Off by default so a crash stays visible in `status` instead of being papered over by a restart.
    autorestart: bool = False
    # A real broker's controlled shutdown moves its partition leaderships first: SIGKILL after 10 s would cut it short.
    stopwaitsecs: int = 10

    def render(self, log_dir: Path) -> str:
        lines = [
            f"[program:{self.name}]",
            f"command={shlex.join(self.command)}",
            "autostart=true",
            f"autorestart={'true' if self.autorestart else 'false'}",
            "startsecs=1",
            "startretries=0",
            "stopasgroup=true",
            "killasgroup=true",
            f"stopwaitsecs={self.stopwaitsecs}",
            "redirect_stderr=true",
            f"stdout_logfile={log_dir / (self.name + '.log')}",
            "stdout_logfile_maxbytes=10MB",
            "stdout_logfile_backups=1",
        ]
        if self.environment:
            lines.append("environment=" + ",".join(f'{k}="{_escape_env(v)}"' for k, v in self.environment.items()))
        return "\n".join(lines) + "\n"


def _escape_env(value) -> str:
    # supervisord parses environment= with shlex-like rules; % must be doubled for its string expansion.
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")


@dataclass(frozen=True)
class Supervisor:
    directory: Path  # DIR/supervisor
    log_dir: Path
    work_dir: Path

    @property
    def config(self) -> Path:
        return self.directory / "supervisord.conf"

    @property
    def conf_d(self) -> Path:
        return self.directory / "conf.d"

    @property
    def socket(self) -> Path:
        local = self.directory / "supervisor.sock"
        if len(str(local)) <= SOCKET_PATH_MAX:
            return local
        # A deep sandbox dir (pytest's tmp paths) would exceed sun_path: use a short name unique to this dir.
        return Path(tempfile.gettempdir()) / f"kafkaops-sandbox-{hashlib.sha1(str(self.directory).encode()).hexdigest()[:16]}.sock"

    @property
    def pidfile(self) -> Path:
        return self.directory / "supervisord.pid"

    def ctl_command(self) -> list:
        """supervisorctl for this sandbox, as an argv."""
        ctl = Path(sys.executable).parent / "supervisorctl"
        base = [str(ctl)] if ctl.exists() else [sys.executable, "-m", "supervisor.supervisorctl"]
        return base + ["-c", str(self.config)]

    def write(self, programs: list) -> None:
        self.conf_d.mkdir(parents=True, exist_ok=True)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.config.write_text(
            "[unix_http_server]\n"
            f"file={self.socket}\n"
            "chmod=0700\n\n"
            "[supervisord]\n"
            f"logfile={self.log_dir / 'supervisord.log'}\n"
            f"pidfile={self.pidfile}\n"
            f"childlogdir={self.log_dir}\n"
            f"directory={self.work_dir}\n"
            "identifier=kafkaops-sandbox\n\n"
            "[rpcinterface:supervisor]\n"
            "supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface\n\n"
            "[supervisorctl]\n"
            f"serverurl=unix://{self.socket}\n\n"
            "[include]\n"
            "files = conf.d/*.conf\n"
        )
        for program in programs:
            (self.conf_d / f"{program.name}.conf").write_text(program.render(self.log_dir))

    def start(self, env: dict, timeout: float = 10.0) -> int:
        """Start supervisord (it daemonizes) and return its PID once its socket answers."""
        self.pidfile.unlink(missing_ok=True)
        start_log = self.log_dir / "supervisord.start.log"
        with open(start_log, "wb") as out:
            result = subprocess.run([sys.executable, "-m", "supervisor.supervisord", "-c", str(self.config)], stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=subprocess.STDOUT, env=env, check=False, timeout=timeout)
        if result.returncode != 0:
            raise RuntimeError(f"supervisord -c {self.config} failed (exit {result.returncode}): {start_log.read_text()[-2000:]}")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.pidfile.exists() and self.socket.exists():
                try:
                    self.rpc().supervisor.getState()
                    return int(self.pidfile.read_text().strip())
                except (OSError, ValueError, xmlrpc.client.Fault):
                    pass
            time.sleep(0.05)
        raise RuntimeError(f"supervisord did not open {self.socket} within {timeout}s; see {self.log_dir / 'supervisord.log'}")

    def rpc(self) -> xmlrpc.client.ServerProxy:
        transport = SupervisorTransport(None, None, f"unix://{self.socket}")
        # The URL is a placeholder: the transport always connects to the unix socket.
        return xmlrpc.client.ServerProxy("http://127.0.0.1", transport=transport)

    def processes(self) -> list:
        """supervisord's view of every program: name, statename, pid, description, exitstatus."""
        return self.rpc().supervisor.getAllProcessInfo()

    def shutdown(self) -> None:
        self.rpc().supervisor.shutdown()
