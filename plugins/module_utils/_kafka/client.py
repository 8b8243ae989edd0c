# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One way to reach a Kafka cluster from a kafkaops.mirror module.

Usage (doc fragment kafkaops.mirror.kafka_connection documents the options, kafka_connection_options holds their spec):
    spec = kafka_connection_argument_spec(); spec.update(my_options); module = AnsibleModule(spec, ...); ensure_kafka_python(module)
    try:
        with KafkaConnection(module.params) as kafka:   # closes every client it built
            admin = kafka.admin(); brokers = kafka.cluster()["brokers"]; consumer = kafka.consumer(group_id="g")
            with kafka.reading("topics"): ...   # a KafkaError in here becomes a KafkaConnectionError naming what and where
    except KafkaConnectionError as exc: module.fail_json(msg=str(exc))   # names servers, protocol, unusable advertised addresses, fixes
"""
from __future__ import annotations

import importlib.util
import logging
import re
import socket
import threading
import traceback
from contextlib import contextmanager

from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.connection_options import connection_option_errors
from ansible_collections.kafkaops.mirror.plugins.module_utils._kafka.kerberos import KerberosLogin, KerberosLoginError

try:
    import kafka
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
    from kafka.errors import KafkaError
except ImportError:
    HAS_KAFKA = False
    KAFKA_IMPORT_ERROR = traceback.format_exc()
    KAFKA_VERSION = None
    # Placeholders so that unit tests can import this file and monkeypatch the flags.
    KafkaAdminClient = KafkaConsumer = KafkaProducer = None
    KafkaError = Exception
else:
    HAS_KAFKA = True
    KAFKA_IMPORT_ERROR = None
    KAFKA_VERSION = kafka.__version__

# The admin API used here (dict-based create_topics, list_partition_offsets, list_group_offsets) is kafka-python 3.
# Must be kept in sync with requirements.txt.
MINIMUM_KAFKA_PYTHON_VERSION = "3.0.0"

_OPTIONAL_CLIENT_KEYS = (
    "sasl_mechanism",
    "sasl_kerberos_service_name",
    "sasl_plain_username",
    "sasl_plain_password",
    "ssl_cafile",
    "ssl_certfile",
    "ssl_keyfile",
    "ssl_password",
)
# A TCP probe of an advertised address must not take the whole request timeout per broker.
_PROBE_TIMEOUT_S = 5.0

HOSTS_SYNC_FIX = "make the advertised names resolve on this host (role kafkaops.mirror.hosts_sync copies the other cluster's wn*/zk* entries into /etc/hosts)"
IP_ADVERTISING_FIX = (
    "or make the brokers advertise IP addresses (role kafkaops.mirror.ambari_kafka: IP advertising in kafka-env, each listener bound to "
    "0.0.0.0 with ambari_kafka_bind_all_interfaces, keeping its protocol)"
)


def ensure_kafka_python(module):
    """Fail the module with the standard message when kafka-python is missing or too old.

    Ansible's own helpers are imported here, not with the file: the mirror exporter (_mirror/exporter.py) runs this package on
    the MirrorMaker host without Ansible."""
    from ansible.module_utils.basic import missing_required_lib  # pylint: disable=import-outside-toplevel
    from ansible.module_utils.compat.version import LooseVersion  # pylint: disable=import-outside-toplevel

    if not HAS_KAFKA:
        module.fail_json(msg=missing_required_lib("kafka-python"), exception=KAFKA_IMPORT_ERROR)
    if LooseVersion(KAFKA_VERSION) < LooseVersion(MINIMUM_KAFKA_PYTHON_VERSION):
        module.fail_json(
            msg=f"kafka-python {KAFKA_VERSION} is installed on this host; kafkaops.mirror needs {MINIMUM_KAFKA_PYTHON_VERSION} or later "
            f"(pip install 'kafka-python>={MINIMUM_KAFKA_PYTHON_VERSION}' for the Python that runs the module)."
        )


class KafkaConnectionError(Exception):
    """The cluster could not be reached or used; the message says where, how and what to do."""


def client_config(params):
    """kafka-python keyword arguments shared by the admin client, consumers and producers."""
    config = dict(
        bootstrap_servers=list(params["bootstrap_servers"]),
        security_protocol=params.get("security_protocol") or "PLAINTEXT",
        ssl_check_hostname=params.get("ssl_check_hostname", True),
        request_timeout_ms=params.get("request_timeout_ms") or 30000,
        bootstrap_timeout_ms=params.get("request_timeout_ms") or 30000,
        client_id="kafkaops.mirror",
    )
    for key in _OPTIONAL_CLIENT_KEYS:
        if params.get(key) is not None:
            config[key] = params[key]
    if params.get("api_version"):
        config["api_version"] = tuple(int(part) for part in params["api_version"].split("."))
    return config


# What a broker refused while kafka-python bootstrapped: kafka-python 3 retries a refused login or TLS handshake until its
# bootstrap timeout and then raises only "Unable to bootstrap", logging the reason on its network loggers.
_REFUSALS = re.compile(r"(SaslAuthenticationFailedError[^(]*|Authentication failed[^(]*|CERTIFICATE_VERIFY_FAILED[^(]*|"
                       r"certificate (unknown|required|expired)[^(]*|UnsupportedSaslMechanism[^(]*|IllegalSaslState[^(]*)")


class _RefusalLog(logging.Handler):
    """Keeps the last refusal kafka-python's network loggers report while a client bootstraps; `settled` is set at the first
    one (and by _build_or_refusal when the build ends)."""

    LOGGER = "kafka.net"

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.refusal = None
        self.settled = threading.Event()
        self._logger = logging.getLogger(self.LOGGER)
        self._level = self._logger.level

    def emit(self, record):
        found = _REFUSALS.search(record.getMessage())
        if found:
            self.refusal = found.group(0).strip().rstrip(":;,")
            self.settled.set()

    def __enter__(self):
        self._logger.addHandler(self)
        if not self._logger.isEnabledFor(logging.WARNING):
            self._logger.setLevel(logging.WARNING)
        return self

    def __exit__(self, *exc_info):
        self._logger.removeHandler(self)
        self._logger.setLevel(self._level)


class _Refused(KafkaError):
    """A broker refused the login or the TLS handshake while the client was still bootstrapping."""


def _build_or_refusal(factory, config, refusals):
    """factory(**config), or _Refused at the first refusal a broker logs while it builds. kafka-python 3 retries a refused
    login or TLS handshake until its bootstrap timeout (30 s by default) before it raises; Kafka's own clients give up at the
    first one (an AuthenticationException is not retried), and so does this. The build goes on in a daemon thread, as
    kafka-python's own IO thread is one, and a client it still makes after the refusal is closed there."""
    outcome, lock = {}, threading.Lock()

    def build():
        try:
            client = factory(**config)
        except BaseException as exc:  # pylint: disable=broad-exception-caught
            # Handed to the caller's thread below, which raises it as it is (so a build never ends without an outcome).
            with lock:
                outcome["error"] = exc
        else:
            with lock:
                abandoned = outcome.setdefault("client", client) is not client
            if abandoned:
                client.close()
        finally:
            refusals.settled.set()

    threading.Thread(target=build, name="kafkaops-bootstrap", daemon=True).start()
    refusals.settled.wait()
    with lock:
        if not outcome:
            outcome["client"] = None  # abandoned: a client the build still makes is closed there
            raise _Refused(refusals.refusal)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["client"]


def principal_of(params):
    """Who a connection authenticates as, for messages (never a secret): the SASL user or Kerberos principal, the client
    certificate, or nobody (ANONYMOUS to the broker)."""
    protocol = params.get("security_protocol") or "PLAINTEXT"
    if protocol.startswith("SASL_"):
        if params.get("sasl_mechanism") == "GSSAPI":
            return f"Kerberos principal {params.get('sasl_kerberos_principal') or '(the ticket cache of kinit)'}"
        return f"SASL user {params.get('sasl_plain_username')!r} ({params.get('sasl_mechanism')})"
    if protocol == "SSL" and params.get("ssl_certfile"):
        return f"the client certificate {params['ssl_certfile']}"
    return "no client identity (the broker's ANONYMOUS principal)"


def gssapi_available():
    """Whether kafka-python's GSSAPI mechanism can load (it imports the gssapi package only when it first connects)."""
    return importlib.util.find_spec("gssapi") is not None


def probe_address(host, port, timeout=_PROBE_TIMEOUT_S):
    """Why host:port cannot be used from here (None when it resolves and accepts TCP)."""
    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        return f"does not resolve ({exc.strerror})"
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as exc:
        return f"resolves but refuses TCP ({exc.strerror or exc})"


class KafkaConnection:
    """Builds kafka-python clients for one cluster from module parameters and explains failures."""

    def __init__(self, params):
        self.params = params
        errors = connection_option_errors(params)
        if errors:
            raise KafkaConnectionError(f"Invalid Kafka connection options for {self.where}: {'; '.join(errors)}.")
        self.config = client_config(params)
        self._kerberos = None
        if params.get("sasl_kerberos_keytab"):
            self._kerberos = KerberosLogin(params["sasl_kerberos_principal"], params["sasl_kerberos_keytab"])
        self._admin = None
        self._cluster = None
        self._brokers_checked = False
        self._clients = []

    @property
    def where(self):
        servers = ", ".join(self.params.get("bootstrap_servers") or []) or "(none)"
        return f"bootstrap servers {servers} (security_protocol {self.params.get('security_protocol') or 'PLAINTEXT'})"

    @property
    def principal(self):
        return principal_of(self.params)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    @contextmanager
    def reading(self, what):
        """Reports a Kafka request that fails while reading `what` ("topics") as a KafkaConnectionError naming this cluster."""
        try:
            yield
        except KafkaError as exc:
            raise KafkaConnectionError(f"Reading {what} from {self.where} failed: {exc.__class__.__name__}: {exc}") from exc

    def admin(self, check_brokers=True):
        """The admin client, after checking that every advertised broker address is usable from here.

        check_brokers=False: a caller that probes the advertised addresses itself (kafka_preflight, which reports them
        instead of failing) gets the bootstrapped client without probing them twice; what it learned while bootstrapping
        (ApiVersions, metadata) needs no broker but the bootstrap one."""
        if self._admin is None:
            self._admin = self._build(KafkaAdminClient, self.config)
        if check_brokers and not self._brokers_checked:
            self.check_advertised_brokers()
            self._brokers_checked = True
        return self._admin

    def cluster(self):
        """{cluster_id, controller_id, brokers: [{node_id, host, port, rack}]}: the metadata the bootstrap servers returned.

        This is read from the metadata kafka-python fetched while bootstrapping, not from a new request: a new request
        already goes to an advertised address, which is what may be unusable from here. DescribeCluster is not used
        either: kafka-python 3.0.12 fails on DescribeCluster v0 responses (KeyError 'endpoint_type', Kafka 2.8-3.x).
        """
        if self._cluster is None:
            if self._admin is None:
                self._admin = self._build(KafkaAdminClient, self.config)
            # pylint: disable-next=protected-access
            metadata = self._admin._manager.cluster
            controller = metadata.controller
            self._cluster = dict(
                cluster_id=metadata.cluster_id,
                controller_id=controller.node_id if controller is not None else None,
                brokers=sorted(
                    (dict(node_id=b.node_id, host=b.host, port=b.port, rack=b.rack) for b in metadata.brokers()),
                    key=lambda broker: broker["node_id"],
                ),
            )
        return self._cluster

    def metadata(self):
        """{brokers: [{node_id, ...}], topics: [...]}: one Metadata request for every topic, answered by one broker.

        Brokers and topics come from the same answer, so they are that broker's metadata cache at one moment. Asked
        separately, they can come from two brokers: a broker that has just registered answers with an empty cache until
        the controller sends it the partitions (ZooKeeper mode sends the other brokers its registration first), and its
        "no topics" next to another broker's full broker list would read as a whole cluster with nothing to wait for.
        kafka-python 3 sends this request itself for describe_topics and keeps only the topics; this asks for both.
        """
        admin = self.admin()
        # pylint: disable-next=protected-access
        return admin._manager.run(admin._get_cluster_metadata, None)

    def check_advertised_brokers(self):
        """Fail with the cross-network explanation when an advertised broker address is not usable from here."""
        unusable = []
        for broker in self.cluster()["brokers"]:
            reason = probe_address(broker["host"], broker["port"])
            if reason:
                unusable.append(f"broker {broker['node_id']} advertised as {broker['host']}:{broker['port']} {reason}")
        if unusable:
            raise KafkaConnectionError(
                f"Metadata came back from {self.where}, but clients must then talk to every broker at its advertised address, "
                f"and from {socket.gethostname()} these cannot be used: {'; '.join(unusable)}. "
                f"Fix: {HOSTS_SYNC_FIX}, {IP_ADVERTISING_FIX}."
            )

    def consumer(self, **overrides):
        """A KafkaConsumer without a group (no commits) unless group_id is given; overrides win."""
        self.admin()
        config = dict(self.config, group_id=None, enable_auto_commit=False)
        config.update(overrides)
        return self._track(self._build(KafkaConsumer, config))

    def producer(self, **overrides):
        """A KafkaProducer; overrides (acks, linger_ms, ...) win."""
        self.admin()
        config = dict(self.config)
        config.update(overrides)
        return self._track(self._build(KafkaProducer, config))

    def close(self):
        for client in self._clients + ([self._admin] if self._admin else []):
            try:
                client.close()
            except Exception:  # pylint: disable=broad-exception-caught
                # Closing is best effort: the module result is already decided.
                pass
        self._clients = []
        self._admin = None
        if self._kerberos is not None:
            self._kerberos.close()

    def _track(self, client):
        self._clients.append(client)
        return client

    def _build(self, factory, config):
        if config.get("sasl_mechanism") == "GSSAPI" and not gssapi_available():
            raise KafkaConnectionError(
                f"sasl_mechanism GSSAPI for {self.where} needs the Python package gssapi (and the MIT Kerberos libraries) for the "
                "Python that runs the module: pip install gssapi (Debian/Ubuntu: apt install libkrb5-dev first)."
            )
        if self._kerberos is not None:
            try:
                self._kerberos.open()
            except KerberosLoginError as exc:
                raise KafkaConnectionError(f"Kerberos login for {self.where} failed: {exc}.") from exc
        with _RefusalLog() as refusals:
            try:
                return _build_or_refusal(factory, config, refusals)
            except KafkaError as exc:
                if refusals.refusal:
                    raise KafkaConnectionError(
                        f"{self.where} refused {self.principal}: {refusals.refusal}. Check the credentials (password, keytab) and "
                        "that the client trusts the brokers' CA (ssl_cafile) and the brokers trust the client's certificate."
                    ) from exc
                raise KafkaConnectionError(
                    f"Could not fetch cluster metadata from any of the {self.where} within {config['bootstrap_timeout_ms']} ms: {exc}. "
                    f"Check from {socket.gethostname()} that the addresses resolve and the ports are open, that the listener there speaks "
                    f"{config['security_protocol']}, and the SASL/TLS options."
                ) from exc
