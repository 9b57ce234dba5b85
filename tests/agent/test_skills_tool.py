"""Skills served by MCP servers, as the agent offers them: the list in the system prompt and the
``load_skill`` tool, with a real skills server (tests/servers/skills_server.py) over stdio behind
the real MCPManager and SkillCatalog, and the scripted LLM."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_ls.agent.builtin_tools import builtin_tools
from agent_ls.agent.session import Session
from agent_ls.agent.skills_tool import LOAD_SKILL
from agent_ls.agent.tools.registry import ToolRegistry
from agent_ls.agent.workspace import Workspace
from agent_ls.config.settings import load_settings
from agent_ls.mcp.manager import MCPManager
from agent_ls.mcp.skills import SkillCatalog
from tests.agent.conftest import Recorder, openai_config
from tests.llm.scripted_server import ScriptedLLM, text, tool_calls
from tests.servers import skills_server
from tests.tooling import TRUST_ALL

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")

SERVER = str(Path(skills_server.__file__))


async def start(tmp: Path, ws: Path, *args: str, protocol: str = "auto") -> tuple[MCPManager, Path]:
    record = tmp / "requests.jsonl"
    user = tmp / "user.json"
    user.write_text(json.dumps({"mcpServers": {"skills": {
        "command": sys.executable, "args": [SERVER, "--record", str(record), *args], "protocol": protocol}}}))
    m = MCPManager(roots=[ws])
    await m.apply(load_settings([ws], user_settings=user, trust=TRUST_ALL))
    await m.wait_ready(30)
    return m, record


def reads(record: Path) -> list[str]:
    return [r["uri"] for line in record.read_text().splitlines()
            if (r := json.loads(line))["method"] == "resources/read"]


def registry(ws: Path, m: MCPManager) -> ToolRegistry:
    return ToolRegistry(builtin_tools(Workspace([ws])), m, skills=SkillCatalog(m))


def system_text(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    return content if isinstance(content, str) else "\n".join(b["text"] for b in content)


async def test_the_model_sees_skills_and_loads_one(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    m, record = await start(tmp_path, ws)
    try:
        llm.script(
            tool_calls([(LOAD_SKILL, {"server": "skills", "skill": "pdf-processing"})]),
            tool_calls([(LOAD_SKILL, {"server": "skills", "skill": "pdf-processing",
                                      "file": "references/FORMS.md"})]),
            text("Done."),
        )
        s = Session(llm=openai_config(llm), registry=registry(ws, m), roots=[ws])
        rec = Recorder()
        result = await s.prompt("fill in this PDF form", rec)
        assert result.text == "Done."
        first = llm.requests[-3].body
        system = system_text(first)
        assert "skills: pdf-processing: Extract, fill, and assemble PDF documents" in system
        assert "skills: acme/billing/refunds: Process customer refund requests" in system
        assert "internal/hidden" not in system  # not listed: reachable by URI only
        assert LOAD_SKILL in [t["function"]["name"] for t in first["tools"]]
        loaded, forms = rec.of("tool_call_finished")
        assert not loaded.is_error and not forms.is_error
        assert "Skill 'pdf-processing' from MCP server 'skills' (skill://pdf-processing/SKILL.md)" in loaded.content
        assert "untrusted" in loaded.content and "references/FORMS.md (48 bytes)" in loaded.content
        assert '<skill server="skills" uri="skill://pdf-processing/SKILL.md">\n---\nname: pdf-processing' \
            in loaded.content
        assert "Fill every field; never guess a value." in forms.content
        assert reads(record) == ["skill://pdf-processing/SKILL.md", "skill://pdf-processing/references/FORMS.md"]
    finally:
        await m.close()


async def test_a_corrupted_skill_is_an_error_result(ws: Path, tmp_path: Path) -> None:
    m, record = await start(tmp_path, ws, "--corrupt", "frontmatter:git-workflow")
    try:
        reg = registry(ws, m)
        await reg.before_prompt()
        tool = reg.get(LOAD_SKILL)
        assert tool is not None
        bad = await tool.call({"server": "skills", "skill": "git-workflow"})
        assert bad.is_error and "frontmatter mismatch: 'description'" in bad.content
        assert "the skill was not loaded" in bad.content
        # it was not loaded: its files cannot be read through it
        again = await tool.call({"server": "skills", "skill": "git-workflow", "file": "SKILL.md"})
        assert again.is_error and "is not loaded: load it first" in again.content
        ok = await tool.call({"server": "skills", "skill": "pdf-processing"})
        assert not ok.is_error
        unlisted = await tool.call({"server": "skills", "skill": "pdf-processing", "file": "scripts/run.sh"})
        assert unlisted.is_error and "not listed in the skill's entry" in unlisted.content
        for args, why in [({"server": "skills"}, "needs \"server\" and \"skill\""),
                          ({"server": "skills", "skill": "refunds"}, "are named 'refunds'"),
                          ({"server": "nope", "skill": "x"}, "lists no skill 'x'")]:
            result = await tool.call(args)
            assert result.is_error and why in result.content, result
        assert reads(record) == ["skill://git-workflow/SKILL.md", "skill://pdf-processing/SKILL.md"]
        echo = await m.call_tool("skills", "echo", {"text": "fine"})
        assert not echo.is_error and echo.content == "fine"
    finally:
        await m.close()


async def test_no_skills_no_tool(ws: Path, tmp_path: Path) -> None:
    m, _record = await start(tmp_path, ws, protocol="legacy")  # no extensions on the legacy handshake
    try:
        reg = registry(ws, m)
        await reg.before_prompt()
        assert LOAD_SKILL not in [s.name for s in reg.visible_specs()]
        assert reg.get(LOAD_SKILL) is None and reg.skill_catalogue() == ""
    finally:
        await m.close()


async def test_the_active_set_can_leave_skills_out(ws: Path, tmp_path: Path) -> None:
    m, _record = await start(tmp_path, ws)
    try:
        reg = registry(ws, m)
        assert await reg.before_prompt() is True  # the skills appeared
        assert LOAD_SKILL in [s.name for s in reg.visible_specs()] and reg.skill_catalogue()
        reg.set_active(["read_file"])
        assert LOAD_SKILL not in [s.name for s in reg.visible_specs()]
        assert reg.get(LOAD_SKILL) is None and reg.skill_catalogue() == ""
        reg.set_active(["read_file", LOAD_SKILL])
        assert reg.get(LOAD_SKILL) is not None
    finally:
        await m.close()
