#!/usr/bin/env bash
# The whole test suite: setup (fast when already done), lint, types, every test tier.
#
#   bash scripts/test.sh [extra pytest args]
#
# Exits non-zero on any failure, and when pytest collects no test at all (pytest's exit 5).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/setup.sh || exit 1
PY="$ROOT/.venv/bin/python"

echo "[test] ruff"
"$ROOT/.venv/bin/ruff" check agent_ls tests scripts || exit 1
echo "[test] mypy"
"$ROOT/.venv/bin/mypy" || exit 1

echo "[test] pytest"
"$PY" -m pytest -q -p no:cacheprovider --durations=15 "$@"
rc=$?
if [[ $rc -eq 5 ]]; then
  echo "[test] pytest collected no tests: that is a failure" >&2
  exit 1
fi
exit $rc
