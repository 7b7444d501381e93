# The two commands of the README: `make repro` (set up + the whole pipeline) and `make test`.
PYTHON ?= python3.11
VENV ?= .venv
STAMP := $(VENV)/.installed

.PHONY: setup repro test clean-venv

setup: $(STAMP)

# torch first: the local CPU wheel; otherwise a dependency pulls the CUDA build (several GB).
$(STAMP): pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet torch==2.13.0
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $(STAMP)

repro: $(STAMP)
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(VENV)/bin/dvc repro
	$(VENV)/bin/dvc metrics show

test: $(STAMP)
	$(VENV)/bin/python -m pytest -q

clean-venv:
	rm -rf $(VENV)
