# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lab quirk: ZooKeeper keeps a broker registration of a previous run until that run's session expires.

A broker that did not stop cleanly (killed, or ZooKeeper stopped under it) leaves its ephemeral /brokers/ids/<id> in
ZooKeeper's data. ZooKeeper restores the session with it when it starts again and expires it only
zookeeper.session.timeout.ms (6 s in Kafka 2.4.1, 18 s from 2.5) later; a broker of the same id that registers before
that exits: "Error while creating ephemeral at /brokers/ids/<id>, node already exists and owner ... does not match
current session" (KafkaZkClient.CheckedEphemeral, Kafka 2.x-3.x). On HDInsight an operator starts the broker again
from Ambari; in the lab `up` of a stopped sandbox started ZooKeeper and the brokers together, failed, stopped
ZooKeeper before the session could expire, and so failed again on every try (make demo after an unclean stop,
2026-11-27). The broker launcher therefore waits until no registration of its id is left before it starts the broker.

A minimal ZooKeeper client of the wire protocol's first requests (ZooKeeper's jute records: ConnectRequest, an
`exists` request, closeSession), standard library only: the lab's Python has no ZooKeeper library.
"""
from __future__ import annotations

import socket
import struct
import time

from sandbox.probes import ProbeError, recv_exactly, wait_for

EXISTS, CLOSE_SESSION = 3, -11  # ZooDefs.OpCode
NO_NODE = -101  # KeeperException.Code.NONODE
SESSION_TIMEOUT_MS = 10000


def _frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def _read_frame(sock: socket.socket) -> bytes:
    (length,) = struct.unpack(">i", recv_exactly(sock, 4))
    return recv_exactly(sock, length)


def znode_exists(address: str, path: str, timeout_s: float = 10.0) -> bool:
    """Whether ZooKeeper at `address` holds the znode `path`."""
    host, _sep, port = address.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=timeout_s) as sock:
        # ConnectRequest: protocolVersion, lastZxidSeen, timeOut, sessionId, passwd (a 16-byte buffer)
        sock.sendall(_frame(struct.pack(">iqiqi", 0, 0, SESSION_TIMEOUT_MS, 0, 16) + b"\0" * 16))
        _read_frame(sock)  # ConnectResponse: the new session
        encoded = path.encode()
        sock.sendall(_frame(struct.pack(">ii", 1, EXISTS) + struct.pack(">i", len(encoded)) + encoded + b"\0"))
        reply = _read_frame(sock)
        _xid, _zxid, error = struct.unpack(">iqi", reply[:16])
        sock.sendall(_frame(struct.pack(">ii", 2, CLOSE_SESSION)))
    if error not in (0, NO_NODE):
        raise OSError(f"ZooKeeper at {address} answered error {error} to exists {path}")
    return error == 0


def wait_until_unregistered(address: str, broker_id: int, timeout_s: float = 90.0) -> float:
    """Wait until ZooKeeper at `address` holds no /brokers/ids/<broker_id>; the seconds waited. No broker of this id runs
    here when its launcher starts (supervisord runs one), so a registration found is a previous run's. A ZooKeeper that
    accepts connections before it serves sessions is asked again, as probes.wait_for does for every error it knows."""
    path = f"/brokers/ids/{broker_id}"

    def unregistered():
        if znode_exists(address, path):
            raise ProbeError(f"ZooKeeper still holds {path} of a previous run")

    started = time.monotonic()
    wait_for(unregistered, f"ZooKeeper at {address} without {path}", started + timeout_s, interval=1.0)
    return time.monotonic() - started
