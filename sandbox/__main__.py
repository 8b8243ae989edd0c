# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`python -m sandbox up|down|status|seed|rebuild [--provider apache|noida|tansu] [--dir .sandbox] [--net N] [--node-mode ssh|local]
[--release ALIAS=VERSION] [--kafka-version VERSION] [--mirrormaker-node hn0|wn0] [--advertise-ip] [--cluster primary|secondary]`."""
from __future__ import annotations

import argparse
import getpass
import json
import sys

from sandbox import api
from sandbox.providers import PROVIDERS

# `make demo` as the runbooks: MirrorMaker on the secondary's head node (the Python API keeps wn0, see api.py).
CLI_MIRRORMAKER_NODE = "hn0"


def _print_status(report: dict) -> int:
    if not report.get("supervisord"):
        print(f"{report['dir']}: {report['message']}")
        return 3
    sup = report["supervisord"]
    print(f"sandbox {report['dir']} (provider {report['provider']}, net {report['net']}): "
          f"supervisord pid {sup['pid']} {'running' if sup['running'] else 'NOT RUNNING'}")
    for name, entry in sorted(report["processes"].items()):
        flag = "  <-- CRASHED" if name in report["crashed"] else ""
        print(f"  {name:<24} {entry['state']:<9} pid {entry['pid']:<8} {entry.get('description', '')}{flag}")
    if report.get("message"):
        print(f"  note: {report['message']}")
    if report["crashed"]:
        print(f"  logs: {report['dir']}/logs/<program>.log")
        return 1
    return 0 if report["running"] else 3


def _print_up(state: dict) -> None:
    if state.get("already_running"):
        print(f"sandbox in {state['dir']} is already running (supervisord pid {state['supervisord']['pid']}); nothing started")
    else:
        print(f"sandbox up in {state['startup_seconds']} s: provider {state['provider']}, dir {state['dir']}")
    for alias, cluster in state["clusters"].items():
        release = f" (Kafka {cluster['release']})" if cluster.get("release") else ""
        print(f"  {alias:<10} {cluster['name']:<12} kafka {cluster['bootstrap_servers']}{release}  ambari {cluster['ambari']['url']}")
    if state.get("node_mode") == "ssh":
        print(f"  nodes: the head nodes and workers are hosts, reached over SSH as {api.nodes.LOGIN_USER} with sudo; "
              f"MirrorMaker node {state['mirrormaker_node']}, Kafka home {state['kafka_home']}"
              + (f" (claims Kafka {state['kafka_version']})" if state.get("kafka_version") else ""))
    else:
        isolation = "names resolve per node" if state.get("nodes_isolated") else "NOT isolated (needs root): names resolve through this machine's /etc/hosts"
        print(f"  nodes: local connection as {getpass.getuser()}, {isolation}")
    print(f"  inventory: {state['dir']}/{api.INVENTORY_FILE}   state: {state['dir']}/{api.STATE_FILE}")


def _print_rebuild(result: dict) -> None:
    print(f"rebuilt {result['cluster']} in {result['seconds']} s: {result['program']} pid {result['pid_before']} -> {result['pid']}, "
          f"on {result['bootstrap_servers']} again with an empty {result['data_dir']} (wiped: {', '.join(result['wiped']) or 'nothing'})")
    print("  its topics, records and consumer groups are gone; the other cluster, the Ambari emulators and the nodes (MirrorMaker among them) ran on")


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sandbox", description="The local two-cluster Kafka sandbox.")
    parser.add_argument("command", choices=["up", "down", "status", "seed", "rebuild"])
    parser.add_argument("--dir", default=api.DEFAULT_DIR, help="sandbox directory (default: %(default)s)")
    parser.add_argument("--provider", default="apache", choices=sorted(PROVIDERS),
                        help="broker provider for `up`: apache runs real Kafka from Maven Central (default: %(default)s)")
    parser.add_argument("--net", type=int, default=0, help="second octet of every address, 127.N.C.X (default: %(default)s)")
    parser.add_argument("--subnet", type=int, default=1, help="third octet of the primary; the secondary gets the next (default: %(default)s)")
    parser.add_argument("--primary-name", default="primary", help="cluster name of the primary (alias stays `primary`)")
    parser.add_argument("--secondary-name", default="secondary", help="cluster name of the secondary (alias stays `secondary`)")
    parser.add_argument("--node-mode", choices=api.nodes.NODE_MODES,
                        help="ssh: the workers are hosts reached over SSH as sshuser (default as root); local: local connection (default without root)")
    parser.add_argument("--kafka-version",
                        help="the Kafka release of the MirrorMaker node's Kafka home (apache: whose MirrorMaker runs, default the secondary's; "
                             f"noida and tansu: the release the stand-in claims, default {api.DEFAULT_KAFKA_VERSION})")
    parser.add_argument("--release", action="append", default=[], metavar="ALIAS=VERSION",
                        help=f"apache: a cluster's Kafka release, repeatable (default: "
                             f"{' '.join(f'{a}={v}' for a, v in api.DEFAULT_RELEASES.items())}; one of {', '.join(api.kafka_dist.RELEASES)})")
    parser.add_argument("--mirrormaker-node",
                        help="the secondary's node of the mirrormaker group: hn0 (its head node, as HDInsight's runbooks run MirrorMaker) "
                             f"or wn0..wn2 (default: the node a sandbox directory started with, else {CLI_MIRRORMAKER_NODE})")
    parser.add_argument("--advertise-ip", action="store_true",
                        help="the brokers start advertising their IP addresses: Ambari's kafka-env gets the runbook's IP-advertising snippet")
    parser.add_argument("--brokers", type=int,
                        help="brokers per cluster, apache only: 1 to 3 (default: what the directory started with, else 3 as HDInsight's smallest clusters)")
    parser.add_argument("--secure", action="store_true",
                        help="apache, ZooKeeper releases: SCRAM, TLS (client certificates) and SASL_SSL listeners and an ACL authorizer "
                             "on every broker besides PLAINTEXT (sandbox/lab_security.py; kept with the directory)")
    parser.add_argument("--cluster", help="for `rebuild`: the cluster alias (primary or secondary) whose broker comes up again with its data wiped")
    parser.add_argument("--timeout", type=float, help="seconds `up` waits for every program to answer (default: 300 for apache, 60 for the stand-ins)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    try:
        if args.command == "up":
            releases = dict(item.split("=", 1) for item in args.release if "=" in item)
            if len(releases) != len(args.release):
                parser.error("--release takes ALIAS=VERSION, e.g. --release primary=2.4.1")
            result = api.up(args.dir, args.provider, args.net, names={"primary": args.primary_name, "secondary": args.secondary_name},
                            subnet=args.subnet, node_mode=args.node_mode, kafka_version=args.kafka_version, releases=releases,
                            mirrormaker_node=args.mirrormaker_node or (None if api.read_state(args.dir) else CLI_MIRRORMAKER_NODE),
                            advertise_ip=args.advertise_ip, timeout=args.timeout, brokers=args.brokers,
                            secure=args.secure)
            return _emit(args, result, _print_up)
        if args.command == "down":
            result = api.down(args.dir)
            return _emit(args, result, lambda r: print(r.get("message") or f"stopped {', '.join(r['stopped'])} in {r['dir']}"))
        if args.command == "status":
            report = api.status(args.dir)
            if args.json:
                print(json.dumps(report, indent=2))
                return 0 if report.get("running") else 1
            return _print_status(report)
        if args.command == "rebuild":
            if not args.cluster:
                parser.error("rebuild needs --cluster ALIAS (primary or secondary): the cluster whose data goes")
            result = api.rebuild(args.dir, args.cluster)
            return _emit(args, result, _print_rebuild)
        from sandbox import seed
        result = seed.seed(args.dir)
        return _emit(args, result, seed.print_summary)
    except api.SandboxError as exc:
        print(f"sandbox {args.command} failed: {exc}", file=sys.stderr)
        return 2


def _emit(args, result: dict, printer) -> int:
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        printer(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
