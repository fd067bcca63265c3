# The two commands: `make run` and `make test`. Everything else is a helper of theirs.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
LAKE   := .venv-lake
PORT   ?= 8501
DB     ?= data/perfboard.duckdb

.PHONY: run test demo lint format bench clean

$(VENV)/.installed: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.installed-dev: requirements-dev.txt $(VENV)/.installed
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@

# The lake's environment: the same, with DuckDB 1.4.4 and its extension wheels over it
# (requirements-lake.txt says why). Its tests start a PostgreSQL server on loopback.
$(LAKE)/.installed: requirements.txt requirements-dev.txt requirements-lake.txt
	test -x $(LAKE)/bin/python || $(PYTHON) -m venv $(LAKE)
	$(LAKE)/bin/python -m pip install --quiet --upgrade pip
	$(LAKE)/bin/python -m pip install --quiet -r requirements-dev.txt
	$(LAKE)/bin/python -m pip install --quiet -r requirements-lake.txt
	touch $@

# The pages' CJK web font, made once from the installed Noto Sans CJK (about 15 s):
# scripts/make_web_font.py says why.
WEB_FONT := static/noto-sans-sc-gb2312.otf
$(WEB_FONT): $(VENV)/.installed scripts/make_web_font.py
	$(PY) scripts/make_web_font.py --out $@

## run: install, build the demo database if there is none, serve on http://localhost:$(PORT)
run: $(VENV)/.installed $(WEB_FONT)
	PERFBOARD_DB=$(DB) $(PY) scripts/build_demo_db.py --db $(DB)
	PERFBOARD_DB=$(DB) $(PY) scripts/serve.py --server.port $(PORT) \
		--server.headless true --browser.gatherUsageStats false

## demo: rebuild the demo database from data/samples
demo: $(VENV)/.installed
	$(PY) scripts/build_demo_db.py --db $(DB) --force

## test: install the test extras and run the whole suite (lint included); the lake's
## tests run in their own environment
test: $(VENV)/.installed-dev $(LAKE)/.installed $(WEB_FONT)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	@scripts/run_tests.sh $(PY) --ignore=tests/test_lake.py
	@scripts/run_tests.sh $(LAKE)/bin/python tests/test_lake.py

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

## bench: the ingest benchmark (see scripts/bench_ingest.py for sizes)
bench: $(VENV)/.installed
	$(PY) scripts/bench_ingest.py

clean:
	rm -rf $(VENV) $(LAKE) .pytest_cache .ruff_cache test-artifacts static
