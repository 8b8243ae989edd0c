# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plan and run Ambari restarts of a service's host components: stale ones by default, one host at a time or all at once.

After each request ends COMPLETED, the restarted components must be STARTED in Ambari and, when a Kafka connection
is given, the brokers back in the cluster (ambari_broker_rejoin) before the next host restarts: COMPLETED only means
that the start script returned, and Ambari updates a component's state after a RESTART only through its periodic
status commands (agent/HeartbeatProcessor.java), so STARTED alone can be stale in either direction.
Check mode returns the same plan (what would restart) and sends no request.
"""
from __future__ import annotations

import time

from ansible_collections.kafkaops.mirror.plugins.module_utils._ambari.broker_rejoin import BrokersNotBack, ClusterNotReadable
from ansible_collections.kafkaops.mirror.plugins.module_utils._ambari.client import (
    FAILED_REQUEST_STATES,
    TERMINAL_REQUEST_STATES,
    AmbariClient,
    AmbariError,
)


class RestartInputError(AmbariError):
    """The request names a service, component or host the cluster does not have."""


class RestartFailed(AmbariError):
    """A restart request ended badly or did not finish in time; carries the partial result."""

    def __init__(self, message, result):
        super().__init__(message)
        self.result = result


# Effective maintenance states (HostRoles/maintenance_state) under which Ambari runs a service-level operation
# (MaintenanceStateHelper.isOperationAllowed, case Service): the web UI's "Restart" of a service skips the others.
SERVICE_OPERATION_ALLOWED = ("OFF", "IMPLIED_FROM_SERVICE")


def select_targets(host_components, components=None, hosts=None, only_stale=True):
    """([(component, host)] to restart, [(component, host, maintenance state)] skipped) from [(component, host, stale,
    maintenance state)], narrowed to the named components and hosts.

    A component in maintenance mode (its own, or its host's) is skipped unless its host is named in `hosts`, as an
    operation aimed at that host component would run on it in Ambari. Names that match nothing on the service are an
    input error, so that a typo does not pass as "nothing to restart".
    """
    unknown = sorted(set(components or []) - {hc[0] for hc in host_components})
    unknown += sorted(set(hosts or []) - {hc[1] for hc in host_components})
    if unknown:
        raise RestartInputError(f"{', '.join(unknown)}: not among the service's host components")
    selected = [
        (component, host, maintenance)
        for component, host, stale, maintenance in host_components
        if (stale or not only_stale) and (not components or component in components) and (not hosts or host in hosts)
    ]
    skipped = [(c, h, m) for c, h, m in selected if m not in SERVICE_OPERATION_ALLOWED and not hosts]
    return [(c, h) for c, h, m in selected if (c, h, m) not in skipped], skipped


def batches(targets, rolling):
    """One {component: [hosts]} per request: everything at once, or one host per request when rolling."""
    if not targets:
        return []
    if not rolling:
        return [_group(targets)]
    order = sorted({host for _component, host in targets})
    return [_group([t for t in targets if t[1] == host]) for host in order]


def _group(targets):
    grouped = {}
    for component, host in targets:
        grouped.setdefault(component, []).append(host)
    return {component: sorted(hosts) for component, hosts in grouped.items()}


def describe_failure(cluster_name, status, tasks):
    bad = [t for t in tasks if t.get("status") != "COMPLETED"]
    details = "; ".join(
        f"{t.get('role')} on {t.get('host_name')}: {t.get('status')}" + (f" ({t['stderr'].strip()[-300:]})" if (t.get("stderr") or "").strip() else "")
        for t in bad
    )
    return (
        f"Ambari request {status['id']} ({status.get('context')!r}) on cluster {cluster_name} ended {status['status']}"
        + (f"; failed tasks: {details}" if details else "")
        + ". Check the task output in Ambari (Background Operations), fix the cause, and run again: only stale components restart."
    )


class Restarter:
    def __init__(self, client, poll_interval=5.0, clock=time.monotonic, sleep=time.sleep):
        self.client = client
        self.poll_interval = poll_interval
        self._clock = clock
        self._sleep = sleep

    def wait(self, request_id, timeout):
        deadline = self._clock() + timeout
        while True:
            status = self.client.request_status(request_id)
            if status["status"] in TERMINAL_REQUEST_STATES:
                return status
            if self._clock() >= deadline:
                return dict(status, timed_out=True)
            self._sleep(self.poll_interval)

    def wait_started(self, service, component_hosts, timeout):
        """[(component, host, state)] still not STARTED when `timeout` ran out (empty once all are STARTED)."""
        wanted = [(component, host) for component, hosts in component_hosts.items() for host in hosts]
        deadline = self._clock() + timeout
        while True:
            states = self.client.host_component_states(service)
            pending = [(c, h, states.get((c, h))) for c, h in wanted if states.get((c, h)) != "STARTED"]
            if not pending or self._clock() >= deadline:
                return pending
            self._sleep(self.poll_interval)


def _stale_lines(targets):
    return "".join(f"{component} on {host}\n" for component, host in sorted(targets))


def restart_components(params, check_mode, client=None, restarter=None, rejoin=None):
    """Restart what the plan selects; `rejoin` (a RejoinWaiter, or None) waits for the Kafka brokers after each request."""
    service = params["service"]
    client = client or AmbariClient.from_params(params)
    restarter = restarter or Restarter(client, poll_interval=params["poll_interval"])
    host_components = client.host_components(service)
    if not host_components:
        raise RestartInputError(f"service {service} has no host components in cluster {client.cluster_name}; check the service name")
    try:
        targets, skipped = select_targets(host_components, params.get("components"), params.get("hosts"), params["only_stale"])
    except RestartInputError as exc:
        raise RestartInputError(f"service {service} in cluster {client.cluster_name}: {exc}") from None
    plan = batches(targets, params["rolling"])
    result = {
        "changed": bool(plan),
        "restarted": [{"service": service, "component": c, "host": h} for c, h in targets],
        "in_maintenance": [{"service": service, "component": c, "host": h, "maintenance_state": m} for c, h, m in skipped],
        "requests": [],
        "diff": {"before": _stale_lines(targets), "after": "", "before_header": f"{service} components to restart", "after_header": "after restart"},
    }
    if check_mode or not plan:
        return result
    context = params["context"] or f"Restart {'stale ' if params['only_stale'] else ''}{service} components (kafkaops.mirror)"
    for index, component_hosts in enumerate(plan, start=1):
        label = context if len(plan) == 1 else f"{context} [{index}/{len(plan)}]"
        # Read before the restart, so that an unreadable cluster stops the run before anything more goes down.
        before = _snapshot(client, rejoin, params, result, len(plan)) if rejoin and params["wait"] else None
        request_id = client.restart(service, component_hosts, label)
        entry = {"id": request_id, "context": label, "hosts": sorted({h for hs in component_hosts.values() for h in hs}), "status": "Accepted"}
        result["requests"].append(entry)
        if not params["wait"]:
            continue
        status = restarter.wait(request_id, params["wait_timeout"])
        entry["status"] = status["status"]
        if status.get("timed_out"):
            raise RestartFailed(
                f"Ambari request {request_id} ({label!r}) on cluster {client.cluster_name} is still {status['status']} "
                f"({status.get('progress')}%) after {params['wait_timeout']} s; it keeps running in Ambari. "
                f"Watch it under Background Operations or raise wait_timeout.",
                result,
            )
        if status["status"] in FAILED_REQUEST_STATES:
            raise RestartFailed(describe_failure(client.cluster_name, status, client.request_tasks(request_id)), result)
        _wait_back(client, restarter, rejoin, before, component_hosts, entry, params, result)
    return result


def _snapshot(client, rejoin, params, result, planned):
    """The Kafka view before the next request; unreadable, the error before the first request (nothing changed), a
    RestartFailed with the requests made so far after it."""
    try:
        return rejoin.snapshot(params["wait_timeout"])
    except ClusterNotReadable as exc:
        if not result["requests"]:
            raise
        raise RestartFailed(
            f"After {len(result['requests'])} of {planned} restart requests on cluster {client.cluster_name}, the Kafka cluster "
            f"could not be read before the next one: {exc}. No further host was restarted; check the brokers, and run again "
            "(the hosts still stale are restarted then).",
            result,
        ) from None


def _wait_back(client, restarter, rejoin, before, component_hosts, entry, params, result):
    """Wait until the request's components are STARTED in Ambari and (with `rejoin`) the brokers are back in Kafka."""
    where = f"after Ambari request {entry['id']} ({entry['context']!r}) on cluster {client.cluster_name} COMPLETED"
    not_started = restarter.wait_started(params["service"], component_hosts, params["wait_timeout"])
    if not_started:
        states = ", ".join(f"{c} on {h} is {state or 'unknown'}" for c, h, state in not_started)
        raise RestartFailed(
            f"{where}, {states} after {params['wait_timeout']} s; look at the component's log on that host, start it in Ambari, "
            "and run again before restarting further hosts.",
            result,
        )
    entry["started"] = True
    if rejoin is None:
        return
    try:
        rejoin.wait(before, params["wait_timeout"])
    except BrokersNotBack as exc:
        raise RestartFailed(
            f"{where}, the Kafka cluster is not back to where it was before the restart after {params['wait_timeout']} s: {exc}. "
            "No further host was restarted; check the broker's log (server.log) on the restarted host, and run again once its "
            "partitions are in sync.",
            result,
        ) from None
    entry["brokers_back"] = True
