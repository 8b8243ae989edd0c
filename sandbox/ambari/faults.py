"""Fault injection for tests: gateway errors, a restart request that fails, slow restarts."""
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

    def configure(self, body: dict) -> None:
        """Add the faults named in `body`; unknown keys are an error so that a typo does not pass silently."""
        unknown = set(body) - {"http_status", "count", "fail_next_request", "request_delay_s"}
        if unknown:
            raise FaultError(f"unknown fault keys {sorted(unknown)}; use http_status+count, fail_next_request, request_delay_s")
        with self._lock:
            if "http_status" in body:
                status = int(body["http_status"])
                if not 400 <= status <= 599:
                    raise FaultError(f"http_status must be 400..599, got {status}")
                self.http_status = status
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

    def take_http_error(self):
        """The status to answer this API call with, or None; consumes one of the configured count."""
        with self._lock:
            if self.http_status is None or self.http_count <= 0:
                return None
            self.http_count -= 1
            status = self.http_status
            if self.http_count == 0:
                self.http_status = None
            return status

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
            }
