# The two commands a newcomer needs: `make run` and `make test`. Both set up .venv first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck pytest test-js diff-js test-slow tlc-full verify-all bench clean \
	check-java check-node vectors mutation mutation-lease mutation-sample fuzz-seeds docs

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Set-up, then the main job: a short demonstration on a small real graph, then `verify`: every
# default scope explored over the real core, checked by TLC, and the two state graphs compared.
run: $(STAMP) check-java
	$(PY) -m schedspec demo
	$(PY) -m schedspec verify

# Set-up, then the whole fast suite: ruff, mypy --strict, pytest (slow explorations excluded),
# and the Node.js implementation's own tests.
test: $(STAMP) check-java check-node lint typecheck pytest test-js

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks

typecheck: $(STAMP)
	$(VENV)/bin/mypy

# Two workers; a file's tests go to one of them, but for the long independent ones (tests/conftest.py).
pytest: $(STAMP)
	$(VENV)/bin/pytest -q -m "not slow" -n 2 --dist loadgroup

# The Node.js implementation (examples/js): clause, protocol and server tests, every vector, a
# short differential run against the reference server, and its planted bugs (about 20 s).
test-js: $(STAMP) check-node
	node --test examples/js/test/

# A long differential run of the Node.js implementation against the reference.
diff-js: $(STAMP) check-node
	node examples/js/test/differential.js --sessions 10000 --seed $${SEED:-1}

# The slow tier, and every Hypothesis test again with random, ten times broader search.
test-slow: $(STAMP)
	SCHEDSPEC_HYPOTHESIS_PROFILE=broad $(VENV)/bin/pytest -q -m "slow or hypothesis"

tlc-full: $(STAMP) check-java
	$(PY) -m schedspec tlc --full

# Every scope, the long ones too (tens of minutes). `large` is explored with its symmetry only:
# the comparison with TLC needs it unreduced, about 3 million states and a dump of gigabytes;
# and without the naive differential and the probes, which would take it past an hour.
verify-all: $(STAMP) check-java
	$(PY) -m schedspec verify $$($(PY) -m schedspec models --names | grep -vx large)
	$(PY) -m schedspec explore large --reduce --no-differential

# Regenerate the conformance vectors after a change of behaviour; review the diff. First the
# explorer chooses again the traces that cover every situation (minutes: it explores every
# default scope; src/schedspec/conformance/situations.py).
vectors: $(STAMP)
	$(PY) -m schedspec.conformance.situations
	$(PY) -m schedspec conform --regenerate

# The mutation score of the core (models/mutation/README.md): every mutmut mutant of core/step.py,
# graph.py, state.py and invariants.py through the explorer over the default scopes that run its
# lines, then the explorer's survivors through the tests that run them. `mutation-sample` runs a
# fixed sample of 40.
MUTATION_TESTS := tests/test_state_clauses.py tests/test_core_clauses.py tests/test_submit.py \
	tests/test_start.py tests/test_claim.py tests/test_done.py tests/test_block.py \
	tests/test_cancel.py tests/test_close.py tests/test_query.py tests/test_effects.py \
	tests/test_invariants.py tests/test_invariant_messages.py tests/test_differential.py \
	tests/test_size_boundaries.py tests/test_explore_mutants.py tests/test_graph_predicates.py \
	tests/test_lease.py tests/test_restart.py
MUTATION_ARGS := --jobs 2 --tests-selection "$(MUTATION_TESTS) -m 'not slow' -x -q -p no:cacheprovider"

# The journal lets an interrupted run resume where it stopped, while the sources that judge the
# mutants are the same; it is committed, so that a run longer than a session resumes in the next.
mutation: $(STAMP)
	$(PY) -m schedspec.explore.mutscore $(MUTATION_ARGS) --journal models/mutation/journal.jsonl \
		--json mutation.json --markdown mutation.md

# How many of seeds 0-19 of the differential fuzzing find each mutant of the core (issue 11,
# section 3): every one not listed as equivalent or unobservable; journaled and resumable.
fuzz-seeds: $(STAMP)
	$(PY) benchmarks/fuzz_seeds.py --core all --journal models/mutation/fuzz-seeds.jsonl \
		--markdown fuzz-seeds.md

# The lease code's mutants (models/mutation/lease-ids.txt) through the explorer over the two lease
# scopes, then the survivors through the lease clause tests and the lockstep LeaseMachine.
mutation-lease: $(STAMP)
	$(PY) -m schedspec.explore.mutscore --files step --ids $$(grep -v '^#' models/mutation/lease-ids.txt) \
		--scopes lease,lease-fail --jobs 2 --tests-selection \
		"tests/test_lease.py tests/test_differential.py -k 'lease or Lease' -m 'not slow' -x -q -p no:cacheprovider"

mutation-sample: $(STAMP)
	$(PY) -m schedspec.explore.mutscore $(MUTATION_ARGS) --sample 40 --seed 1 \
		--json mutation-sample.json --markdown mutation-sample.md

# The documentation site (mkdocs.yml): docs/, the spec pages, and the API reference from the
# docstrings, into site/. make test builds it too, in strict mode (tests/test_docs.py).
docs: $(STAMP)
	$(VENV)/bin/mkdocs build --strict

bench: $(STAMP)
	$(PY) benchmarks/lifecycle.py

check-java:
	@command -v java >/dev/null 2>&1 || { \
	  echo "java not found: TLC needs a Java runtime. Install it with:"; \
	  echo "  apt-get update && apt-get install -y default-jre-headless"; exit 1; }

check-node:
	@command -v node >/dev/null 2>&1 || { \
	  echo "node not found: examples/js needs Node.js >= 20. Install it with:"; \
	  echo "  apt-get update && apt-get install -y nodejs"; exit 1; }

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
