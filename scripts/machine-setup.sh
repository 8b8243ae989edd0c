#!/usr/bin/env bash
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
#
# What `make demo` and `make test` need from the machine beyond Python, installed when missing.
#   machine-setup.sh demo   Java 17+ (Spark, Kafka), Maven (Kafka's jars), sshd + sudo + unshare (the sandbox's nodes are SSH hosts)
#   machine-setup.sh test   the same, plus stunnel4 (the TLS listener of the connection tests),
#                           chromium-headless-shell (the validation report's layout test renders the page) and
#                           prometheus (promtool tests the alerting rules; the exporter's test runs a Prometheus of its own),
#                           krb5-kdc, krb5-admin-server and krb5-user (the secure lab's MIT Kerberos KDC: krb5kdc, kdb5_util,
#                           kadmin.local; kinit and klist for the GSSAPI clients), libkrb5-dev and gcc (python-gssapi's build)
#   machine-setup.sh bench  Java, plus kcat (bench/validation.py's dump + sort + diff pipeline)
# As root with apt-get, missing Debian packages are installed. Otherwise the script names the one command
# to run and fails, except for what only the root-only strict sandbox needs (sshd, sudo), which a
# non-root sandbox does not use.
set -euo pipefail

purpose=${1:-test}

java_major() {
  command -v java >/dev/null 2>&1 || { echo 0; return; }
  java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1
}

missing=()
root_only=()
if [ "$(java_major)" -lt 17 ]; then
  missing+=(openjdk-17-jre-headless)
fi
# Maven fetches the Kafka releases the sandbox runs (sandbox/kafka_dist.py).
command -v mvn >/dev/null 2>&1 || missing+=(maven)
command -v unshare >/dev/null 2>&1 || missing+=(util-linux)
command -v sshd >/dev/null 2>&1 || [ -x /usr/sbin/sshd ] || root_only+=(openssh-server)
command -v sudo >/dev/null 2>&1 || root_only+=(sudo)
if [ "$purpose" = test ]; then
  command -v stunnel4 >/dev/null 2>&1 || missing+=(stunnel4)
  command -v chromium-headless-shell >/dev/null 2>&1 || command -v chromium >/dev/null 2>&1 || missing+=(chromium-headless-shell)
  command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
  # The secure lab's KDC (sandbox/lab_kerberos.py): each package's own command, as they may be found in /usr/sbin.
  command -v krb5kdc >/dev/null 2>&1 || [ -x /usr/sbin/krb5kdc ] || missing+=(krb5-kdc)
  command -v kadmin.local >/dev/null 2>&1 || [ -x /usr/sbin/kadmin.local ] || missing+=(krb5-admin-server)
  command -v kinit >/dev/null 2>&1 || missing+=(krb5-user)
  # python-gssapi for the secure lab's MirrorMaker node: PyPI has no Linux wheel, pip compiles it (sandbox/wheelhouse.py).
  command -v krb5-config >/dev/null 2>&1 || missing+=(libkrb5-dev)
  command -v gcc >/dev/null 2>&1 || missing+=(gcc)
fi
if [ "$purpose" = bench ]; then
  command -v kcat >/dev/null 2>&1 || missing+=(kcat)
fi

if [ "$(id -u)" -eq 0 ]; then
  missing+=("${root_only[@]}")
elif [ ${#root_only[@]} -gt 0 ]; then
  echo "machine-setup: not root, so the sandbox runs its nodes as local connections; ${root_only[*]} would let it run them as SSH hosts with sudo as on HDInsight"
fi

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "machine-setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # Debian's prometheus package starts its own system service on install; the tests start theirs as a child process on a
  # 127.x address and nothing else may run: a policy-rc.d that refuses every start, for this install only, where none exists.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 0755 /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get install -y -qq "${missing[@]}" >/dev/null || { apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; }
  exit 0
fi
echo "machine-setup: missing ${missing[*]}; install them with: sudo apt-get install -y ${missing[*]} (or your system's equivalent), then run make again" >&2
exit 1
