#!/usr/bin/env bash
# Build and package the VS Code extension: editor-extension/agent-ls.vsix.
#
#   bash scripts/build_extension.sh [--no-package]
#
# Steps: npm ci (skipped when node_modules already matches package-lock.json), typecheck
# (tsc --noEmit, strict), esbuild bundles (dist/extension.js, dist/webview.js/.css), the
# agent-ls wheel (`python -m build` into editor-extension/server/, the server the extension
# provisions on first run: issue 31; its dependencies are not bundled), then `vsce package`.
# Exits non-zero on any failure. Works from any cwd; needs node + npm, and for the wheel
# PYTHON (default: <repo>/.venv/bin/python) with `build`; offline when .tools/wheelhouse exists.
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
  echo "[build] agent-ls wheel"
  PY="${PYTHON:-$ROOT/.venv/bin/python}"
  WHEEL_TMP="$(mktemp -d)"
  trap 'rm -rf "$WHEEL_TMP"' EXIT
  build_env=()
  if compgen -G "$ROOT/.tools/wheelhouse/setuptools-*.whl" >/dev/null; then
    build_env=(env PIP_NO_INDEX=1 "PIP_FIND_LINKS=$ROOT/.tools/wheelhouse")
  fi
  # the sdist first, the wheel from it: only the files the sdist ships end up in the wheel
  "${build_env[@]}" "$PY" -m build --outdir "$WHEEL_TMP" "$ROOT" >/dev/null
  rm -rf server
  mkdir -p server
  cp "$WHEEL_TMP"/agent_ls-*-py3-none-any.whl server/
  [[ $(find server -name 'agent_ls-*.whl' | wc -l) -eq 1 ]] || { echo "build_extension.sh: no agent-ls wheel built" >&2; exit 1; }

  echo "[build] package"
  rm -f agent-ls.vsix
  npx --no-install vsce package --no-dependencies --no-update-package-json -o agent-ls.vsix >/dev/null
  [[ -s agent-ls.vsix ]] || { echo "build_extension.sh: vsce did not produce agent-ls.vsix" >&2; exit 1; }
  echo "[build] editor-extension/agent-ls.vsix ($(du -k agent-ls.vsix | cut -f1) KiB)"
fi
