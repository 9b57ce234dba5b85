"""Agent settings from the settings scopes and the environment (agent_ls/agent/config.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_ls.agent.config import AgentSettings, agent_settings
from agent_ls.agent.permissions import Decision, PermissionRules, decide
from agent_ls.config.settings import load_settings
from agent_ls.core.tools import Capability, ToolSpec
from tests.tooling import TRUST_ALL


def load(tmp_path: Path, user: dict[str, Any] | None, workspace: dict[str, Any] | None,
         env: dict[str, str] | None = None) -> AgentSettings:
    ws = tmp_path / "ws"
    (ws / ".agent-ls").mkdir(parents=True, exist_ok=True)
    user_file = tmp_path / "user.json"
    user_file.write_text(json.dumps(user or {}))
    if workspace is not None:
        (ws / ".agent-ls" / "settings.json").write_text(json.dumps(workspace))
    env = env or {}
    return agent_settings(load_settings([ws], user_settings=user_file, environ=env, trust=TRUST_ALL), environ=env)


def test_defaults(tmp_path: Path) -> None:
    s = load(tmp_path, None, None)
    assert s == AgentSettings()
    assert s.llm_config() is None  # no model: the caller says what to set


def test_model_and_api_base_precedence(tmp_path: Path) -> None:
    s = load(tmp_path, {"model": "openai/gpt-4o", "apiBase": "http://user"}, {"model": "anthropic/claude-x"})
    assert s.model == "anthropic/claude-x" and s.api_base == "http://user"
    s = load(tmp_path, {"model": "openai/gpt-4o"}, None, env={"AGENT_LS_MODEL": "ollama/qwen3",
                                                            "AGENT_LS_API_BASE": "http://127.0.0.1:11434"})
    assert s.model == "ollama/qwen3" and s.api_base == "http://127.0.0.1:11434"
    cfg = s.llm_config()
    assert cfg is not None and cfg.model == "ollama/qwen3" and cfg.api_base == "http://127.0.0.1:11434"
    assert s.llm_config("openai/other") is not None and s.llm_config("openai/other").model == "openai/other"  # type: ignore[union-attr]


def test_models_without_model_makes_the_first_the_default(tmp_path: Path) -> None:
    s = load(tmp_path, {"models": ["openai/first", "openai/second"]}, None)
    assert s.model == "openai/first" and s.model_choices() == ("openai/first", "openai/second")
    cfg = s.llm_config()
    assert cfg is not None and cfg.model == "openai/first"
    assert s.session_model(None) == "openai/first" and s.session_model("openai/second") == "openai/second"
    s = load(tmp_path, {"models": ["openai/first"]}, None, env={"AGENT_LS_MODEL": "ollama/qwen3"})
    assert s.model == "ollama/qwen3"  # the environment still wins
    s = load(tmp_path, {"model": "openai/main", "models": ["openai/first"]}, None)
    assert s.model == "openai/main"


def test_agent_keys_merge_key_by_key_workspace_winning(tmp_path: Path) -> None:
    s = load(tmp_path, {"agent": {"deferMcpTools": False, "maxSteps": 40, "instructions": "be brief"}},
             {"agent": {"maxSteps": 7}})
    assert s.max_steps == 7 and s.defer_mcp_tools is False and s.instructions == "be brief"
    s = load(tmp_path, {"agent": {"deferMcpTools": 20, "bashTimeout": 30, "maxRetries": 0}}, None)
    assert s.defer_mcp_tools == 20 and s.bash_timeout == 30.0 and s.max_retries == 0


def test_bad_values_are_reported_and_defaults_kept(tmp_path: Path) -> None:
    s = load(tmp_path, {"agent": {"maxSteps": 0, "bashTimeout": "10", "deferMcpTools": "yes",
                                  "instructions": 3, "maxRetries": -1}},
             {"agent": "not an object", "permissions": {"allow": "bash", "deny": ["x", 1]}})
    assert (s.max_steps, s.bash_timeout, s.defer_mcp_tools, s.instructions, s.max_retries) == (
        25, 120.0, True, "", 2)
    text = "\n".join(s.problems)
    for needle in ("agent.maxSteps", "agent.bashTimeout", "agent.deferMcpTools", "agent.instructions",
                   "agent.maxRetries", '"agent" must be an object', "permissions.allow must be a list",
                   "permissions.deny must be a list"):
        assert needle in text, needle


def test_permission_lists_from_both_scopes_combine_and_deny_wins(tmp_path: Path) -> None:
    s = load(tmp_path,
             {"permissions": {"allow": ["mcp__github__*", "bash"], "ask": ["mcp__*__create_*"]}},
             {"permissions": {"deny": ["mcp__*__delete_*"], "allow": ["write_file"]}})
    assert s.allow == ("write_file", "mcp__github__*", "bash")
    rules = PermissionRules(s.allow, s.ask, s.deny)

    def d(name: str, cap: Capability = Capability.WRITE) -> Decision:
        return decide(rules, ToolSpec(name=name, description="", input_schema={}, capability=cap))[0]

    assert d("mcp__github__delete_repo") is Decision.DENY  # workspace deny beats user allow
    assert d("mcp__github__create_issue") is Decision.ASK  # user ask beats user allow
    assert d("mcp__github__list_issues", Capability.NETWORK) is Decision.ALLOW
    assert d("bash") is Decision.ALLOW and d("write_file") is Decision.ALLOW
    assert d("edit_file") is Decision.ASK and d("read_file", Capability.READ) is Decision.ALLOW


def test_unusable_glob_patterns_are_reported_with_their_place(tmp_path: Path) -> None:
    huge = "{a,b}" * 12  # expands to 4096 alternatives: refused
    s = load(tmp_path, {"agent": {"sampling": {"allowedServers": ["docs", huge], "autoApprove": [huge]}}},
             {"permissions": {"deny": ["mcp__*", huge], "allow": ["a[!x]b"]}})
    text = "\n".join(s.problems)
    for where in ("permissions.deny", "agent.sampling.allowedServers", "agent.sampling.autoApprove"):
        assert f"{where}: the pattern '{huge}' is not usable: it expands to more than 1000 alternatives" in text
    assert "a[!x]b" not in text  # a usable pattern is not reported
    assert s.deny == ("mcp__*", huge)  # kept (it matches nothing); the usable one still applies
    assert s.sampling.policy("docs", None, None).allowed
    # the settings loader reports the same as a diagnostic at the pattern's place in the file
    ws = tmp_path / "ws"
    loaded = load_settings([ws], user_settings=tmp_path / "user.json", environ={}, trust=TRUST_ALL)
    places = {(d.file.name, d.json_path) for d in loaded.diagnostics if "alternatives" in d.message}
    assert places == {("settings.json", ("permissions", "deny", 1)),
                      ("user.json", ("agent", "sampling", "allowedServers", 1)),
                      ("user.json", ("agent", "sampling", "autoApprove", 0))}
    assert all(d.span is not None for d in loaded.diagnostics if "alternatives" in d.message)


def test_shell_env_passthrough_only_from_the_user_settings_file(tmp_path: Path) -> None:
    """Issue 25, item 6: a repository must not pass your secrets to the commands it gets you to run."""
    s = load(tmp_path, {"agent": {"shellEnvPassthrough": ["NPM_TOKEN"]}}, None)
    assert s.shell_env_passthrough == ("NPM_TOKEN",)
    s = load(tmp_path, {"agent": {"shellEnvPassthrough": ["NPM_TOKEN"]}},
             {"agent": {"shellEnvPassthrough": ["OPENAI_API_KEY"], "maxSteps": 7}})
    assert s.shell_env_passthrough == ("NPM_TOKEN",) and s.max_steps == 7
    assert any("agent.shellEnvPassthrough" in p and "only honoured in the user settings file" in p for p in s.problems)
    s = load(tmp_path, None, {"agent": {"shellEnvPassthrough": ["OPENAI_API_KEY"]}})
    assert s.shell_env_passthrough == ()


def test_max_retries_is_bounded(tmp_path: Path) -> None:
    """Issue 25, item 8: agent.maxRetries takes effect in an untrusted folder; it may not be any size."""
    s = load(tmp_path, {"agent": {"maxRetries": 10}}, None)
    assert s.max_retries == 10
    s = load(tmp_path, {"agent": {"maxRetries": 3}}, {"agent": {"maxRetries": 1_000_000}})
    assert s.max_retries == 3
    assert any("agent.maxRetries" in p and "from 0 to 10" in p for p in s.problems), s.problems


def test_context_settings_and_their_bad_values(tmp_path: Path) -> None:
    s = load(tmp_path, {"agent": {"contextWindow": 32000, "compactAt": 0.7, "compactModel": "openai/mini"}}, None)
    assert (s.context_window, s.compact_at, s.compact_model) == (32000, 0.7, "openai/mini")
    cfg = s.compact_llm()
    assert cfg is not None and cfg.model == "openai/mini"
    s = load(tmp_path, {"agent": {"contextWindow": 100, "compactAt": 1.5, "compactModel": " "}}, None)
    assert (s.context_window, s.compact_at, s.compact_model, s.compact_llm()) == (None, None, None, None)
    text = "\n".join(s.problems)
    assert "agent.contextWindow must be an integer >= 2000, got 100" in text
    assert "agent.compactAt must be a number between 0.1 and 1, got 1.5" in text
    assert "agent.compactModel must be a non-empty string" in text
    s = load(tmp_path, {"agent": {"compactAt": "most"}}, None)
    assert "agent.compactAt must be a number between 0.1 and 1, not a string" in "\n".join(s.problems)


def test_background_command_settings(tmp_path: Path) -> None:
    s = load(tmp_path, {"agent": {"backgroundTimeout": 3600, "maxBackgroundCommands": 3}}, None)
    assert (s.background_timeout, s.max_background_commands, s.problems) == (3600.0, 3, ())
    s = load(tmp_path, {"agent": {"backgroundTimeout": -1, "maxBackgroundCommands": 0}}, None)
    assert (s.background_timeout, s.max_background_commands) == (None, 8)
    assert any("agent.backgroundTimeout" in p for p in s.problems)
    assert any("agent.maxBackgroundCommands" in p for p in s.problems)


def test_an_untrusted_workspace_cannot_lengthen_or_multiply_background_commands(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".agent-ls").mkdir(parents=True)
    (ws / ".agent-ls" / "settings.json").write_text(json.dumps(
        {"agent": {"backgroundTimeout": 99999, "maxBackgroundCommands": 500}}))
    user = tmp_path / "user.json"
    user.write_text("{}")
    s = agent_settings(load_settings([ws], user_settings=user, environ={}), environ={})
    assert (s.background_timeout, s.max_background_commands) == (None, 8)
    trusted = agent_settings(load_settings([ws], user_settings=user, environ={}, trust=TRUST_ALL), environ={})
    assert (trusted.background_timeout, trusted.max_background_commands) == (99999.0, 500)
