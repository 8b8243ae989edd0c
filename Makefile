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

# The main job on the local sandbox; the sandbox is stopped at the end unless KEEP=1.
demo: venv
	@started=$$(date +%s); \
	$(BIN)/python -m sandbox up --dir $(SANDBOX_DIR) --provider $(PROVIDER) || exit 1; \
	if [ "$(KEEP)" != 1 ]; then trap '$(BIN)/python -m sandbox down --dir $(SANDBOX_DIR)' EXIT; fi; \
	$(BIN)/python -m sandbox seed --dir $(SANDBOX_DIR) || exit 1; \
	$(BIN)/ansible-playbook -i $(SANDBOX_DIR)/inventory.yml playbooks/mirror.yml \
	  -e mirror_validation_report_dir=$(CURDIR)/reports || exit 1; \
	$(BIN)/python -m sandbox status --dir $(SANDBOX_DIR); \
	echo "demo: finished in $$(( $$(date +%s) - started )) s"; \
	for report in $(CURDIR)/reports/*/report.html; do echo "demo: validation report: $$report (JSON: $${report%.html}.json)"; done

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
	@for role in $(notdir $(wildcard roles/*)); do $(BIN)/ansible-doc -t role kafkaops.mirror.$$role || exit 1; done

clean:
	rm -rf tests/output
