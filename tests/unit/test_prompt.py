"""Prompt assembly: frozen identity and instructions (with the project file), the dynamic
part (deferred catalogue, server instructions, reminders), cache breakpoints."""

from __future__ import annotations

from pathlib import Path

from agent_ls.agent.prompt import (
    IDENTITY,
    MAX_PROJECT_CHARS,
    FrozenPrompt,
    deferred_catalogue,
    dynamic_text,
    project_instructions,
    short_name,
    system_messages,
    tool_definitions,
)
from agent_ls.core.tools import ToolSpec


def mcp(server: str, model_name: str, original: str) -> ToolSpec:
    return ToolSpec(name=model_name, description=f"{original} on {server}", input_schema={"type": "object"},
                    source="mcp", server=server, display_name=original)


def test_frozen_prompt_has_identity_workspace_agents_md_and_user_instructions(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("  Run `make test` before committing.\n")
    frozen = FrozenPrompt.build([tmp_path], "Answer in French.")
    assert frozen.text.startswith(IDENTITY)
    assert f"# Workspace\n- {tmp_path}" in frozen.text
    assert "# Project instructions (AGENTS.md)\nRun `make test` before committing." in frozen.text
    assert frozen.text.endswith("# User instructions\nAnswer in French.")
    assert FrozenPrompt.build([tmp_path], "Answer in French.") == frozen  # same inputs, same bytes


def test_project_file_precedence_and_cap(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    assert project_instructions([a, b]) == ""
    (b / "CLAUDE.md").write_text("from b")
    assert project_instructions([a, b]) == "# Project instructions (CLAUDE.md)\nfrom b"
    (a / ".agent-ls").mkdir()
    (a / ".agent-ls" / "instructions.md").write_text("from a")
    assert "from a" in project_instructions([a, b])
    (a / "AGENTS.md").write_text("x" * (MAX_PROJECT_CHARS + 10))
    text = project_instructions([a, b])
    assert text.startswith("# Project instructions (AGENTS.md)") and "[... 10 characters cut]" in text
    (a / "AGENTS.md").write_bytes(b"\xff\xfe not utf-8")
    assert "from a" in project_instructions([a, b])  # an unreadable file is skipped


HASHED = "mcp__" + "x" * 46 + "_0123abcd"  # what naming gives a server name too long to keep


def test_deferred_catalogue_lists_short_names_by_server() -> None:
    specs = [mcp("github", "mcp__github__create_issue", "create_issue"),
             mcp("github", "mcp__github__list_commits", "list_commits"),
             mcp("my server", "mcp__my_server__get_thing", "get.thing"),
             mcp("x" * 70, HASHED, "t")]
    text = deferred_catalogue(specs)
    lines = text.splitlines()
    assert lines[0] == "<system-reminder>" and lines[-1] == "</system-reminder>"
    assert "mcp__SERVER__NAME" in lines[1]
    assert "github: create_issue, list_commits" in lines
    assert "my_server: get_thing" in lines  # the sanitized server, so mcp__my_server__get_thing is exact
    assert lines[-2] == f"{'x' * 70}: {HASHED}"  # a hashed name does not start mcp__<server>__: listed whole
    for spec in specs:  # every listed name maps back to exactly one model-facing name
        short = short_name(spec)
        assert spec.name == short or spec.name.endswith("__" + short)
    assert deferred_catalogue([]) == ""


def test_dynamic_text_parts_in_order() -> None:
    specs = [mcp("k", "mcp__k__a", "a")]
    text = dynamic_text(specs, "## k\nUse a first.\n", ["  ", "Reminder: tests are slow."])
    assert text.index("<system-reminder>") < text.index("# MCP server instructions\n## k\nUse a first.")
    assert text.endswith("Reminder: tests are slow.")
    assert dynamic_text([], "", []) == ""


def test_system_messages_with_and_without_cache_breakpoints() -> None:
    frozen = FrozenPrompt("FROZEN")
    plain = system_messages(frozen, "DYNAMIC", cache_control=False)
    assert plain == [{"role": "system", "content": "FROZEN\n\nDYNAMIC"}]
    cached = system_messages(frozen, "DYNAMIC", cache_control=True)
    assert cached == [{"role": "system", "content": [
        {"type": "text", "text": "FROZEN", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "DYNAMIC"}]}]
    assert system_messages(frozen, "", cache_control=True)[0]["content"] == [
        {"type": "text", "text": "FROZEN", "cache_control": {"type": "ephemeral"}}]


def test_tool_definitions_breakpoint_on_the_last_tool_only() -> None:
    specs = [mcp("k", "mcp__k__a", "a"), mcp("k", "mcp__k__b", "b")]
    plain = tool_definitions(specs, cache_control=False)
    assert all("cache_control" not in t for t in plain) and plain[0]["function"]["name"] == "mcp__k__a"
    cached = tool_definitions(specs, cache_control=True)
    assert "cache_control" not in cached[0] and cached[1]["cache_control"] == {"type": "ephemeral"}
    assert tool_definitions(specs, cache_control=False) == plain  # pure: the spec is not modified
    assert tool_definitions([], cache_control=True) == []
