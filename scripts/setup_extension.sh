#!/usr/bin/env bash
# Step 5 of scripts/setup.sh: build editor-extension/agent-ls.vsix (scripts/build_extension.sh),
# which carries the agent-ls wheel (editor-extension/server/) that the extension provisions.
#
#   bash scripts/setup_extension.sh        (FORCE=1 rebuilds even when up to date)
#
# Skipped when the stamp in .tools/stamps/extension matches the inputs (package.json,
# package-lock.json, sources, build config, node version) and the .vsix exists.
# Prints one `[setup] extension ...` line; the build's output goes to .tools/logs/extension.log
# (its tail is shown on failure).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EXT="$ROOT/editor-extension"
STAMPS="$ROOT/.tools/stamps"
LOGS="$ROOT/.tools/logs"
mkdir -p "$STAMPS" "$LOGS"
FORCE="${FORCE:-0}"
STAMP_SCHEMA="1"

line() { printf '[setup] %-7s %s\n' extension "$1"; }

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "setup_extension.sh: node and npm are needed to build the extension (not found on PATH)" >&2
  exit 1
fi

inputs_hash() {
  {
    echo "schema=$STAMP_SCHEMA node=$(node --version)"
    cd "$EXT"
    find package.json package-lock.json tsconfig.json esbuild.mjs .vscodeignore README.md LICENSE \
      src shared webview media test vitest.config.ts -type f 2>/dev/null | LC_ALL=C sort | while read -r f; do
      echo "file=$f"; cat "$f"
    done
    cat "$ROOT/scripts/build_extension.sh"
    # the bundled agent-ls wheel (issue 31): the package's sources and metadata
    cd "$ROOT" && find pyproject.toml README.md LICENSE agent_ls -type f -name '*' ! -path '*__pycache__*' \
      2>/dev/null | LC_ALL=C sort | while read -r f; do echo "file=$f"; cat "$f"; done
  } | sha256sum | cut -d' ' -f1
}

KEY="$(inputs_hash)"
VSIX="$EXT/agent-ls.vsix"
if [[ "$FORCE" != "1" && -s "$VSIX" && -f "$STAMPS/extension" && "$(cat "$STAMPS/extension")" == "$KEY" ]]; then
  line "up to date (editor-extension/agent-ls.vsix)"
  exit 0
fi

t0=$SECONDS
: >"$LOGS/extension.log"
if ! bash "$ROOT/scripts/build_extension.sh" >>"$LOGS/extension.log" 2>&1; then
  echo "  FAILED: bash scripts/build_extension.sh" >&2
  echo "  --- last 40 lines of $LOGS/extension.log ---" >&2
  tail -n 40 "$LOGS/extension.log" >&2
  exit 1
fi
echo "$KEY" >"$STAMPS/extension"
line "built editor-extension/agent-ls.vsix ($(du -k "$VSIX" | cut -f1) KiB, $((SECONDS - t0))s)"
