"""The bottom layer: what every other layer shares and nothing above it owns: the tool
protocol (:mod:`.tools`), secret redaction (:mod:`.redact`), the process's secrets in memory only (:mod:`.process_secrets`) and the model-facing names of MCP tools
(:mod:`.naming`, which the agent's permission rules match too). Imports nothing from
agent_ls (an import-linter contract in pyproject.toml keeps it so)."""
