# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fault injection for tests: gateway errors before or after a write is processed, a restart request that fails, slow restarts,
restarts that complete before the broker is back.

`processed_status` is the gateway failure that hides a success: Ambari stores the write (a config version, a queued
request), then the client gets e.g. 504; a client that simply retries a restart POST queues it twice.
"""
from __future__ import annotations

import threading


class FaultError(ValueError):
    pass


class Faults:
    def __init__(self):
        self._lock = threading.Lock()
        self.http_status = None
        self.http_count = 0
        self.fail_next_request = False
        self.request_delay_s = 0.0
        self.processed_status = None
        self.processed_count = 0
        # early_completion: a restart ends COMPLETED as soon as the restart command is launched, as Ambari's start
        # script returns before the broker has registered; watch_broker ("host:port"): log when it answers again.
        self.early_completion = False
        self.watch_broker = None

    def configure(self, body: dict) -> None:
        """Add the faults named in `body`; unknown keys are an error so that a typo does not pass silently."""
        unknown = set(body) - {"http_status", "count", "fail_next_request", "request_delay_s", "processed_status", "processed_count",
                               "early_completion", "watch_broker"}
        if unknown:
            raise FaultError(f"unknown fault keys {sorted(unknown)}; use http_status+count, processed_status+processed_count, "
                             "fail_next_request, request_delay_s, early_completion, watch_broker")
        watch = body.get("watch_broker")
        if watch is not None and (not isinstance(watch, str) or not watch.rpartition(":")[2].isdigit()):
            raise FaultError(f"watch_broker must be 'host:port', got {watch!r}")
        if body.get("early_completion") and not (watch or self.watch_broker):
            raise FaultError("early_completion needs watch_broker ('host:port'): the restart completes once that broker stops answering")
        with self._lock:
            if "early_completion" in body:
                self.early_completion = bool(body["early_completion"])
            if "watch_broker" in body:
                self.watch_broker = watch
            if "processed_status" in body:
                self.processed_status = _error_status(body, "processed_status", 500, " (a gateway failure after Ambari answered)")
                self.processed_count = int(body.get("processed_count", 1))
            if "http_status" in body:
                self.http_status = _error_status(body, "http_status", 400)
                self.http_count = int(body.get("count", 1))
            if body.get("fail_next_request"):
                self.fail_next_request = True
            if "request_delay_s" in body:
                self.request_delay_s = float(body["request_delay_s"])

    def clear(self) -> None:
        with self._lock:
            self.http_status, self.http_count = None, 0
            self.fail_next_request = False
            self.request_delay_s = 0.0
            self.processed_status, self.processed_count = None, 0
            self.early_completion, self.watch_broker = False, None

    def _take(self, status_attr: str, count_attr: str):
        """The armed status, or None; consumes one of its count and disarms it at zero."""
        with self._lock:
            status, count = getattr(self, status_attr), getattr(self, count_attr)
            if status is None or count <= 0:
                return None
            setattr(self, count_attr, count - 1)
            if count == 1:
                setattr(self, status_attr, None)
            return status

    def take_processed_error(self):
        """The status to answer this write with after processing it, or None."""
        return self._take("processed_status", "processed_count")

    def take_http_error(self):
        """The status to answer this API call with before processing it, or None."""
        return self._take("http_status", "http_count")

    def take_request_failure(self) -> bool:
        with self._lock:
            fail, self.fail_next_request = self.fail_next_request, False
            return fail

    def as_dict(self) -> dict:
        with self._lock:
            return {
                "http_status": self.http_status,
                "count": self.http_count,
                "fail_next_request": self.fail_next_request,
                "request_delay_s": self.request_delay_s,
                "processed_status": self.processed_status,
                "processed_count": self.processed_count,
                "early_completion": self.early_completion,
                "watch_broker": self.watch_broker,
            }


def _error_status(body: dict, key: str, lowest: int, meaning: str = "") -> int:
    """body[key] as the HTTP error status to answer with, which must be lowest..599."""
    status = int(body[key])
    if not lowest <= status <= 599:
        raise FaultError(f"{key} must be {lowest}..599{meaning}, got {status}")
    return status
