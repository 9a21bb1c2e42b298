# Quick start: `make demo` (set up + cluster the embedded corpus), `make test` (set up + all tests).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test bench clean

$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev,distributed]"
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/mixbayes demo --out mixbayes-demo --force

test: $(STAMP)
	$(PY) tests/compile_kernels.py
	$(PY) -m pytest -q -n 2 --dist worksteal tests

bench: $(STAMP)
	$(PY) -m pip install --quiet -e ".[bench]"
	$(PY) bench/bench_dmm.py --write docs/benchmarks.md
	$(PY) bench/bench_gmm.py --write docs/benchmarks.md
	$(PY) bench/bench_topics.py --select --write docs/benchmarks.md
	$(PY) bench/bench_hdp.py --write docs/benchmarks.md
	$(PY) bench/bench_tree.py --write docs/benchmarks.md
	$(PY) bench/bench_tree.py --scaling --write docs/benchmarks.md
	$(PY) bench/tree_moves.py --write docs/benchmarks.md
	$(PY) bench/bench_partition.py --write docs/benchmarks.md
	$(PY) bench/bench_busy.py --write docs/benchmarks.md
	$(PY) bench/bench_gibbs_scale.py --write docs/benchmarks.md
	$(PY) bench/bench_dmm_start.py --write docs/benchmarks.md
	$(PY) bench/topic_tolerance.py --corpora classic3,twenty_newsgroups --write docs/benchmarks.md
	$(PY) bench/bench_text_real.py --corpora tweet,googlenews_t,classic3,dblp3 --write docs/benchmarks.md
	$(PY) bench/bench_text_real.py --corpora twenty_newsgroups --write docs/benchmarks.md
	$(PY) bench/bench_text_real.py --corpora twenty_newsgroups --models topics --select --write docs/benchmarks.md
	$(PY) bench/topics_20ng_coherence.py --seeds 0,1,2,3,4,5 --background --write docs/benchmarks.md
	$(PY) bench/hdp_defaults.py --speed --write docs/benchmarks.md
	$(PY) bench/hdp_long_groups.py --write docs/benchmarks.md

clean:
	rm -rf $(VENV) mixbayes-demo build src/*.egg-info
