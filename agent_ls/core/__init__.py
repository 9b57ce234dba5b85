"""The bottom layer: what every other layer shares and nothing above it owns: the tool
protocol (:mod:`.tools`) and secret redaction (:mod:`.redact`). Imports nothing from
agent_ls (an import-linter contract in pyproject.toml keeps it so)."""
