# Two commands on a fresh machine: `make demo` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := $(CURDIR)/.venv
BIN := $(VENV)/bin
SANDBOX_DIR ?= $(CURDIR)/.sandbox
PROVIDER ?= noida
KEEP ?= 0

# ansible-doc, molecule and the tests find the collection through this path (toolchain.md #3).
ifeq ($(notdir $(abspath $(CURDIR)/../..)),ansible_collections)
COLLECTIONS_PATH := $(abspath $(CURDIR)/../../..)
else
COLLECTIONS_PATH := $(VENV)/collections
endif
export ANSIBLE_COLLECTIONS_PATH := $(COLLECTIONS_PATH)
export PATH := $(BIN):$(PATH)
export PYTHONPATH := $(CURDIR)

.PHONY: venv demo test sanity units lint integration molecule sandbox-up sandbox-down sandbox-status build docs clean

venv: $(VENV)/.installed

$(VENV)/.installed: requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -U pip
	$(BIN)/pip install -q --disable-pip-version-check -r requirements-dev.txt
	mkdir -p $(VENV)/collections/ansible_collections/kafkaops
	ln -sfn $(CURDIR) $(VENV)/collections/ansible_collections/kafkaops/mirror
	touch $@

demo: venv
	@$(BIN)/python -m sandbox.demo --dir $(SANDBOX_DIR) --provider $(PROVIDER) --keep $(KEEP)

test: venv
	$(BIN)/python tests/run_suite.py

sanity units lint integration molecule: venv
	$(BIN)/python tests/run_suite.py --only $@

sandbox-up: venv
	$(BIN)/python -m sandbox up --dir $(SANDBOX_DIR) --provider $(PROVIDER)

sandbox-down: venv
	$(BIN)/python -m sandbox down --dir $(SANDBOX_DIR)

sandbox-status: venv
	$(BIN)/python -m sandbox status --dir $(SANDBOX_DIR)

build: venv
	$(BIN)/ansible-galaxy collection build --force --output-path $(CURDIR)/tests/output

docs: venv
	@for role in preflight hosts_sync ambari_kafka kafka_topics mirrormaker2 mirror_validation failover; do \
	  [ -d roles/$$role ] && $(BIN)/ansible-doc -t role kafkaops.mirror.$$role; done; true

clean:
	rm -rf tests/output
