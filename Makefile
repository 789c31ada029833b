# Two commands for users: `make run` (install and start the dashboard) and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8501

.PHONY: run test install install-dev browser postgres nginx promptfoo lint bench test-load screenshots walk walk-decision

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.runtime: requirements.txt | $(PY)
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.dev: requirements.txt requirements-dev.txt | $(PY)
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@ $(VENV)/.runtime

install: $(VENV)/.runtime
install-dev: $(VENV)/.dev

run: install
	$(PY) -m streamlit run app.py --server.port $(PORT)

# The browser tests need Debian's chromium; Playwright cannot download browsers here. No system font
# is needed for Indic text: the app serves its own (static/fonts), and tests/test_browser_fonts.py
# proves every letter draws with the system's Indic fonts hidden, so none is installed here.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	  else echo "chromium is missing: run 'sudo apt-get install -y chromium' (needed by the browser tests)"; exit 1; fi; }

# The storage tests run on SQLite and on a throwaway PostgreSQL server (tests/pg_server.py starts
# Debian's postgres binaries in a temporary folder): install them when missing.
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql; \
	  else echo "PostgreSQL is missing: run 'sudo apt-get install -y postgresql' (needed by the storage tests)"; exit 1; fi; }

# tests/test_deploy_nginx.py runs deploy/nginx/answer-review.conf in Debian's nginx (its own
# prefix and ports in a temporary folder, never the system service; openssl makes its test
# certificate): install them when missing.
nginx:
	@{ [ -x /usr/sbin/nginx ] || command -v nginx >/dev/null 2>&1; } && command -v openssl >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx openssl; \
	  else echo "nginx is missing: run 'sudo apt-get install -y nginx openssl' (needed by tests/test_deploy_nginx.py)"; exit 1; fi; }

# The harness-log tests run promptfoo (npm) with its echo provider: install it once into
# ~/.cache/scoring-harness/promptfoo (about 3 minutes the first time; reused after).
promptfoo: install-dev
	@$(PY) tests/harness_files/generate.py --install-promptfoo >/dev/null

lint: install-dev
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

# The README's screenshots (docs/img/*.png): the dashboard on its bundled sample in Debian chromium
# at 1280x720, viewport only (tests/screenshots.py).
screenshots: install-dev browser
	$(PY) tests/screenshots.py

# Two worker processes, each test file in one of them (module fixtures and servers stay whole),
# the longest files first (tests/conftest.py SLOW_FIRST) so neither worker ends alone on one.
# A worker that crashes ends the run at once, naming its test: pytest-xdist's loadfile scheduler
# can wait forever for a replaced worker (pytest-dev/pytest-xdist#784).
TEST_WORKERS ?= 2
test: install-dev browser postgres nginx promptfoo lint
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --max-worker-restart 0

# Every bench script in turn (a short goal or a crash does not stop the rest), then every goal
# line together and each script's exit status; exits non-zero on a crash or a short goal.
bench: install-dev browser postgres
	$(PY) tests/bench_goals.py tests/bench_scoring.py tests/bench_formats.py tests/bench_dashboard.py \
	  tests/bench_judge.py tests/bench_review_browser.py tests/bench_memory.py tests/bench_upload.py \
	  tests/bench_upload_browser.py tests/bench_compare.py tests/bench_ppi.py tests/bench_ppi_coverage.py \
	  tests/bench_small_runs.py tests/bench_languages.py tests/bench_matchers.py tests/bench_decision.py

# A new team's first hour in chromium at 1280x720, on a fresh database and a mixed-language file
# made anew each time (tests/walk_first_hour.py): prints what it checked; non-zero on a problem.
walk: install-dev browser
	$(PY) tests/walk_first_hour.py

# Issue 37's "done when" from outside: two models with known truths in one file, reviewed on
# their random samples, asked who is ahead (tests/walk_decision.py); non-zero on a short goal.
walk-decision: install-dev
	$(PY) tests/walk_decision.py

# Many reviewers at once on SQLite and PostgreSQL, one killed and restarted (tests/load_review.py).
test-load: install-dev postgres
	$(PY) tests/load_review.py
