"""Typed settings sections (agent_ls/config/sections.py, structure.py, reload.py): every
problem is a diagnostic at its place (file, JSON path, line, column), an invalid section counts
as absent, and on a reload a section's last valid value stays in force."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_ls.config.diagnostics import ConfigDiagnostic
from agent_ls.config.reload import keep_last_valid_sections
from agent_ls.config.sections import AgentSection, McpSection, Permissions, SamplingSection, ToolAction
from agent_ls.config.settings import LoadedSettings, load_settings
from tests.tooling import TRUST_ALL

HUGE = "{a,b}" * 12  # expands to 4096 alternatives: an unusable pattern


class Files:
    def __init__(self, tmp_path: Path) -> None:
        self.folder = tmp_path / "ws"
        self.workspace = self.folder / ".agent-ls" / "settings.json"
        self.workspace.parent.mkdir(parents=True)
        self.user = tmp_path / "user.json"
        self.user.write_text("{}")

    def write(self, file: Path, content: Any) -> str:
        text = content if isinstance(content, str) else json.dumps(content, indent=2)
        file.write_text(text, encoding="utf-8")
        return text

    def load(self) -> LoadedSettings:
        return load_settings([self.folder], user_settings=self.user, environ={}, trust=TRUST_ALL)

    def reload(self, old: LoadedSettings) -> LoadedSettings:
        new = self.load()
        keep_last_valid_sections(old, new)
        return new


def at(text: str, needle: str) -> tuple[int, int]:
    """0-based (line, column) of ``needle`` in ``text``."""
    index = text.index(needle)
    return text.count("\n", 0, index), index - (text.rfind("\n", 0, index) + 1)


def only(loaded: LoadedSettings, path: tuple[str | int, ...]) -> ConfigDiagnostic:
    found = [d for d in loaded.diagnostics if d.json_path == path]
    assert len(found) == 1, (path, loaded.diagnostics)
    return found[0]


def place(d: ConfigDiagnostic) -> tuple[int, int]:
    assert d.span is not None
    return d.span.start.line, d.span.start.column


# problems: one diagnostic each, at its place ---------------------------------------------------


def test_a_wrong_type_is_an_error_at_the_value_and_the_section_counts_as_absent(tmp_path: Path) -> None:
    f = Files(tmp_path)
    text = f.write(f.workspace, {"agent": {"instructions": "be brief", "maxSteps": "many"},
                                 "permissions": {"deny": ["bash"]}})
    loaded = f.load()
    d = only(loaded, ("agent", "maxSteps"))
    assert (d.file, d.severity) == (f.workspace, "error")
    assert d.message == "must be a positive integer, not a string"  # said at the place, after the path
    assert d.sentence() == "agent.maxSteps must be a positive integer, not a string"
    assert place(d) == at(text, '"many"')
    assert str(d).startswith(f"{f.workspace}:{at(text, chr(34) + 'many')[0] + 1}:")
    sections = loaded.merged_sections()
    assert sections.agent is None  # the whole section: "instructions" does not apply either
    assert sections.permissions == Permissions(allow=(), ask=(), deny=("bash",))  # the file's other sections do
    assert loaded.sections[0].invalid == {"agent"}


def test_wrong_types_everywhere_each_at_its_place(tmp_path: Path) -> None:
    f = Files(tmp_path)
    text = f.write(f.user, """{
  "model": 42,
  "apiBase": ["http://x"],
  "agent": "fast",
  "permissions": {"allow": "bash", "deny": ["x", 7]},
  "toolActions": [{"title": "T", "server": "s", "tool": "t", "apply": "overwrite"}, "nope"],
  "mcp": {"maxOutputChars": 0}
}""")
    loaded = f.load()
    expected = {
        ("model",): ('"model" must be a string, not a number', "42"),
        ("apiBase",): ('"apiBase" must be a string, not an array', '["http'),
        ("agent",): ('"agent" must be an object, not a string', '"fast"'),
        ("permissions", "allow"): ("permissions.allow must be a list of strings, not a string", '"bash"'),
        ("permissions", "deny", 1): ("permissions.deny must be a list of strings: item 1 is a number", "7]"),
        ("toolActions", 0, "apply"): ('toolActions[0].apply must be "replaceSelection", got \'overwrite\'',
                                      '"overwrite"'),
        ("toolActions", 1): ('"toolActions" must be a list of objects: item 1 is a string', '"nope"'),
        ("mcp", "maxOutputChars"): ("mcp.maxOutputChars must be a positive integer, got 0", "0}"),
    }
    for path, (sentence, needle) in expected.items():
        d = only(loaded, path)
        assert (d.file, d.sentence(), d.severity) == (f.user, sentence, "error")
        assert d.message.startswith("must be ") and place(d) == at(text, needle), path
    assert only(loaded, ("permissions", "deny", 1)).message == "must be a string, not a number"
    assert loaded.sections[0].invalid == {"model", "apiBase", "agent", "permissions", "toolActions", "mcp"}
    merged = loaded.merged_sections()
    assert (merged.model, merged.api_base, merged.agent, merged.tool_actions, merged.mcp) == (None,) * 5


def test_an_unknown_key_is_an_error_at_the_key_with_a_suggestion(tmp_path: Path) -> None:
    f = Files(tmp_path)
    text = f.write(f.workspace, """{
  "permissions": {"dney": ["mcp__*__delete_*"]},
  "agent": {"sampling": {"servers": {"docs": {"maxToken": 5}}}, "zzz": 1},
  "toolAction": []
}""")
    loaded = f.load()
    d = only(loaded, ("permissions", "dney"))
    assert d.message == "unknown key 'dney'; did you mean 'deny'?" and d.severity == "error"
    assert d.sentence() == "\"permissions\": unknown key 'dney'; did you mean 'deny'?"
    assert place(d) == at(text, '"dney"')
    d = only(loaded, ("agent", "sampling", "servers", "docs", "maxToken"))
    assert d.sentence() == "agent.sampling.servers.docs: unknown key 'maxToken'; did you mean 'maxTokens'?"
    assert place(d) == at(text, '"maxToken"')
    d = only(loaded, ("agent", "zzz"))
    assert d.message == "unknown key 'zzz'" and place(d) == at(text, '"zzz"')  # nothing close
    d = only(loaded, ("toolAction",))  # a top-level key: a warning (nothing else is lost)
    assert d.severity == "warning" and "did you mean 'toolActions'?" in d.message
    assert place(d) == at(text, '"toolAction"')
    assert loaded.merged_sections().permissions == Permissions(allow=(), ask=(), deny=())  # not a silent allow-all


def test_an_unusable_glob_is_an_error_at_the_pattern_and_the_rule_is_kept(tmp_path: Path) -> None:
    f = Files(tmp_path)
    text = f.write(f.workspace, {"permissions": {"deny": ["mcp__*", HUGE]},
                                 "agent": {"sampling": {"allowedServers": [HUGE]}}})
    loaded = f.load()
    d = only(loaded, ("permissions", "deny", 1))
    assert d.message.startswith(f"the pattern '{HUGE}' is not usable")
    assert d.sentence() == f"permissions.deny: {d.message}"
    assert d.message.endswith("it matches nothing") and place(d) == at(text, json.dumps(HUGE))
    d = only(loaded, ("agent", "sampling", "allowedServers", 0))
    assert d.sentence().startswith("agent.sampling.allowedServers: the pattern")
    merged = loaded.merged_sections()  # the sections stay valid: the pattern is kept (deny: fails closed)
    assert merged.permissions is not None and merged.permissions.deny == ("mcp__*", HUGE)
    assert merged.agent is not None and merged.agent.sampling is not None
    assert merged.agent.sampling.allowed_servers == (HUGE,)


def test_auto_approve_outside_the_user_file_is_a_warning_and_dropped(tmp_path: Path) -> None:
    f = Files(tmp_path)
    text = f.write(f.workspace, {"agent": {"sampling": {"autoApprove": ["docs"], "maxTokens": 10}}})
    f.write(f.user, {"agent": {"sampling": True}})
    loaded = f.load()
    d = only(loaded, ("agent", "sampling", "autoApprove"))
    assert d.severity == "warning" and place(d) == at(text, '"autoApprove"')
    agent = loaded.merged_sections().agent
    assert agent is not None
    assert agent.sampling == SamplingSection(enabled=True, max_tokens=10)


def test_valid_sections_are_typed_and_merged_across_scopes(tmp_path: Path) -> None:
    f = Files(tmp_path)
    f.write(f.user, {"model": "openai/user", "apiBase": "http://user", "agent": {"maxSteps": 40, "bashTimeout": 5,
                     "sampling": {"model": " openai/small ", "maxTokens": 100}},
                     "permissions": {"allow": ["bash"]}, "mcp": {"maxOutputChars": 1000},
                     "toolActions": [{"title": "User", "server": "s", "tool": "t"}]})
    f.write(f.workspace, {"model": "openai/ws", "agent": {"maxSteps": 3, "deferMcpTools": 0, "sampling": False},
                          "permissions": {"deny": ["x"]},
                          "toolActions": [{"title": "Ws", "server": "s", "tool": "t",
                                           "arguments": {"q": "${selection}"}, "apply": "replaceSelection"}]})
    loaded = f.load()
    assert not loaded.diagnostics
    merged = loaded.merged_sections()
    assert (merged.model, merged.api_base) == ("openai/ws", "http://user")
    assert merged.agent == AgentSection(max_steps=3, defer_mcp_tools=0, bash_timeout=5.0,
                                        sampling=SamplingSection(enabled=False, model="openai/small",
                                                                 max_tokens=100))
    assert merged.permissions == Permissions(allow=("bash",), ask=(), deny=("x",))
    assert merged.mcp == McpSection(max_output_chars=1000)
    assert merged.tool_actions == (ToolAction("Ws", "s", "t", {"q": "${selection}"}, "replaceSelection"),)
    assert merged.tool_actions[0].as_dict() == {"title": "Ws", "server": "s", "tool": "t",
                                                "arguments": {"q": "${selection}"}, "apply": "replaceSelection"}


def test_the_limits_match_the_agent_and_the_language_server() -> None:
    from agent_ls.agent.tools.output_store import DEFAULT_PAGE_CHARS, MIN_PAGE_CHARS
    from agent_ls.config.structure import (
        DEFAULT_OUTPUT_PAGE_CHARS,
        MIN_OUTPUT_PAGE_CHARS,
        TOOL_ACTION_APPLY_MODES,
    )
    from agent_ls.server.handlers.code_actions import APPLY_MODES

    assert MIN_OUTPUT_PAGE_CHARS == MIN_PAGE_CHARS and TOOL_ACTION_APPLY_MODES == APPLY_MODES
    assert DEFAULT_OUTPUT_PAGE_CHARS == DEFAULT_PAGE_CHARS


# reload: the last valid value of a section stays in force --------------------------------------


def test_an_invalid_section_keeps_its_last_valid_value_with_the_diagnostic(tmp_path: Path) -> None:
    f = Files(tmp_path)
    f.write(f.workspace, {"model": "openai/a", "agent": {"maxSteps": 7, "instructions": "be brief"},
                          "toolActions": [{"title": "T", "server": "s", "tool": "t"}]})
    first = f.load()
    good_agent = first.merged_sections().agent
    assert good_agent is not None and good_agent.max_steps == 7
    # agent and toolActions break; the model changes (a valid section of the same file applies)
    text = f.write(f.workspace, {"model": "openai/b", "agent": {"maxSteps": 0, "instructions": "be brief"},
                                 "toolActions": {"title": "T"}})
    second = f.reload(first)
    merged = second.merged_sections()
    assert merged.model == "openai/b" and merged.agent == good_agent
    assert merged.tool_actions == (ToolAction("T", "s", "t"),)
    error = only(second, ("agent", "maxSteps"))
    assert error.severity == "error" and place(error) == at(text, "0,")
    kept = [d for d in second.diagnostics if d.severity == "information"]
    assert {d.json_path for d in kept} == {("agent",), ("toolActions",)}
    assert all("last valid value" in d.message and d.file == f.workspace for d in kept)
    assert {place(d) for d in kept} == {at(text, '"agent"'), at(text, '"toolActions"')}
    # still broken on the next reload: still the same last valid value (kept from the kept one)
    f.write(f.workspace, {"model": "openai/b", "agent": {"maxSteps": "x"}})
    third = f.reload(second)
    assert third.merged_sections().agent == good_agent
    assert third.merged_sections().tool_actions is None  # removed from the file: gone
    # fixed: the new value applies, no diagnostics
    f.write(f.workspace, {"agent": {"maxSteps": 9}})
    fourth = f.reload(third)
    assert fourth.merged_sections().agent == AgentSection(max_steps=9)
    assert not fourth.diagnostics


def test_a_section_never_valid_stays_absent(tmp_path: Path) -> None:
    f = Files(tmp_path)
    f.write(f.workspace, {"model": "openai/a"})
    first = f.load()
    f.write(f.workspace, {"model": "openai/a", "agent": {"maxSteps": -1}})
    second = f.reload(first)
    assert second.merged_sections().agent is None
    assert not [d for d in second.diagnostics if d.severity == "information"]
    f.write(f.user, {"agent": {"maxSteps": 3}})  # a lower scope's valid value applies meanwhile
    assert f.reload(second).merged_sections().agent == AgentSection(max_steps=3)


def test_an_unparsable_file_keeps_all_its_sections_at_its_precedence(tmp_path: Path) -> None:
    f = Files(tmp_path)
    f.write(f.user, {"model": "openai/user", "permissions": {"deny": ["u"]}})
    f.write(f.workspace, {"model": "openai/ws", "permissions": {"deny": ["w"]}})
    first = f.load()
    f.write(f.workspace, '{"model": "openai/other" "permissions": {}}')  # missing comma
    second = f.reload(first)
    assert [s.file for s in second.sections] == [f.workspace, f.user]  # the workspace still wins
    merged = second.merged_sections()
    assert merged.model == "openai/ws" and merged.permissions == Permissions(allow=(), ask=(), deny=("w", "u"))
    d = only(second, ())
    assert "invalid JSON" in d.message and place(d) == (0, 25)


def test_the_agent_settings_use_the_kept_value_and_report_the_problem(tmp_path: Path) -> None:
    from agent_ls.agent.config import agent_settings

    f = Files(tmp_path)
    f.write(f.workspace, {"agent": {"maxSteps": 7}, "permissions": {"deny": ["bash"]}})
    first = f.load()
    f.write(f.workspace, {"agent": {"maxSteps": True}, "permissions": {"deny": "bash"}})
    agent = agent_settings(f.reload(first), environ={})
    assert agent.max_steps == 7 and agent.deny == ("bash",)
    assert f"{f.workspace}: agent.maxSteps must be a positive integer, not a boolean" in agent.problems
    assert f"{f.workspace}: permissions.deny must be a list of strings, not a string" in agent.problems
    assert len(agent.problems) == 2  # the "kept" notes are information, not problems


# the cattrs behaviour the structuring relies on ------------------------------------------------


def test_cattrs_detailed_validation_gives_every_error_with_its_path() -> None:
    """Canary for agent_ls/config/structure.py: cattrs' ClassValidationError groups (notes with
    attribute names and indexes), ForbiddenExtraKeysError.extra_fields under forbid_extra_keys,
    Annotated hooks through register_structure_hook_func, renamed keys through override(rename=)."""
    from agent_ls.config.structure import Invalid, describe, structure

    value, problems = structure({"maxSteps": 0, "maxRetries": "x", "sampling": {"servers": {"a": {"modle": "m"}}},
                                 "bashTimeot": 3}, AgentSection)
    assert value is None
    found = {(path, str(what), is_key) for path, what, is_key in problems}
    assert found == {
        (("maxSteps",), "must be a positive integer, got 0", False),
        (("maxRetries",), "must be an integer from 0 to 10, not a string", False),
        (("sampling", "servers", "a", "modle"), "unknown key 'modle'; did you mean 'model'?", True),
        (("bashTimeot",), "unknown key 'bashTimeot'; did you mean 'bashTimeout'?", True),
    }
    assert all(isinstance(what, Invalid) for path, what, is_key in problems if not is_key)
    assert describe(("agent",), problems[0])[0][0] == "agent"
    ok, none = structure({"maxSteps": 3, "sampling": True, "bashTimeout": 2}, AgentSection)
    assert ok == AgentSection(max_steps=3, bash_timeout=2.0, sampling=SamplingSection(enabled=True)) and none == []


def test_a_store_smaller_than_the_page_in_effect_is_a_warning_at_its_value(tmp_path: Path) -> None:
    """agent.outputStoreChars below agent.outputPageChars: in one file, across files (the page
    from the user file, the store from the workspace's), and against the default page."""
    from agent_ls.agent.config import agent_settings

    files = Files(tmp_path)
    body = files.write(files.user, {"agent": {"outputPageChars": 5000, "outputStoreChars": 2000}})
    [warning] = [d for d in files.load().diagnostics if d.json_path == ("agent", "outputStoreChars")]
    assert warning.file == files.user and warning.severity == "warning" and warning.span is not None
    assert (warning.span.start.line, warning.span.start.column) == at(body, "2000")
    assert warning.message == "must be at least agent.outputPageChars (5000), got 2000; 5000 is used"
    # across files: the store in effect is the workspace's, the page the user's
    files.write(files.user, {"agent": {"outputPageChars": 5000}})
    body = files.write(files.workspace, {"agent": {"outputStoreChars": 3000}})
    loaded = files.load()
    [warning] = [d for d in loaded.diagnostics if d.json_path == ("agent", "outputStoreChars")]
    assert warning.file == files.workspace and (warning.span.start.line, warning.span.start.column) == at(body, "3000")
    assert warning.message == f"must be at least agent.outputPageChars in {files.user} (5000), got 3000; 5000 is used"
    agent = agent_settings(loaded, environ={})
    assert agent.output_store_chars == 5000 and agent.problems == (f"{files.workspace}: agent.outputStoreChars "
                                                                   f"{warning.message}",)
    # against the default page (30000), and nothing when the store is large enough
    files.write(files.user, "{}")
    assert [d.message for d in files.load().diagnostics] == [
        "must be at least agent.outputPageChars (30000), got 3000; 30000 is used"]
    files.write(files.workspace, {"agent": {"outputStoreChars": 30000}})
    assert files.load().diagnostics == []
