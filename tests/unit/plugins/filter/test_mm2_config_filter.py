# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter kafkaops.mirror.mm2_config: errors become AnsibleFilterError, warnings reach Ansible, redact hides secrets."""
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.kafkaops.mirror.plugins.filter import mm2_config as plugin

MODEL = {
    "clusters": [
        {"alias": "primary", "bootstrap_servers": "a:9092", "broker_count": 1, "sasl_jaas_config": "jaas-secret"},
        {"alias": "secondary", "bootstrap_servers": "b:9092", "broker_count": 1},
    ],
    "flows": [{"source": "primary", "target": "secondary"}],
}


def test_invalid_model_raises_filter_error_listing_problems():
    with pytest.raises(AnsibleFilterError, match="tasks.max"):
        plugin.mm2_config(dict(MODEL, properties={"task.max": 2}))


def test_warnings_are_shown(monkeypatch):
    shown = []
    monkeypatch.setattr(plugin._display, "warning", shown.append)
    result = plugin.mm2_config(dict(MODEL, properties={"topics.blacklist": "x"}))
    assert result["warnings"] and shown == ["mirrormaker2: " + w for w in result["warnings"]]


def test_files_are_rendered_and_redacted_on_request():
    plain = plugin.mm2_config(MODEL)
    redacted = plugin.mm2_config(MODEL, redact=True)
    name = "connect-mirror-maker.properties"
    assert "primary.sasl.jaas.config=jaas-secret" in plain["files"][name]
    assert "jaas-secret" not in redacted["files"][name] and "primary.sasl.jaas.config=VALUE_REDACTED" in redacted["files"][name]
    assert plain["has_secrets"] and redacted["secret_keys"] == ["primary.sasl.jaas.config"]
    assert plugin.FilterModule().filters()["mm2_config"] is plugin.mm2_config
