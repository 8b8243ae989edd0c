# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is it up? Raw Kafka metadata, HTTP and SSH probes, and the free-port check before starting anything.

The Kafka probe speaks the wire protocol itself (Metadata v4, supported by Kafka 1.0 through 4.x and
both test providers) so that it never connects to, or resolves, the advertised host: a broker that
advertises an FQDN only its own cluster's nodes can resolve still counts as up.
"""
from __future__ import annotations

import errno
import http.client
import socket
import struct
import time
from dataclasses import dataclass

_METADATA_API_KEY = 3
_METADATA_VERSION = 4


@dataclass(frozen=True)
class AdvertisedBroker:
    node_id: int
    host: str
    port: int


class ProbeError(RuntimeError):
    pass


def recv_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ProbeError("connection closed by the broker in the middle of a reply")
        data += chunk
    return data


def _kafka_string(value: str) -> bytes:
    raw = value.encode()
    return struct.pack(">h", len(raw)) + raw


def kafka_metadata(host: str, port: int, timeout: float = 2.0) -> list:
    """The brokers a Kafka broker advertises, from one Metadata request for no topics."""
    correlation_id = 1
    request = struct.pack(">hhi", _METADATA_API_KEY, _METADATA_VERSION, correlation_id) + _kafka_string("kafkaops-sandbox")
    request += struct.pack(">i", 0) + b"\x00"  # topics: empty array (none), allow_auto_topic_creation: false
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(struct.pack(">i", len(request)) + request)
        (size,) = struct.unpack(">i", recv_exactly(sock, 4))
        reply = recv_exactly(sock, size)
    (got_id, _throttle, count) = struct.unpack_from(">iii", reply, 0)
    if got_id != correlation_id:
        raise ProbeError(f"reply carries correlation id {got_id}, expected {correlation_id}")
    pos = 12
    brokers = []
    for _broker in range(count):
        node_id, host_len = struct.unpack_from(">ih", reply, pos)
        pos += 6
        advertised = reply[pos:pos + host_len].decode()
        pos += host_len
        broker_port, rack_len = struct.unpack_from(">ih", reply, pos)
        pos += 6 + max(rack_len, 0)
        brokers.append(AdvertisedBroker(node_id, advertised, broker_port))
    return brokers


def broker_count_at_least(host: str, port: int, count: int) -> list:
    """The brokers the broker at host:port advertises, once there are at least `count` (raises ProbeError before)."""
    brokers = kafka_metadata(host, port)
    if len(brokers) < count:
        raise ProbeError(f"{host}:{port} knows {len(brokers)} of {count} brokers")
    return brokers


def http_answers(host: str, port: int, path: str = "/api/v1/clusters", timeout: float = 2.0) -> int:
    """The HTTP status of a GET (any status counts as answering: the emulator wants auth)."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("GET", path)
        return conn.getresponse().status
    finally:
        conn.close()


def ssh_banner(host: str, port: int = 22, timeout: float = 2.0) -> str:
    """The identification line an SSH server sends first ("SSH-2.0-...")."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        line = sock.makefile("rb").readline(256).decode(errors="replace").strip()
    if not line.startswith("SSH-"):
        raise ProbeError(f"{host}:{port} answered {line!r}, not an SSH identification")
    return line


def port_in_use(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return True
            raise
    return False


def wait_for(check, what: str, deadline: float, alive=None, interval: float = 0.05):
    """Call check() until it returns without raising; fail with the last error after `deadline` (monotonic).

    `alive()` is asked between tries: when it returns a message, the process behind `what` has died.
    """
    last_error = None
    while True:
        try:
            return check()
        except (OSError, ProbeError, http.client.HTTPException, struct.error) as exc:
            last_error = exc
        if alive is not None:
            dead = alive()
            if dead:
                raise ProbeError(f"{what} did not come up: {dead}")
        if time.monotonic() >= deadline:
            raise ProbeError(f"{what} did not answer in time (last error: {last_error})")
        time.sleep(interval)
