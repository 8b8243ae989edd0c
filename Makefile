# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# Two commands on a fresh machine: `make demo` and `make test`.
SHELL := /bin/bash
# The virtualenv's Python, so Ansible's controller, pytest and the lab's own tools: the distribution's /usr/bin/python3 when it
# is a CPython 3.11-3.13 with venv (ansible-core 2.19's controller range), else python3 from PATH. Debian's has libpython
# linked in; this machine's pyenv 3.11.7 loads it as a shared library, and Ansible on it used 1.15-1.23 times the CPU per
# task (bench/controller_python.py), on a 2-core machine where Ansible is most of the test run's CPU. PYTHON=... picks another.
PYTHON ?= $(or $(shell for candidate in /usr/bin/python3 python3; do "$$candidate" -c 'import sys, ensurepip, venv; \
  sys.exit(not (3, 11) <= sys.version_info[:2] <= (3, 13))' 2>/dev/null && { echo "$$candidate"; break; }; done),python3)
VENV := $(CURDIR)/.venv
BIN := $(VENV)/bin
SANDBOX_DIR ?= $(CURDIR)/.sandbox
PROVIDER ?= apache
KEEP ?= 0

# ansible-doc, molecule and the tests find the collection through this path (docs/reference/toolchain.md #3): the folder
# where `make venv` links the checkout in every layout, a CI checkout at .../ansible_collections/kafkaops/mirror included
# (tests.support.checkout.collections_path(), pytest.ini's pythonpath).
COLLECTIONS_PATH := $(VENV)/collections
export ANSIBLE_COLLECTIONS_PATH := $(COLLECTIONS_PATH)
export PATH := $(BIN):$(PATH)
export PYTHONPATH := $(CURDIR)

.PHONY: kafka-homes-demo kafka-homes-test metrics-agent maven-artifacts oldest-runtime venv machine-demo machine-test machine-bench bench demo test check sanity units lint integration molecule sandbox-up sandbox-down sandbox-status build docs vendored clean

venv: $(VENV)/.installed

$(VENV)/.installed: requirements.txt requirements-dev.txt roles/mirror_host/files/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -U pip
	$(BIN)/pip install -q --disable-pip-version-check -r requirements-dev.txt
	mkdir -p $(VENV)/collections/ansible_collections/kafkaops
	ln -sfn $(CURDIR) $(VENV)/collections/ansible_collections/kafkaops/mirror
	touch $@

# Java, sshd and sudo for the sandbox (and stunnel4 for the tests): installed when missing (scripts/machine-setup.sh).
machine-demo machine-test machine-bench: machine-%:
	@scripts/machine-setup.sh $*

# The Apache Kafka releases the sandbox runs, assembled from Maven Central into ~/.cache/kafkaops-mirror/kafka once
# (sandbox/kafka_dist.py): demo needs HDInsight's two, the tests every release the lab runs.
kafka-homes-demo: venv
	$(BIN)/python -m sandbox.kafka_dist 2.4.1 3.2.0

kafka-homes-test: venv
	$(BIN)/python -m sandbox.kafka_dist all

# The oldest runtime the MirrorMaker host may have (Python 3.8, pyspark 3.5.9, Java 8 and 11), cached in
# ~/.cache/kafkaops-mirror/oldest-runtime: tests/integration/mirror_validation/test_oldest_runtime.py runs the job on it.
# The Prometheus JMX exporter's agent the tests attach to the lab's MirrorMaker (mirrormaker2_metrics_*).
metrics-agent: venv
	$(BIN)/python -m sandbox.metrics_agent

oldest-runtime: venv
	$(BIN)/python -m tests.support.oldest_runtime --java all

# The main job on the local sandbox (real Kafka 2.4.1 -> 3.2.0 and MirrorMaker 2 of 3.2.0 with PROVIDER=apache, the
# default; noida and the MirrorMaker 2 stand-in with PROVIDER=noida); the sandbox is stopped at the end unless KEEP=1.
# tansu is refused at once: the whole flow fails on it (docs/development.md, "The local sandbox").
ifneq ($(filter demo,$(MAKECMDGOALS)),)
ifeq ($(filter apache noida,$(PROVIDER)),)
$(error PROVIDER=$(PROVIDER): make demo runs on apache (the default) or noida; tansu serves the tests only (docs/development.md, "The local sandbox"))
endif
endif
demo: venv machine-demo $(if $(filter apache,$(PROVIDER)),kafka-homes-demo)
	@started=$$(date +%s); \
	$(BIN)/python -m sandbox up --dir $(SANDBOX_DIR) --provider $(PROVIDER) || exit 1; \
	if [ "$(KEEP)" != 1 ]; then trap '$(BIN)/python -m sandbox down --dir $(SANDBOX_DIR)' EXIT; fi; \
	$(BIN)/python -m sandbox seed --dir $(SANDBOX_DIR) || exit 1; \
	$(BIN)/ansible-playbook -i $(SANDBOX_DIR)/inventory.yml kafkaops.mirror.mirror \
	  -e mirror_validation_report_dir=$(CURDIR)/reports || exit 1; \
	$(BIN)/python -m sandbox status --dir $(SANDBOX_DIR); \
	echo "demo: finished in $$(( $$(date +%s) - started )) s"; \
	for report in $(CURDIR)/reports/*/report.html; do echo "demo: validation report: $$report (JSON: $${report%.html}.json)"; done

# What every stage needs, two at a time: each part waits mostly on a registry or on one core, so on a fresh machine (CI's) this
# takes about a minute less than one after another. What only the integration tests need (maven-artifacts, oldest-runtime) is
# made by their stage (tests/run_suite.py, INTEGRATION_PREREQUISITES) while the other lane's stages run. The Maven downloads
# stay one after another (maven-artifacts): Maven's local repository is not safe for two processes writing to it at once.
test:
	$(MAKE) --no-print-directory -j2 --output-sync=target venv machine-test
	$(BIN)/python -m tests.run_suite

maven-artifacts: kafka-homes-test
	$(MAKE) --no-print-directory metrics-agent

# The inner loop: unit tests, ansible-test sanity and ansible-lint, two at a time (tests/run_suite.py's lanes); Python only,
# nothing from the machine (docs/development.md, "Running the tests"). The Spark and Chromium unit tests skip without
# Java or Chromium; make test installs both and runs them.
check: venv
	$(BIN)/python -m tests.run_suite --only units sanity lint

sanity units lint: venv
	$(BIN)/python -m tests.run_suite --only $@

integration molecule: venv machine-test kafka-homes-test metrics-agent oldest-runtime
	$(BIN)/python -m tests.run_suite --only $@

# bench/validation.py: the job against the raw read rate, the baseline revision and a kcat dump + sort + diff, same run.
BENCH_ARGS ?= --sizes 200000 1000000 --baseline-rev e78dd2c
bench: venv machine-bench
	$(BIN)/python -m bench.validation $(BENCH_ARGS)

sandbox-up: venv
	$(BIN)/python -m sandbox up --dir $(SANDBOX_DIR) --provider $(PROVIDER)

sandbox-down: venv
	$(BIN)/python -m sandbox down --dir $(SANDBOX_DIR)

sandbox-status: venv
	$(BIN)/python -m sandbox status --dir $(SANDBOX_DIR)

build: venv
	$(BIN)/ansible-galaxy collection build --force --output-path $(CURDIR)/tests/output

# Per-role variable reference, generated from each role's meta/argument_specs.yml (and the validation job's --help, where its
# options' defaults are defined).
docs: venv
	@mkdir -p docs/roles
	@for role in $(notdir $(wildcard roles/*)); do \
	  { echo "# kafkaops.mirror.$$role"; echo; echo "Generated by \`make docs\` from roles/$$role/meta/argument_specs.yml."; echo; \
	    echo '```'; ANSIBLE_NOCOLOR=1 $(BIN)/ansible-doc -t role kafkaops.mirror.$$role | sed -e 's/[[:space:]]*$$//' -e '/^> ROLE:/s/ (.*)$$//'; echo '```'; \
	    if [ -f roles/$$role/files/validate_mirror.py ]; then echo; echo "## The job's options"; echo; \
	      echo "The role writes them to the job's configuration (--config); those it leaves unset take these defaults."; echo; \
	      echo '```'; COLUMNS=120 $(BIN)/python roles/$$role/files/validate_mirror.py --help; echo '```'; fi; \
	  } > docs/roles/$$role.md || exit 1; echo "docs/roles/$$role.md"; done

# The validation job's generated copies of plugins/module_utils code (scripts/vendor_mm2_naming.py, standard library only);
# they are committed, so make test does not need this: run it after changing their sources (the drift tests say so).
vendored:
	$(PYTHON) scripts/vendor_mm2_naming.py

clean:
	rm -rf tests/output
