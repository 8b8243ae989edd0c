"""A Spark standalone cluster from pyspark's own classes: one master and two workers on 127.50.0.x.

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

SPARK_CLASS = str(Path(pyspark.__file__).parent / "bin" / "spark-class")
MASTER_IP, WORKER_IPS = "127.50.0.1", ("127.50.0.2", "127.50.0.3")
MASTER_PORT, MASTER_UI_PORT = 7077, 8090
MASTER_URL = "spark://%s:%d" % (MASTER_IP, MASTER_PORT)


def _start(command, bind_ip, log):
    # SPARK_LOCAL_IP: bind to this loopback address, not the outer interface (docs/reference/toolchain.md #7).
    env = dict(os.environ, SPARK_LOCAL_IP=bind_ip, SPARK_NO_DAEMONIZE="1")
    return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def _alive_workers():
    try:
        with urllib.request.urlopen("http://%s:%d/json/" % (MASTER_IP, MASTER_UI_PORT), timeout=2) as response:
            return json.load(response).get("aliveworkers", 0)
    except OSError:
        return 0


def _port_open(host, port):
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex((host, port)) == 0


@contextmanager
def standalone_cluster(work_dir: Path, timeout_s: float = 180.0):
    """Yield the master URL once both workers are registered; stop all three processes afterwards."""
    if _port_open(MASTER_IP, MASTER_PORT):
        raise RuntimeError("%s:%d is in use: a Spark master from an earlier run is still up" % (MASTER_IP, MASTER_PORT))
    processes, logs = [], []
    try:
        log = open(work_dir / "master.log", "wb")  # pylint: disable=consider-using-with
        logs.append(log)
        processes.append(_start([SPARK_CLASS, "org.apache.spark.deploy.master.Master", "--host", MASTER_IP, "--port", str(MASTER_PORT),
                                 "--webui-port", str(MASTER_UI_PORT)], MASTER_IP, log))
        for number, ip in enumerate(WORKER_IPS, start=1):
            worker_dir = work_dir / ("worker%d" % number)
            worker_dir.mkdir()
            log = open(work_dir / ("worker%d.log" % number), "wb")  # pylint: disable=consider-using-with
            logs.append(log)
            processes.append(_start([SPARK_CLASS, "org.apache.spark.deploy.worker.Worker", "--host", ip, "--cores", "1", "--memory", "1g",
                                     "--webui-port", str(MASTER_UI_PORT + number), "--work-dir", str(worker_dir), MASTER_URL], ip, log))
        deadline = time.monotonic() + timeout_s
        while _alive_workers() < len(WORKER_IPS):
            dead = [p.args[1] for p in processes if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                raise RuntimeError("Spark standalone cluster did not come up (%s); logs in %s" % (dead or "timeout", work_dir))
            time.sleep(1)
        yield MASTER_URL
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
