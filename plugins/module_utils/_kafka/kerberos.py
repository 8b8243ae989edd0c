# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Kerberos identity (principal + keytab) for the kafka-python clients of one module run.

kafka-python's GSSAPI mechanism (python-gssapi) takes no principal or keytab: it uses the default credential
cache. So a module given sasl_kerberos_principal and sasl_kerberos_keytab runs MIT `kinit -k -t <keytab>
<principal>` into a credential cache of its own (a private directory, removed afterwards) and points KRB5CCNAME
at it for the life of the module process. Without a keytab the clients use whatever ticket the user obtained
with kinit beforehand. The Spark validation job passes the same pair to librdkafka (sasl.kerberos.principal /
sasl.kerberos.keytab), which runs kinit itself; where its librdkafka has no GSSAPI (PyPI's wheels) it reads with kafka-python
and logs in with kinit the same way (roles/mirror_validation/files/mirror_validation/connection.py kerberos_login).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

CCACHE_VARIABLE = "KRB5CCNAME"


class KerberosLoginError(Exception):
    """kinit is missing or refused the keytab; the message says which and what to do."""


class KerberosLogin:
    """One kinit into a private credential cache, active (KRB5CCNAME) until close()."""

    # One identity per process: KRB5CCNAME is process-wide, and clients open connections lazily. Connections with the
    # same identity share the active login; the last one to close ends it.
    _active = None
    _users = 0

    def __init__(self, principal, keytab):
        self.principal = principal
        self.keytab = keytab
        self._directory = None
        self._previous_ccache = None
        self._holding = False

    def open(self):
        if self._holding:
            return
        active = KerberosLogin._active
        if active is not None:
            if (active.principal, active.keytab) == (self.principal, self.keytab):
                KerberosLogin._users += 1
                self._holding = True
                return
            raise KerberosLoginError(
                f"this module run already uses Kerberos principal {active.principal}; both clusters of one task must use the same "
                f"principal and keytab (got {self.principal} as well), because kafka-python reads one credential cache per process"
            )
        kinit = shutil.which("kinit")
        if kinit is None:
            raise KerberosLoginError(
                "sasl_kerberos_keytab needs MIT Kerberos' kinit on this host (package krb5-user on Debian/Ubuntu, krb5-workstation "
                "on RHEL), or run kinit yourself and leave sasl_kerberos_keytab unset"
            )
        if not os.path.isfile(self.keytab):
            raise KerberosLoginError(f"sasl_kerberos_keytab {self.keytab} is not a file on this host")
        self._directory = tempfile.mkdtemp(prefix="kafkaops-mirror-krb5-")
        ccache = "FILE:" + os.path.join(self._directory, "ccache")
        environment = dict(os.environ, **{CCACHE_VARIABLE: ccache})
        result = subprocess.run([kinit, "-k", "-t", self.keytab, self.principal], env=environment, capture_output=True, text=True,
                                check=False, timeout=60)
        if result.returncode != 0:
            self._remove_directory()
            raise KerberosLoginError(
                f"kinit -k -t {self.keytab} {self.principal} failed ({result.returncode}): {(result.stderr or result.stdout).strip()}; "
                "check the principal's spelling and realm (klist -k -t <keytab> lists what the keytab holds) and /etc/krb5.conf"
            )
        self._previous_ccache = os.environ.get(CCACHE_VARIABLE)
        os.environ[CCACHE_VARIABLE] = ccache
        KerberosLogin._active = self
        KerberosLogin._users = 1
        self._holding = True

    def close(self):
        if not self._holding:
            return
        self._holding = False
        KerberosLogin._users -= 1
        if KerberosLogin._users == 0:
            KerberosLogin._active.end()

    def end(self):
        """Restore the caller's KRB5CCNAME and remove the private credential cache."""
        if self._previous_ccache is None:
            os.environ.pop(CCACHE_VARIABLE, None)
        else:
            os.environ[CCACHE_VARIABLE] = self._previous_ccache
        KerberosLogin._active = None
        self._remove_directory()

    def _remove_directory(self):
        if self._directory:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None
