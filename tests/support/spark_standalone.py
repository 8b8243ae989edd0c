# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Spark standalone cluster from pyspark's own classes: one master and two workers on 127.<net>.0.1-3, inside the
test's own sandbox block (the sandbox's clusters use third octets 1 and up), so that two runs on different nets
never meet.

Every process is started here and stopped by its PID at the end.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pyspark

from sandbox.jvm import SHORT_LIVED_JVM_OPTIONS

SPARK_CLASS = str(Path(pyspark.__file__).parent / "bin" / "spark-class")
MASTER_PORT, MASTER_UI_PORT = 7077, 8090
WORKERS = 2


def addresses(net):
    """(master IP, worker IPs) in sandbox block 127.<net>.0.0/16."""
    return "127.%d.0.1" % net, tuple("127.%d.0.%d" % (net, 2 + number) for number in range(WORKERS))


def _start(command, bind_ip, log):
    # SPARK_LOCAL_IP: bind to this loopback address, not the outer interface (docs/reference/toolchain.md #7).
    env = dict(os.environ, SPARK_LOCAL_IP=bind_ip, SPARK_NO_DAEMONIZE="1", SPARK_DAEMON_JAVA_OPTS=SHORT_LIVED_JVM_OPTIONS)
    return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def _alive_workers(master_ip):
    try:
        with urllib.request.urlopen("http://%s:%d/json/" % (master_ip, MASTER_UI_PORT), timeout=2) as response:
            return json.load(response).get("aliveworkers", 0)
    except OSError:
        return 0


def _port_open(host, port):
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex((host, port)) == 0


@contextmanager
def standalone_cluster(work_dir: Path, net: int, timeout_s: float = 180.0):
    """Yield (master URL, master IP) once both workers are registered; stop all three processes afterwards."""
    master_ip, worker_ips = addresses(net)
    master_url = "spark://%s:%d" % (master_ip, MASTER_PORT)
    if _port_open(master_ip, MASTER_PORT):
        raise RuntimeError("%s:%d is in use: a Spark master from an earlier run is still up" % (master_ip, MASTER_PORT))
    processes, logs = [], []
    try:
        log = open(work_dir / "master.log", "wb")  # pylint: disable=consider-using-with
        logs.append(log)
        processes.append(_start([SPARK_CLASS, "org.apache.spark.deploy.master.Master", "--host", master_ip, "--port", str(MASTER_PORT),
                                 "--webui-port", str(MASTER_UI_PORT)], master_ip, log))
        for number, ip in enumerate(worker_ips, start=1):
            worker_dir = work_dir / ("worker%d" % number)
            worker_dir.mkdir()
            log = open(work_dir / ("worker%d.log" % number), "wb")  # pylint: disable=consider-using-with
            logs.append(log)
            processes.append(_start([SPARK_CLASS, "org.apache.spark.deploy.worker.Worker", "--host", ip, "--cores", "1", "--memory", "1g",
                                     "--webui-port", str(MASTER_UI_PORT + number), "--work-dir", str(worker_dir), master_url], ip, log))
        deadline = time.monotonic() + timeout_s
        while _alive_workers(master_ip) < len(worker_ips):
            dead = [p.args[1] for p in processes if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                raise RuntimeError("Spark standalone cluster did not come up (%s); logs in %s" % (dead or "timeout", work_dir))
            time.sleep(1)
        yield master_url, master_ip
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for log in logs:
            log.close()
