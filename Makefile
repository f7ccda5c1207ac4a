# The two set-up commands are `make run` and `make test`; see README.md.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
WORKERS ?= 2
THREADS ?= 256
FACILITATOR_PORT ?= 8402
TEMPO_PORT ?= 8545
SANDBOX_PORT ?= 8401
SANDBOX_THREADS ?= 32
DEMO_WALLET := 0x209693Bc6afc0C5328bA36FaF03C514EF312287C

# Tests always run on PostgreSQL (and Redis); the conftest refuses anything else.
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/gateway
TEST_REDIS_URL ?= redis://127.0.0.1:6379/1

.PHONY: install browser pgbouncer run serve test lint format bench clean

# The browser tests drive Debian's Chromium; Playwright never downloads a browser of its own.
CHROMIUM := /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# torch goes first, pinned to the CPU build whose file lies on the machine: asked for as a
# dependency, pip would fetch the newest CUDA build and several GB of GPU libraries.
$(INSTALLED): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(INSTALLED)

install: $(INSTALLED)

$(CHROMIUM):
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
	$(CHROMIUM) --version

browser: $(CHROMIUM)

# PgBouncer keeps protocol-level prepared statements in transaction mode from 1.21 on, and
# Debian 12 ships 1.18: the test of the settlement through it (docs/scaling.md) builds Debian
# 13's release from its source package, fetched through a private apt state in var/.
PGBOUNCER_VERSION := 1.24.1
PGBOUNCER := var/pgbouncer/bin/pgbouncer
PGBOUNCER_BUILD := var/pgbouncer-build
PGBOUNCER_APT := -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=$(CURDIR)/$(PGBOUNCER_BUILD) \
	-o Dir::State::Lists=$(CURDIR)/$(PGBOUNCER_BUILD)/lists -o Dir::Cache=$(CURDIR)/$(PGBOUNCER_BUILD)/cache

$(PGBOUNCER):
	dpkg -s libevent-dev libssl-dev pkg-config build-essential >/dev/null 2>&1 || \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		libevent-dev libssl-dev pkg-config build-essential >/dev/null
	rm -rf $(PGBOUNCER_BUILD) && mkdir -p $(PGBOUNCER_BUILD)/lists/partial $(PGBOUNCER_BUILD)/cache
	printf '%s\n' 'Types: deb-src' 'URIs: http://deb.debian.org/debian' 'Suites: trixie' \
		'Components: main' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' \
		> $(PGBOUNCER_BUILD)/trixie.sources
	$(SUDO) apt-get $(PGBOUNCER_APT) update -qq
	cd $(PGBOUNCER_BUILD) && apt-get $(PGBOUNCER_APT) source --download-only -qq \
		pgbouncer=$$(apt-cache $(PGBOUNCER_APT) showsrc pgbouncer | \
		sed -n 's/^Version: \($(PGBOUNCER_VERSION)-.*\)/\1/p' | head -n 1)
	cd $(PGBOUNCER_BUILD) && tar xzf pgbouncer_$(PGBOUNCER_VERSION).orig.tar.gz && \
		cd pgbouncer-$(PGBOUNCER_VERSION) && \
		./configure --quiet --prefix=$(CURDIR)/var/pgbouncer --without-cares --without-systemd && \
		$(MAKE) --quiet -j2 >/dev/null && $(MAKE) --quiet install >/dev/null
	rm -rf $(PGBOUNCER_BUILD)
	$(PGBOUNCER) --version | grep -q "PgBouncer $(PGBOUNCER_VERSION)"

pgbouncer: $(PGBOUNCER)

# The demo has no provider credentials: live keys are charged but served by the sandbox, which
# runs as a gunicorn of its own (sandbox.wsgi): served by the gateway's own workers, every demo
# run would hold one thread waiting on another, and as many concurrent runs as there are threads
# would wait on themselves until the provider timeout.
# The rails are paid through local doubles, into a demo wallet: the x402 facilitator
# (sandbox/facilitator) and the Tempo chain of the mpp rail (sandbox/tempo). The money they move
# exists only in those processes.
run: export GATEWAY_BASE_URL ?= http://$(HOST):$(PORT)
run: export SANDBOX_BASE_URL ?= http://$(HOST):$(SANDBOX_PORT)/sandbox
run: export LIVE_CALLS_USE_SANDBOX ?= True
run: export RAIL_PAY_TO ?= $(DEMO_WALLET)
run: export X402_FACILITATOR_URL ?= http://$(HOST):$(FACILITATOR_PORT)
run: export NP_FACILITATOR_URL ?= http://$(HOST):$(FACILITATOR_PORT)
run: export MPP_RPC_URL ?= http://$(HOST):$(TEMPO_PORT)
run: install
	mkdir -p var
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_catalog
	$(BIN)/python manage.py provision_demo
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	$(BIN)/python -m sandbox.facilitator --host $(HOST) --port $(FACILITATOR_PORT) --quiet \
		--network eip155:8453 --network eip155:137 & \
	facilitator=$$!; \
	$(BIN)/python -m sandbox.tempo --host $(HOST) --port $(TEMPO_PORT) --quiet & \
	tempo=$$!; \
	$(BIN)/gunicorn sandbox.wsgi --bind $(HOST):$(SANDBOX_PORT) --worker-class gthread \
		--workers 1 --threads $(SANDBOX_THREADS) --no-control-socket --log-level warning & \
	sandbox=$$!; \
	trap 'kill $$facilitator $$tempo $$sandbox 2>/dev/null' EXIT INT TERM; $(MAKE) serve

serve:
	$(BIN)/gunicorn gateway.wsgi --config python:gateway.gunicorn_config \
		--bind $(HOST):$(PORT) --worker-class gthread \
		--workers $(WORKERS) --threads $(THREADS) --preload --access-logfile -

test: install $(CHROMIUM) $(PGBOUNCER)
	$(BIN)/lint-imports --no-cache
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) DATABASE_POOL=False \
		DATABASE_CONN_MAX_AGE=0 \
		$(BIN)/pytest $(PYTEST_ARGS); \
	status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; \
	exit $$status

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: install
	@for script in bench/*.py; do \
		[ "$$script" = bench/harness.py ] && continue; \
		echo "== $$script"; \
		$(BIN)/python $$script || exit 1; \
	done

clean:
	rm -rf $(VENV) var staticfiles
