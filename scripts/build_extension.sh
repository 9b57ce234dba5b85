#!/usr/bin/env bash
# Build and package the VS Code extension: editor-extension/agent-ls.vsix.
#
#   bash scripts/build_extension.sh [--no-package]
#
# Steps: npm ci (skipped when node_modules already matches package-lock.json), typecheck
# (tsc --noEmit, strict), esbuild bundles (dist/extension.js, dist/webview.js/.css), then
# `vsce package`. Exits non-zero on any failure. Works from any cwd; needs node + npm.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EXT="$ROOT/editor-extension"
cd "$EXT"

PACKAGE=1
for arg in "$@"; do
  case "$arg" in
    --no-package) PACKAGE=0 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "build_extension.sh: unknown option: $arg" >&2; exit 2 ;;
  esac
done

for tool in node npm; do
  command -v "$tool" >/dev/null 2>&1 || { echo "build_extension.sh: $tool not found on PATH" >&2; exit 1; }
done

lock_hash="$(sha256sum package-lock.json | cut -d' ' -f1)-$(node --version)"
if [[ ! -f node_modules/.agent-ls-lock || "$(cat node_modules/.agent-ls-lock)" != "$lock_hash" ]]; then
  echo "[build] npm ci"
  npm ci --no-audit --no-fund --no-update-notifier --loglevel=warn
  echo "$lock_hash" > node_modules/.agent-ls-lock
fi

echo "[build] typecheck"
npx --no-install tsc -p . --noEmit

echo "[build] bundle"
rm -rf dist
node esbuild.mjs

if [[ $PACKAGE -eq 1 ]]; then
  echo "[build] package"
  rm -f agent-ls.vsix
  npx --no-install vsce package --no-dependencies --no-update-package-json -o agent-ls.vsix >/dev/null
  [[ -s agent-ls.vsix ]] || { echo "build_extension.sh: vsce did not produce agent-ls.vsix" >&2; exit 1; }
  echo "[build] editor-extension/agent-ls.vsix ($(du -k agent-ls.vsix | cut -f1) KiB)"
fi
