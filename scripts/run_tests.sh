#!/usr/bin/env bash
# Run the whole pytest suite; say clearly whether the browser and lake tests run, and treat
# "no tests collected" (pytest exit 5) as the failure it is.
set -u
PY=${1:-.venv/bin/python}
CHROMIUM=${PERFBOARD_CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
  if [ -n "${PERFBOARD_REQUIRE_BROWSER:-}" ]; then
    echo "make test: $CHROMIUM is missing and PERFBOARD_REQUIRE_BROWSER is set: the browser tests will fail." >&2
  else
    echo "make test: no Chromium at $CHROMIUM: SKIPPING the browser tests (apt-get install chromium to run them)." >&2
  fi
fi
if [[ " ${*:2} " == *"test_lake.py"* ]] && ! command -v pg_ctl >/dev/null \
    && ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then
  if [ -n "${PERFBOARD_REQUIRE_LAKE:-}" ]; then
    echo "make test: no PostgreSQL server and PERFBOARD_REQUIRE_LAKE is set: the lake tests will fail." >&2
  else
    echo "make test: no PostgreSQL server (pg_ctl): SKIPPING the lake tests (apt-get install postgresql to run them)." >&2
  fi
fi
"$PY" -m pytest "${@:2}"
status=$?
if [ "$status" -eq 5 ]; then
  echo "make test: pytest collected no tests; that is a broken suite, not a pass." >&2
  exit 1
fi
exit "$status"
