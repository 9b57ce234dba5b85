#!/usr/bin/env bash
# The whole test suite: setup (fast when already done), lint, types, every test tier.
#
#   bash scripts/test.sh [pytest args]   (no args: the whole suite, in parallel, then the editor e2e)
#
# Exits non-zero on any failure, and when pytest collects no test at all (pytest's exit 5).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# The whole suite: the editor e2e's tooling (code-server, Node 24, native modules built by npm ci:
# minutes of CPU) installs in the background, from the start when the machine has the build tools
# (else once setup.sh's apt step has installed them), beside the rest of the setup, lint and the
# suite; the e2e waits for it.
E2E_SETUP_PID=""
start_e2e_setup() {
  mkdir -p .tools/logs
  bash scripts/setup_e2e.sh >.tools/logs/e2e-background.log 2>&1 &
  E2E_SETUP_PID=$!
}
if [[ $# -eq 0 ]]; then
  if bash scripts/setup_e2e.sh --check-tools; then start_e2e_setup; fi
  bash scripts/setup.sh --no-e2e || exit 1
  [[ -n "$E2E_SETUP_PID" ]] || start_e2e_setup
else
  bash scripts/setup.sh || exit 1
fi
PY="$ROOT/.venv/bin/python"
# Bytecode for our own sources once, here: with PYTHONDONTWRITEBYTECODE set (as on these machines)
# every language server, MCP test server and CLI the suite starts would compile them again
# (~0.3 s of CPU per process; a stale .pyc is simply recompiled in memory).
PYTHONDONTWRITEBYTECODE= "$PY" -m compileall -q -j 0 agent_ls tests scripts >/dev/null || true
# pytest's cache of assert-rewritten test modules and plugins, which pytest reads but, for the same
# reason, never writes: each xdist worker rewrote ~320 modules at collection (~7 s of CPU each).
"$PY" scripts/pytest_rewrite_cache.py || true

lint() {
  echo "[test] ruff"
  "$ROOT/.venv/bin/ruff" check agent_ls tests scripts || return 1
  echo "[test] mypy"
  "$ROOT/.venv/bin/mypy" || return 1
  echo "[test] import-linter (layers, no cycles: [tool.importlinter] in pyproject.toml)"
  "$ROOT/.venv/bin/lint-imports" --no-cache || return 1
  echo "[test] vulture (dead code: [tool.vulture] in pyproject.toml, scripts/vulture_whitelist.py)"
  "$ROOT/.venv/bin/vulture" || return 1
}

# pytest exit 5 (no test collected) is a failure, never green.
run_pytest() {
  "$PY" -m pytest -q -p no:cacheprovider "$@"
  local rc=$?
  if [[ $rc -eq 5 ]]; then
    echo "[test] pytest collected no tests: that is a failure" >&2
    return 1
  fi
  return $rc
}

if [[ $# -gt 0 ]]; then
  lint || exit 1
  echo "[test] pytest $*"
  run_pytest "$@"
  exit $?
fi

# Lint (one core, mostly mypy: ~30 s of CPU) runs beside the suite; its output follows the suite's.
mkdir -p artifacts
lint >artifacts/lint.log 2>&1 &
LINT_PID=$!

# The whole suite in parallel (pytest-xdist; whole files per worker, so module fixtures stay
# shared), then the editor end-to-end test alone (a real code-server and Chromium want the
# machine to themselves). Most tests wait on subprocesses, so one worker more than cores pays.
# --no-loadscope-reorder: the files go out in the collection's order, the largest time budget first
# (tests/conftest.py pytest_collection_modifyitems), not xdist's by number of tests.
# test_e2e_provision.py: the extension installs its own server in code-server (issue 31).
# artifacts/junit-suite.xml: each test's time, to see where the suite's time goes (scripts/suite_times.py).
E2E=(tests/extension/test_e2e.py tests/extension/test_e2e_provision.py)
WORKERS="${AGENT_LS_TEST_WORKERS:-$(( $(nproc) + 1 ))}"
echo "[test] pytest: everything but ${E2E[*]}, $WORKERS workers"
run_pytest -n "$WORKERS" --dist loadfile --no-loadscope-reorder --durations=15 --junitxml=artifacts/junit-suite.xml "${E2E[@]/#/--deselect=}"
rc=$?
wait "$LINT_PID"
lint_rc=$?
cat artifacts/lint.log
if [[ $lint_rc -ne 0 ]]; then
  echo "[test] lint failed (above)" >&2
  rc=1
fi
wait "$E2E_SETUP_PID"
e2e_setup=$?
cat .tools/logs/e2e-background.log
if [[ $e2e_setup -ne 0 ]]; then
  echo "[test] scripts/setup_e2e.sh failed (above): the editor e2e cannot run" >&2
  exit 1
fi
echo "[test] pytest: ${E2E[*]}"
run_pytest --durations=5 "${E2E[@]}"
rc2=$?
[[ $rc -eq 0 && $rc2 -eq 0 ]] || exit 1
exit 0
