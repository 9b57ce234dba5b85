#!/usr/bin/env bash
# Regenerates the README's screenshots (docs/images/*.png) from the end-to-end test's artifacts:
# the e2e (tests/extension/test_e2e.py, driver editor-extension/e2e/driver.ts + ux.ts + layout.ts) takes them
# in code-server at 1400x900 (cropped to the side bar: small PNGs), this copies them under stable
# names.
#
#   bash scripts/screenshots.sh          # from the last e2e run (artifacts/e2e/)
#   bash scripts/screenshots.sh --run    # run the e2e first (about 2 minutes)
#
# Exit non-zero when a screenshot is missing (the step that takes it did not run or failed).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ART="$ROOT/artifacts/e2e"
OUT="$ROOT/docs/images"
# Above this a screenshot is worth a look (the README should stay light).
MAX_BYTES=300000

if [[ "${1:-}" == "--run" ]]; then
  (cd "$ROOT" && .venv/bin/python -m pytest -q tests/extension/test_e2e.py) || echo "[screenshots] the e2e run failed; copying what it produced" >&2
fi

# docs/images/<name>  <-  artifacts/e2e/<source> (a glob: the newest match wins)
MAP=(
  "chat.png:ux-chat-sidebar.png"            # the chat, an approval pinned above the input (dark)
  "chat-light.png:ux-chat-light.png"        # the chat in the light theme
  "trust-prompt.png:ux-trust-prompt.png"    # a server's trust prompt with a long command, in full
  "servers.png:ux-servers.png"              # the MCP Servers view
  "server-failed.png:ux-server-failed.png"  # a server that failed to start: its reason and fixes
  "review.png:*-review-accept.png"          # a file change waiting for review, with the diff editor
  "narrow-dark.png:layout-dark-300.png"     # issue 44: the chat at a 300 px side bar (header, banner, open trust card)
  "narrow-light.png:layout-light-300.png"   # the same, light theme
  "narrow-servers.png:layout-servers-dark-300.png"  # a failed server at 300 px: reason and what it said, wrapped
)

mkdir -p "$OUT"
missing=0
for pair in "${MAP[@]}"; do
  name="${pair%%:*}"
  pattern="${pair#*:}"
  # shellcheck disable=SC2086  # the pattern is a glob on purpose
  src="$(ls -t "$ART"/$pattern 2>/dev/null | head -n 1 || true)"
  if [[ -z "$src" || ! -s "$src" ]]; then
    echo "[screenshots] MISSING $pattern in $ART (needed for docs/images/$name)" >&2
    missing=1
    continue
  fi
  cp "$src" "$OUT/$name"
  size=$(stat -c %s "$OUT/$name")
  note=""
  (( size > MAX_BYTES )) && note=" (large: over $MAX_BYTES bytes)"
  echo "[screenshots] docs/images/$name <- ${src#"$ROOT"/} ($size bytes)$note"
done
exit $missing
