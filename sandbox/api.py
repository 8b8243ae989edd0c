# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sandbox's Python API: up(dir, provider, net) -> state, down(dir), status(dir), rebuild(dir, cluster).

`up` lays out DIR (nodes, cluster configs, kafka_home, supervisord config), starts supervisord, waits
until every broker answers Kafka metadata and every Ambari emulator answers HTTP, then writes
state.json and inventory.yml. `down` stops exactly the processes this sandbox started. `rebuild` tears
one cluster's broker down and brings it up again with its data wiped, everything else running on.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import time
import xmlrpc.client
from pathlib import Path

from sandbox import ambari_seed, broker, kafka_dist, lab_kerberos, lab_security, nodes, probes, processes, wheelhouse
from sandbox.inventory import TARGET_ALIAS, control_path_dir, write_inventory
from sandbox.kafka_home import DEFAULT_KAFKA_VERSION, KAFKA_HOME_ON_NODE, write_kafka_home, write_node_kafka_home
from sandbox.providers import CONTROLLER_PORT, ApacheProvider, BrokerSpec, get_provider
from sandbox.supervisor import CRASHED_STATES, STOPPED_STATES, Program, Supervisor
from sandbox.topology import AMBARI_PORT, BROKER_PORT, ZOOKEEPER_PORT, Cluster, build_topology

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DIR = ".sandbox"
STATE_FILE = "state.json"
BROKER_STOP_SECONDS = 60
UP_TIMEOUT, UP_TIMEOUT_REAL_KAFKA = 60.0, 300.0
# The apache provider's releases per cluster by default: the runbooks' migration, HDInsight 5.0 (2.4.1) to 5.1 (3.2.0),
# with MirrorMaker on the secondary, so of the secondary's release.
DEFAULT_RELEASES = {"primary": "2.4.1", "secondary": "3.2.0"}
INVENTORY_FILE = "inventory.yml"
# The node of the `mirrormaker` group (`up(mirrormaker_node=...)`): the Python API keeps the secondary's first worker, which
# the integration suite's fixtures build on; the CLI's default is hn0, the runbooks' (sandbox/__main__.py).
DEFAULT_MIRRORMAKER_NODE = "wn0"


class SandboxError(RuntimeError):
    """Something the user can act on: the message says what failed, where, and what to do."""


def _supervisor(sandbox_dir: Path) -> Supervisor:
    return Supervisor(directory=sandbox_dir / "supervisor", log_dir=sandbox_dir / "logs", work_dir=REPO)


def _state_path(sandbox_dir: Path) -> Path:
    return sandbox_dir / STATE_FILE


def read_state(sandbox_dir) -> dict | None:
    path = _state_path(Path(sandbox_dir).resolve())
    return json.loads(path.read_text()) if path.exists() else None


def _write_json(path: Path, data: dict) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    tmp.replace(path)


def _supervisord_running(state: dict) -> bool:
    pid = state["supervisord"]["pid"]
    return processes.alive(pid) and processes.belongs_to(pid, Path(state["dir"]))


def _check_ports_free(clusters: list, provider, node_mode: str, brokers: int, others: tuple = ()) -> None:
    """Every address the lab will listen on is free; `others`: (host, port, what) besides the clusters' (the Kerberos KDC)."""
    wanted = list(others)
    for cluster in clusters:
        for node in cluster.broker_nodes(brokers):
            wanted += [(node.ip, port, f"{cluster.alias} broker on {node.short}") for port in (BROKER_PORT, *provider.extra_ports)]
        wanted.append((cluster.zookeepers[0].ip, ZOOKEEPER_PORT, f"{cluster.alias} ZooKeeper"))
        wanted.append((cluster.head.ip, AMBARI_PORT, f"{cluster.alias} Ambari emulator"))
        if node_mode == "ssh":
            wanted += [(node.ip, nodes.SSH_PORT, f"sshd of node {node.short}") for node in _host_nodes(cluster)]
    for host, port, what in wanted:
        if probes.port_in_use(host, port):
            raise SandboxError(f"{host}:{port} (the {what}) is already in use: another sandbox on this --net is probably running; "
                               f"stop it with `python -m sandbox down --dir <its dir>` or pick another --net")


def _host_nodes(cluster: Cluster) -> list:
    """The nodes that are hosts in ssh node mode: the head node (hn0, where the runbooks run MirrorMaker; the Ambari
    emulator keeps listening on its address, port 8080, as a process of this machine) and the workers."""
    return [cluster.head, *cluster.workers]


def _mirrormaker_choices(cluster: Cluster) -> dict:
    """`hn0`, `wn0`, ... -> the node: where `up(mirrormaker_node=...)` may put the `mirrormaker` group."""
    return {node.short.split("-", 1)[0]: node for node in _host_nodes(cluster)}


def _mirrormaker_node(target: Cluster, requested: str | None, existing: dict | None) -> str:
    """The FQDN of the target's node that runs MirrorMaker; checked before anything is written or started. None: the node
    the directory ran it on, else DEFAULT_MIRRORMAKER_NODE."""
    choices = _mirrormaker_choices(target)
    kept = (existing or {}).get("mirrormaker_node")
    requested = requested or (kept.split("-", 1)[0] if kept else DEFAULT_MIRRORMAKER_NODE)
    if requested not in choices:
        raise ValueError(f"--mirrormaker-node {requested!r}: choose one of the secondary's nodes {', '.join(choices)} "
                         f"(hn0, its head node, as HDInsight's runbooks do; wn0 its first worker)")
    name = choices[requested].name
    if kept and kept.split("-", 1)[0] != requested:
        # Its node keeps MirrorMaker's program, files and Kafka home across down/up: another node would start a second one.
        raise ValueError(f"the sandbox in {existing['dir']} ran MirrorMaker on {kept}; bring it up again with --mirrormaker-node "
                         f"{kept.split('-', 1)[0]}, or use another --dir for MirrorMaker on {name}")
    return name


# Where the MirrorMaker node has its Java 8 (`up(mirrormaker_java8=...)`): the home Adoptium's Debian package temurin-8-jre
# installs, beside the node's own Java in /usr/lib/jvm (the machine's), as on an HDInsight 5.x node with its Temurin 8.
JAVA8_ON_NODE = "/usr/lib/jvm/temurin-8-jre-amd64"


def _mirrormaker_java8(requested: str | None, existing: dict | None) -> str | None:
    """The machine's Java 8 home to bind on the MirrorMaker node: the one asked for, else the one the directory started with."""
    home = requested or (existing or {}).get("mirrormaker_java8_source")
    if home and not (Path(home) / "bin" / "java").is_file():
        raise ValueError(f"mirrormaker_java8 {home}: no bin/java there (a Java home, such as tests/support/oldest_runtime.py's java8)")
    return str(Path(home).resolve()) if home else None


def _node_layout(sandbox_dir: Path, cluster: Cluster, node, layout: dict) -> tuple:
    """(state entry, init program or None) of one node; `layout` holds node_mode, isolate, provider, kafka_version,
    mirrormaker_node."""
    if layout["node_mode"] != "ssh" or node not in _host_nodes(cluster):
        return nodes.write_name_view(sandbox_dir, cluster, node, layout["isolate"]), None
    if node.name != layout["mirrormaker_node"]:
        release = layout["releases"].get(cluster.alias)
        if not release:  # the stand-ins: the MirrorMaker node's home is the only one
            return nodes.write_host(sandbox_dir, cluster, node)
        # HDInsight installs Kafka on every node of a Kafka cluster, with its kafka account: a MirrorMaker moved to another
        # node (a fail-back's, on the old primary) finds its cluster's release there, as on the real one.
        bind = write_node_kafka_home(nodes.upper_dir(sandbox_dir, node), layout["provider"], sandbox_dir, REPO, release)
        return nodes.write_host(sandbox_dir, cluster, node, nodes.MIRRORMAKER_SERVICE_ACCOUNTS, bind)
    upper = nodes.upper_dir(sandbox_dir, node)
    bind = write_node_kafka_home(upper, layout["provider"], sandbox_dir, REPO, layout["kafka_version"])
    java8 = [{"source": layout["mirrormaker_java8"], "target": JAVA8_ON_NODE}] if layout["mirrormaker_java8"] else []
    other_homes = [{"source": str(layout["provider"].kafka_home(sandbox_dir, release).resolve()), "target": path}
                   for release, path in _other_kafka_homes(layout).items()]
    return nodes.write_host(sandbox_dir, cluster, node, nodes.MIRRORMAKER_SERVICE_ACCOUNTS, bind, extra_binds=java8 + other_homes)


# Where the MirrorMaker node has the Kafka homes of the lab's other releases (apache provider), read-only: an operator who runs
# the runbooks' MirrorMaker 1 of the source's release (2.4.1 beside a 3.2.0 node) unpacks Apache's distribution beside the
# node's own Kafka (tests/integration/real_kafka/test_mirrormaker1.py runs it from there).
OTHER_KAFKA_HOMES_ON_NODE = "/opt/kafka"


def _other_kafka_homes(layout: dict) -> dict:
    """{release: path on the MirrorMaker node} of the lab's releases other than its own Kafka home's (none for the stand-ins)."""
    return {release: f"{OTHER_KAFKA_HOMES_ON_NODE}/{release}"
            for release in sorted(set((layout["releases"] or {}).values()) - {layout["kafka_version"]})}


def _cluster_layout(sandbox_dir: Path, cluster: Cluster, provider_name: str, layout: dict, password: str, supervisor: Supervisor) -> tuple:
    """Write the cluster's node files, broker.json and ambari.json; return (state entry, programs)."""
    cluster_dir = sandbox_dir / "clusters" / cluster.alias
    data_dir = cluster_dir / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    node_entries, programs = [], []
    for node in cluster.nodes:
        entry, init = _node_layout(sandbox_dir, cluster, node, layout)
        node_entries.append(entry)
        programs += [init] if init else []
    provider = layout["provider"]
    release = layout["releases"].get(cluster.alias, "")
    broker_nodes = cluster.broker_nodes(layout["brokers"])
    zookeeper = f"{cluster.zookeepers[0].ip}:{ZOOKEEPER_PORT}" if provider.uses_zookeeper(release) else ""
    quorum = ",".join(f"{k}@{node.ip}:{CONTROLLER_PORT}" for k, node in enumerate(broker_nodes)) if release and not zookeeper else ""
    broker_programs = {}  # broker node's name -> its supervisord program
    if zookeeper:
        programs.append(_zookeeper_program(cluster_dir, provider, BrokerSpec(
            provider=provider_name, alias=cluster.alias, cluster_name=cluster.name, ip=cluster.zookeepers[0].ip, fqdn=cluster.zookeepers[0].name,
            port=ZOOKEEPER_PORT, data_dir=str(data_dir), log_dir=str(sandbox_dir / "logs"), release=release, zookeeper=zookeeper)))
    for broker_id, node in enumerate(broker_nodes):
        spec = BrokerSpec(provider=provider_name, alias=cluster.alias, cluster_name=cluster.name, ip=node.ip, fqdn=node.name, port=BROKER_PORT,
                          data_dir=str(broker.data_dir(cluster_dir, broker_id)), log_dir=str(sandbox_dir / "logs"), broker_id=broker_id,
                          release=release, zookeeper=zookeeper, quorum=quorum, security_dir=layout["security"].get("dir", ""))
        broker.write_spec(cluster_dir, spec)
        program = broker.program_name(cluster.alias, broker_id)
        programs.append(Program(program, [sys.executable, "-m", "sandbox.broker", "--cluster-dir", str(cluster_dir), "--broker-id", str(broker_id)],
                                stopwaitsecs=BROKER_STOP_SECONDS))
        broker_programs[node.name] = program
    ambari = {"url": cluster.ambari_url, "cluster_name": cluster.name, "username": "admin", "password": password}
    components = {"worker": ["KAFKA_BROKER"], "zookeeper": ["ZOOKEEPER_SERVER"], "head": []}
    # Every KAFKA_BROKER host restarts the broker it runs on: its own (apache, a broker per worker), or wn0's, the one broker
    # of a single-broker provider's cluster, where Ambari still lists KAFKA_BROKER on every worker.
    restart_commands = {node.name: [*supervisor.ctl_command(), "restart", broker_programs.get(node.name, broker_programs[cluster.broker_node.name])]
                        for node in cluster.nodes if "KAFKA_BROKER" in components[node.role]}
    ambari_config = {
        "host": cluster.head.ip,
        "port": AMBARI_PORT,
        "cluster_name": cluster.name,
        "username": ambari["username"],
        "password": password,
        "hosts": [{"host_name": node.name, "ip": node.ip, "components": components[node.role]} for node in cluster.nodes],
        "broker_config_file": str(cluster_dir / "broker-config.json"),
        "restart_commands": restart_commands,
        "state_file": str(cluster_dir / "ambari-state.json"),
    }
    _write_json(cluster_dir / "ambari.json", ambari_config)
    programs.append(Program(f"{cluster.alias}-ambari", [sys.executable, "-m", "sandbox.ambari", "--config", str(cluster_dir / "ambari.json")]))
    entry = {
        "alias": cluster.alias,
        "name": cluster.name,
        "brokers": [{"node": node.name, "host": node.ip, "port": BROKER_PORT, "program": broker.program_name(cluster.alias, k)}
                    for k, node in enumerate(broker_nodes)],
        "bootstrap_servers": ",".join(f"{node.ip}:{BROKER_PORT}" for node in broker_nodes),
        "release": release or None,
        "ambari": ambari,
        "nodes": node_entries,
    }
    return entry, programs


def _zookeeper_program(cluster_dir: Path, provider, spec: BrokerSpec) -> Program:
    argv, env = provider.zookeeper_command(spec)
    return Program(f"{spec.alias}-zookeeper", argv, environment=env)


def _program_failure(supervisor: Supervisor, name: str):
    """None while `name` may still come up; otherwise why it won't (with the end of its log)."""
    try:
        info = supervisor.rpc().supervisor.getProcessInfo(name)
    except OSError as exc:
        return f"supervisord stopped answering ({exc})"
    if info["statename"] in STOPPED_STATES:
        log = supervisor.log_dir / f"{name}.log"
        tail = log.read_text(errors="replace")[-1500:] if log.exists() else "(no log)"
        return f"program {name} is {info['statename']} ({info['description']}); end of {log}:\n{tail}"
    return None


def _all_running(supervisor: Supervisor) -> None:
    """Raise until supervisord counts every program as RUNNING (it stayed up for startsecs)."""
    for info in supervisor.processes():
        if info["statename"] != "RUNNING":
            raise probes.ProbeError(f"{info['name']} is {info['statename']}")


def _wait_ready(supervisor: Supervisor, clusters: list, state: dict, deadline: float) -> None:
    # Brokers first: a broker that cannot start fails `up` at once, whatever the (slower) nodes are doing.
    for cluster in clusters:
        entries = state["clusters"][cluster.alias]["brokers"]
        for entry in entries:
            probes.wait_for(lambda e=entry: probes.kafka_metadata(e["host"], BROKER_PORT), f"{cluster.alias} broker on {e_addr(entry)}",
                            deadline, alive=lambda n=entry["program"]: _program_failure(supervisor, n))
        if len(entries) > 1:  # a replication factor of 3 needs every broker registered, not only answering
            probes.wait_for(lambda e=entries: probes.broker_count_at_least(e[0]["host"], BROKER_PORT, len(e)),
                            f"{cluster.alias}'s {len(entries)} brokers in its metadata", deadline)
        name = f"{cluster.alias}-ambari"
        probes.wait_for(lambda c=cluster: probes.http_answers(c.head.ip, AMBARI_PORT), f"{cluster.alias} Ambari emulator on {cluster.ambari_url}",
                        deadline, alive=lambda n=name: _program_failure(supervisor, n))
    for entry in _host_entries(state):
        probes.wait_for(lambda e=entry: probes.ssh_banner(e["ip"], nodes.SSH_PORT), f"sshd of node {entry['name']} on {entry['ip']}:{nodes.SSH_PORT}",
                        deadline, alive=lambda e=entry: _program_failure(supervisor, e["program"]))
    programs = [info["name"] for info in supervisor.processes()]
    probes.wait_for(lambda: _all_running(supervisor), "supervisord's RUNNING state for every program", deadline,
                    alive=lambda: next(filter(None, (_program_failure(supervisor, name) for name in programs)), None))


def e_addr(entry: dict) -> str:
    return f"{entry['host']}:{entry['port']}"


def _kept_password(state: dict | None) -> str | None:
    """The Ambari password of an earlier `up` in the same directory (every cluster has the same one)."""
    clusters = (state or {}).get("clusters") or {}
    return next((cluster["ambari"]["password"] for cluster in clusters.values()), None)


def _host_entries(state: dict) -> list:
    return [node for cluster in state["clusters"].values() for node in cluster["nodes"] if "ssh" in node]


def up(sandbox_dir=DEFAULT_DIR, provider: str = "noida", net: int = 0, names: dict | None = None, timeout: float | None = None, subnet: int = 1,
       node_mode: str | None = None, kafka_version: str | None = None, releases: dict | None = None,
       mirrormaker_node: str | None = None, advertise_ip: bool = False, mirrormaker_java8: str | None = None,
       brokers: int | None = None, secure: bool = False) -> dict:
    """Bring both clusters up (or report the running sandbox in `sandbox_dir`) and return the state dict.

    `subnet` is the primary's third octet (the secondary's is subnet + 1): 1 as documented; tests that
    need a second sandbox inside their own 127.N.0.0/16 block use 3 and up. `node_mode`: "ssh" (root's
    default: nodes are hosts reached over SSH as sshuser) or "local" (without root: local connection).
    `kafka_version`: the Kafka release of the MirrorMaker node's Kafka home: the release whose real MirrorMaker runs with
    the apache provider (default: the secondary's), the version the stand-in's home claims with the others (default
    DEFAULT_KAFKA_VERSION). `releases`: alias -> Kafka release of each cluster's brokers (apache only; DEFAULT_RELEASES).
    `mirrormaker_node`: the secondary's node of the `mirrormaker` group, `hn0` (its head node, as HDInsight's runbooks) or
    `wn0`..`wn2`; None: the one the directory started with, else DEFAULT_MIRRORMAKER_NODE. `advertise_ip`: both clusters'
    brokers start advertising their IP addresses, Ambari's stored kafka-env holding the runbook's IP-advertising snippet (a
    new config version, as after the runbook's step and a restart); a directory whose Ambari lacks it is refused.
    `mirrormaker_java8`: a Java 8 home on this machine (ssh node mode), bound on the MirrorMaker node at JAVA8_ON_NODE as an
    HDInsight 5.x node has its Java 8 (state["mirrormaker_java_home"]); None: the one the directory started with, if any.
    `brokers`: brokers per cluster, apache only (1 to 3; None: the number the directory started with, else the provider's,
    3 for apache as HDInsight's smallest clusters); fewer than 3 for a scenario that needs no replication, with replication
    settings in Ambari that a cluster of that size can hold (ambari_seed.fit_replication).
    `secure`: apache with ZooKeeper releases only; every broker gets the secure listeners, the ACL authorizer and the SCRAM
    users of sandbox/lab_security.py next to its PLAINTEXT listener (state["security"] says where and how); a directory that
    started secure stays secure.
    """
    # Eight JVMs on 2 cores under a loaded test run took over a minute to answer; the stand-ins answer in seconds.
    timeout = timeout or (UP_TIMEOUT_REAL_KAFKA if provider == "apache" else UP_TIMEOUT)
    sandbox_dir = Path(sandbox_dir).resolve()
    existing = read_state(sandbox_dir)
    if existing and _supervisord_running(existing):
        return {**existing, "already_running": True}
    if existing:
        _stop_leftovers(existing)
    started = time.monotonic()
    chosen = get_provider(provider)
    try:
        chosen.check()
        releases, kafka_version = _releases(provider, releases, kafka_version)
        for version in sorted({*releases.values(), kafka_version} if releases else ()):
            chosen.home(version)  # assembled before any broker starts (each broker's launcher only finds it)
        clusters = build_topology(net, names, subnet)
        target = next(c for c in clusters if c.alias == TARGET_ALIAS)
        mirrormaker = _mirrormaker_node(target, mirrormaker_node, existing)
        java8 = _mirrormaker_java8(mirrormaker_java8, existing)
        brokers = _brokers_per_cluster(chosen, brokers, existing)
        secure = _secure(chosen, releases, secure, existing)
        if advertise_ip:
            ambari_seed.check_ip_advertising(sandbox_dir, [cluster.alias for cluster in clusters])
        mode = nodes.choose_mode(node_mode)
        if mode == "ssh":
            nodes.check_host_commands()
            packages = wheelhouse.ensure(REPO)
            kerberos_packages = wheelhouse.ensure_kerberos(REPO) if secure else None
    except (RuntimeError, ValueError) as exc:
        raise SandboxError(str(exc)) from exc
    _check_ports_free(clusters, chosen, mode, brokers, ((lab_kerberos.kdc_host(net, subnet), lab_kerberos.KDC_PORT, "Kerberos KDC"),) if secure else ())

    sandbox_dir.mkdir(parents=True, exist_ok=True)
    supervisor = _supervisor(sandbox_dir)
    security = lab_security.ensure_material(sandbox_dir, [(node.name, node.ip) for cluster in clusters for node in cluster.broker_nodes(brokers)]) \
        if secure else {}
    if security:
        broker_nodes = [node for cluster in clusters for node in cluster.broker_nodes(brokers)]
        try:
            security["kerberos"] = lab_kerberos.ensure_realm(Path(security["dir"]), lab_kerberos.kdc_host(net, subnet), [n.name for n in broker_nodes],
                                                             [node.name.split(".", 1)[1] for cluster in clusters for node in cluster.nodes])
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            raise SandboxError(f"sandbox in {sandbox_dir}: the lab's Kerberos realm: {exc}") from exc
    layout = {"node_mode": mode, "isolate": nodes.can_isolate(), "provider": chosen, "kafka_version": kafka_version, "releases": releases,
              "mirrormaker_node": mirrormaker, "mirrormaker_java8": java8, "brokers": brokers, "security": security}
    # A host keeps its credentials across a reboot: `up` again in the same directory keeps the Ambari password.
    password = _kept_password(existing) or secrets.token_urlsafe(12)
    state = {"dir": str(sandbox_dir), "provider": provider, "net": net, "subnet": subnet, "node_mode": mode, "brokers_per_cluster": brokers,
             "clusters": {}, **({"security": security} if security else {})}
    programs = []
    for cluster in clusters:
        entry, cluster_programs = _cluster_layout(sandbox_dir, cluster, provider, layout, password, supervisor)
        state["clusters"][cluster.alias] = entry
        programs += cluster_programs
        if brokers < ApacheProvider.brokers_per_cluster and chosen.name == "apache":
            ambari_seed.fit_replication(sandbox_dir / "clusters" / cluster.alias, brokers)
    if advertise_ip:
        for cluster in clusters:
            ambari_seed.advertise_ip(sandbox_dir / "clusters" / cluster.alias)
    elif chosen.name == "apache":
        # Real brokers run what Ambari holds from their first start. (noida and tansu honour no such keys but
        # auto.create.topics.enable, which they ignore too: docs/development.md.)
        for cluster in clusters:
            ambari_seed.brokers_start_with_ambari_config(sandbox_dir / "clusters" / cluster.alias)
    if security:
        kerberos = security["kerberos"]
        programs.append(Program("kerberos-kdc", lab_kerberos.kdc_program_command(kerberos), environment=lab_kerberos.environment(kerberos)))
        for node in _host_entries(state):
            lab_kerberos.write_node_conf(kerberos, Path(node["upper"]))
    state["mirrormaker_node"] = mirrormaker
    mirrormaker = next(n for n in state["clusters"][TARGET_ALIAS]["nodes"] if n["name"] == state["mirrormaker_node"])
    if java8 and mode == "ssh":
        state["mirrormaker_java8_source"], state["mirrormaker_java_home"] = java8, JAVA8_ON_NODE
    if mode == "ssh":
        state["kafka_home"] = KAFKA_HOME_ON_NODE
        state["kafka_version"] = kafka_version
        state["other_kafka_homes"] = _other_kafka_homes(layout)
        state["wheelhouse"] = str(packages)
        if kerberos_packages:
            state["wheelhouse_kerberos"] = str(kerberos_packages)
    else:
        state["kafka_home"] = str(write_kafka_home(sandbox_dir, chosen, REPO, mirrormaker, kafka_version))
        (sandbox_dir / "mirrormaker2").mkdir(exist_ok=True)
    supervisor.write(programs)

    env = {**os.environ, processes.MARKER: str(sandbox_dir), "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    try:
        pid = supervisor.start(env)
    except RuntimeError as exc:
        raise SandboxError(str(exc)) from exc
    state["supervisord"] = {"pid": pid, "config": str(supervisor.config), "socket": str(supervisor.socket)}
    state["supervisorctl"] = supervisor.ctl_command()
    state["nodes_isolated"] = layout["isolate"]
    _write_json(_state_path(sandbox_dir), {**state, "processes": {}})  # so `down` can clean up if waiting fails
    try:
        _wait_ready(supervisor, clusters, state, started + timeout)
    except probes.ProbeError as exc:
        down(sandbox_dir)
        raise SandboxError(f"sandbox in {sandbox_dir} did not come up, stopped it again: {exc}") from exc
    except BaseException:  # an interrupt (Ctrl-C, a test run stopped) while waiting: no caller has the state to stop it with
        down(sandbox_dir)
        raise
    if security:
        try:
            lab_security.create_scram_users(security, {f"{c.zookeepers[0].ip}:{ZOOKEEPER_PORT}": releases[c.alias] for c in clusters})
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            down(sandbox_dir)
            raise SandboxError(f"sandbox in {sandbox_dir}: {exc}; stopped it again") from exc
    state["processes"] = {info["name"]: info["pid"] for info in supervisor.processes()}
    for node in _host_entries(state):
        node["init_pid"] = state["processes"][node["program"]]
        node["mount_namespace"] = processes.mount_namespace(node["init_pid"])
    state["startup_seconds"] = round(time.monotonic() - started, 2)
    _write_json(_state_path(sandbox_dir), state)
    write_inventory(sandbox_dir / INVENTORY_FILE, state, supervisor.ctl_command())
    return state


def _brokers_per_cluster(provider, requested: int | None, existing: dict | None) -> int:
    """The brokers each cluster runs: `requested`, else what the directory started with, else the provider's number."""
    kept = (existing or {}).get("brokers_per_cluster")
    if requested is None:
        return kept or provider.brokers_per_cluster
    if kept and requested != kept:
        raise ValueError(f"the sandbox in {existing['dir']} runs {kept} broker(s) per cluster, whose data it keeps; bring it up again "
                         f"with --brokers {kept}, or use another --dir")
    if provider.name != "apache" and requested != provider.brokers_per_cluster:
        raise ValueError(f"provider {provider.name} runs {provider.brokers_per_cluster} broker(s) per cluster: --brokers is for the apache provider")
    if not 1 <= requested <= ApacheProvider.brokers_per_cluster:
        raise ValueError(f"--brokers must be 1 to {ApacheProvider.brokers_per_cluster} (a broker per worker node), got {requested}")
    return requested


def _secure(provider, releases: dict, requested: bool, existing: dict | None) -> bool:
    """Whether the brokers get the secure listeners: asked for, or kept from the directory's earlier `up`."""
    if not (requested or (existing or {}).get("security")):
        return False
    kraft = sorted(release for release in releases.values() if not provider.uses_zookeeper(release))
    if provider.name != "apache" or kraft:
        raise ValueError(f"--secure is for the apache provider's ZooKeeper releases (SCRAM users and ACLs in ZooKeeper); got provider "
                         f"{provider.name}{', releases ' + ', '.join(kraft) if kraft else ''}")
    return True


def _releases(provider: str, releases: dict | None, kafka_version: str | None) -> tuple:
    """(alias -> broker release, MirrorMaker's release) for `up`; the releases are checked before anything starts."""
    if provider != "apache":
        if releases:
            raise ValueError(f"provider {provider} runs no Apache Kafka release: --release is for the apache provider")
        return {}, kafka_version or DEFAULT_KAFKA_VERSION
    releases = {**DEFAULT_RELEASES, **(releases or {})}
    unknown = sorted(set(releases) - set(DEFAULT_RELEASES))
    if unknown:
        raise ValueError(f"--release names clusters {unknown}; the sandbox's clusters are {', '.join(DEFAULT_RELEASES)}")
    kafka_version = kafka_version or releases[TARGET_ALIAS]
    for version in {*releases.values(), kafka_version}:
        kafka_dist.release(version)  # KafkaHomeError (a RuntimeError) names the releases the lab assembles
    return releases, kafka_version


def _stop_leftovers(state: dict) -> list:
    sandbox_dir = Path(state["dir"])
    pids = [state["supervisord"]["pid"], *state.get("processes", {}).values()]
    return processes.stop(pids, sandbox_dir) + processes.stop_nodes(node["upper"] for node in _host_entries(state))


def _stop_and_wait(supervisor: Supervisor, programs: list, timeout: float) -> None:
    """Stop these programs at once and wait until none runs (a node's supervisord stops what runs inside it first)."""
    rpc = supervisor.rpc().supervisor
    running = {info["name"] for info in rpc.getAllProcessInfo() if info["name"] in programs and info["statename"] not in STOPPED_STATES}
    for name in running:
        try:
            rpc.stopProcess(name, False)
        except xmlrpc.client.Fault:
            pass  # it stopped meanwhile
    deadline = time.monotonic() + timeout
    while running and time.monotonic() < deadline:
        time.sleep(0.1)
        running = {info["name"] for info in rpc.getAllProcessInfo() if info["name"] in running and info["statename"] not in STOPPED_STATES}


def down(sandbox_dir=DEFAULT_DIR, timeout: float = 20.0) -> dict:
    """Stop the sandbox in `sandbox_dir`: supervisord's shutdown, then by PID whatever of ours is left."""
    sandbox_dir = Path(sandbox_dir).resolve()
    state = read_state(sandbox_dir)
    if not state or "supervisord" not in state:
        return {"dir": str(sandbox_dir), "stopped": [], "message": "no sandbox state here; nothing to stop"}
    supervisor = _supervisor(sandbox_dir)
    pids = {"supervisord": state["supervisord"]["pid"], **state.get("processes", {})}
    running = _supervisord_running(state)
    if running:
        try:  # programs restarted since `up` (Ambari restarts, the mirrormaker2 role's program) have new PIDs
            pids.update({info["name"]: info["pid"] for info in supervisor.processes() if info["pid"]})
        except OSError:
            running = False  # socket gone or supervisord hung: the PID fallback below handles it
    # Only live processes of this sandbox: a recorded PID may since belong to something else.
    ours = {name: pid for name, pid in pids.items() if pid and processes.alive(pid) and processes.belongs_to(pid, sandbox_dir)}
    shutting_down = False
    if running:
        try:
            # The hosts first, while the brokers still answer, as a planned stop does: MirrorMaker 2 on the MirrorMaker
            # node commits its source offsets when it stops cleanly. Stopped together with the brokers, it lost that
            # commit and copied again on `up` (make demo after down and up: 400 duplicates of a topic copied a minute
            # before). A crash is what kill -9 is for (day-two test).
            _stop_and_wait(supervisor, [node["program"] for node in _host_entries(state) if "program" in node], timeout)
            # Then the brokers, while ZooKeeper still answers, in the order of Ambari's stop-all (KAFKA_BROKER before
            # ZOOKEEPER_SERVER): a broker stopped together with ZooKeeper left its registration in ZooKeeper's data, which
            # the next `up` had to wait out (sandbox/zk_registration.py).
            _stop_and_wait(supervisor, [broker["program"] for cluster in state["clusters"].values() for broker in cluster["brokers"]
                                        if broker.get("program")], timeout)
            # supervisord's shutdown stops its programs one after another: ask the rest to stop at once first.
            supervisor.rpc().supervisor.stopAllProcesses(False)
            supervisor.shutdown()
            shutting_down = True
        except OSError:
            pass
    # Without a shutting-down supervisord nothing else will stop the programs: signal them at once.
    left = processes.wait_gone(ours.values(), timeout) if shutting_down else list(ours.values())
    if left:
        left = processes.stop(left, sandbox_dir)
    # A node's own processes (sshd sessions, what its supervisord ran) die with its supervisord or here, so that the
    # node's mounts, which exist only in its namespace, go with them.
    left += processes.stop_nodes(node["upper"] for node in _host_entries(state))
    if left:
        listed = ",".join(map(str, left))
        raise SandboxError(f"processes {left} of the sandbox in {sandbox_dir} survived SIGKILL; check them with `ps -o pid,stat,cmd -p {listed}`")
    if supervisor.socket.exists():
        supervisor.socket.unlink()  # supervisord removes it on a clean shutdown; a killed one leaves it
    masters = Path(control_path_dir(state))
    if masters.is_dir() and not any(masters.iterdir()):
        masters.rmdir()  # Ansible's SSH masters to the nodes ended with the nodes' sshd; their directory is empty
    return {"dir": str(sandbox_dir), "stopped": sorted(ours), "pids": ours}


def rebuild(sandbox_dir=DEFAULT_DIR, cluster: str = TARGET_ALIAS, timeout: float = 60.0) -> dict:
    """Tear the broker of one cluster down and bring it up again empty: a rebuilt cluster, its data gone.

    The broker program stops, its data directory (topics, records, consumer groups: everything the broker stored) is
    wiped, and it starts again on the same address with the same Ambari-stored settings. The other cluster, both
    Ambari emulators and the nodes run on untouched, so a MirrorMaker 2 still running on the MirrorMaker node keeps
    its position in memory and writes into the empty cluster (a remote topic recreated while MirrorMaker ran); stop
    it first for a target torn down with its MirrorMaker (docs/development.md).
    """
    sandbox_dir = Path(sandbox_dir).resolve()
    state = read_state(sandbox_dir)
    if not state or "supervisord" not in state or not _supervisord_running(state):
        raise SandboxError(f"no running sandbox in {sandbox_dir}: bring it up first (`python -m sandbox up --dir {sandbox_dir}`)")
    if cluster not in state["clusters"]:
        raise SandboxError(f"the sandbox in {sandbox_dir} has no cluster {cluster!r}; its clusters are {', '.join(sorted(state['clusters']))}")
    started = time.monotonic()
    deadline = started + timeout
    supervisor = _supervisor(sandbox_dir)
    cluster_dir = sandbox_dir / "clusters" / cluster
    brokers = state["clusters"][cluster].get("brokers") or [{}]  # a state.json older than multi-broker clusters: one broker
    specs = [broker.read_spec(cluster_dir, k) for k in range(len(brokers))]
    programs = [entry.get("program", broker.program_name(cluster, k)) for k, entry in enumerate(brokers)]
    zookeeper = f"{cluster}-zookeeper" if specs[0].zookeeper else None
    before = supervisor.rpc().supervisor.getProcessInfo(programs[0])["pid"] or None
    _stop_and_wait(supervisor, programs, timeout)
    if zookeeper:  # the cluster's metadata (topics, configs) lives there: it goes with the brokers' data
        _stop_and_wait(supervisor, [zookeeper], timeout)
    for program in programs + [zookeeper] * bool(zookeeper):
        if supervisor.rpc().supervisor.getProcessInfo(program)["statename"] not in STOPPED_STATES:
            raise SandboxError(f"{program} of the sandbox in {sandbox_dir} did not stop within {timeout} s; nothing was wiped")
    for spec in specs:
        for port in (spec.port, *get_provider(spec.provider).extra_ports):
            probes.wait_for(lambda p=port, s=spec: _port_free(s.ip, p), f"the port {spec.ip}:{port} of the stopped {cluster} broker", deadline)
    wiped = []
    data_dirs = [Path(spec.data_dir) for spec in specs] + ([cluster_dir / "zookeeper"] if zookeeper else [])
    for data_dir in data_dirs:
        wiped += sorted(path.name for path in data_dir.iterdir()) if data_dir.is_dir() else []
        shutil.rmtree(data_dir, ignore_errors=True)
        data_dir.mkdir(parents=True)
    for program in [zookeeper] * bool(zookeeper) + programs:
        supervisor.rpc().supervisor.startProcess(program, False)
    try:
        for spec, program in zip(specs, programs):
            probes.wait_for(lambda s=spec: probes.kafka_metadata(s.ip, s.port), f"the rebuilt {cluster} broker on {spec.ip}:{spec.port}", deadline,
                            alive=lambda p=program: _program_failure(supervisor, p))
            probes.wait_for(lambda p=program: _running(supervisor, p), f"supervisord's RUNNING state for {program}", deadline,
                            alive=lambda p=program: _program_failure(supervisor, p))
        if len(specs) > 1:
            probes.wait_for(lambda: probes.broker_count_at_least(specs[0].ip, specs[0].port, len(specs)), f"the rebuilt {cluster}'s brokers", deadline)
    except probes.ProbeError as exc:
        raise SandboxError(f"the rebuilt {cluster} broker of the sandbox in {sandbox_dir} did not come up: {exc}") from exc
    for program in programs + [zookeeper] * bool(zookeeper):
        state["processes"][program] = supervisor.rpc().supervisor.getProcessInfo(program)["pid"]
    _write_json(_state_path(sandbox_dir), state)
    return {"dir": str(sandbox_dir), "cluster": cluster, "program": programs[0], "pid_before": before, "pid": state["processes"][programs[0]],
            "data_dir": str(specs[0].data_dir), "wiped": wiped, "bootstrap_servers": state["clusters"][cluster]["bootstrap_servers"],
            "seconds": round(time.monotonic() - started, 2)}


def _port_free(host: str, port: int) -> None:
    if probes.port_in_use(host, port):
        raise probes.ProbeError(f"{host}:{port} is still in use")


def _running(supervisor: Supervisor, program: str) -> None:
    info = supervisor.rpc().supervisor.getProcessInfo(program)
    if info["statename"] != "RUNNING":
        raise probes.ProbeError(f"{program} is {info['statename']}")


def status(sandbox_dir=DEFAULT_DIR) -> dict:
    """Every recorded process with supervisord's view of it; `crashed` lists the ones that are not running."""
    sandbox_dir = Path(sandbox_dir).resolve()
    state = read_state(sandbox_dir)
    if not state or "supervisord" not in state:
        return {"dir": str(sandbox_dir), "running": False, "processes": {}, "crashed": [], "message": "no sandbox here"}
    report = {"dir": str(sandbox_dir), "provider": state["provider"], "net": state["net"], "processes": {}, "crashed": [],
              "supervisord": {"pid": state["supervisord"]["pid"], "running": _supervisord_running(state)}}
    if not report["supervisord"]["running"]:
        report["running"] = False
        report["processes"] = {name: {"pid": pid, "state": "STOPPED", "alive": processes.alive(pid)} for name, pid in state["processes"].items()}
        return report
    for info in _supervisor(sandbox_dir).processes():
        entry = {"pid": info["pid"], "state": info["statename"], "description": info["description"]}
        report["processes"][info["name"]] = entry
        if info["statename"] in CRASHED_STATES:
            report["crashed"].append(info["name"])
    # STARTING: up and answering (up waited for that), inside supervisord's startsecs window.
    report["running"] = all(entry["state"] in ("RUNNING", "STARTING") for entry in report["processes"].values())
    return report
