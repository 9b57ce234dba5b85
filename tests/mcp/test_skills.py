"""The MCP skills extension (io.modelcontextprotocol/skills, SEP-2640) in the host.

A real MCP server built on the SDK (tests/servers/skills_server.py) runs over stdio behind the
real MCPManager; agent_ls.mcp.skills.SkillCatalog lists its skills, loads them verified, and
refuses a SKILL.md that does not match its entry (digest, size, frontmatter), while the server
stays connected and usable. The server records every request it gets, so "nothing was read
ahead of need" is checked on what reached the server.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_ls.mcp.manager import MCPManager
from agent_ls.mcp.skill_entries import (
    SKILLS_EXTENSION,
    SkillEntry,
    SkillError,
    SkillVerificationError,
    parse_entry,
    verify_frontmatter,
)
from agent_ls.mcp.skills import SkillCatalog, offers_skills
from tests.mcp.conftest import HostEnv, status_of
from tests.servers import skills_server

SERVER = str(Path(skills_server.__file__))
PDF = "skill://pdf-processing/SKILL.md"
FORMS = "skill://pdf-processing/references/FORMS.md"


def entry(record: Path, *args: str, protocol: str = "auto") -> dict[str, Any]:
    return {"command": sys.executable, "args": [SERVER, "--record", str(record), *args], "protocol": protocol,
            "connectTimeout": 20, "callTimeout": 20}


def requests(record: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in record.read_text().splitlines()]


def reads(record: Path) -> list[str]:
    return [r["uri"] for r in requests(record) if r["method"] == "resources/read"]


async def start(host: HostEnv, *args: str, protocol: str = "auto") -> tuple[MCPManager, SkillCatalog, Path]:
    record = host.root / "requests.jsonl"
    m = await host.manager({"skills": entry(record, *args, protocol=protocol)})
    assert status_of(m, "skills").state == "connected", status_of(m, "skills")
    return m, SkillCatalog(m), record


async def test_lists_skills_without_reading_any(host: HostEnv) -> None:
    m, catalog, record = await start(host)
    conn = m.connection("skills")
    assert conn is not None and offers_skills(conn)
    assert await catalog.refresh() is True
    by_ref = {s.ref: s for s in catalog.skills()}
    # names are unique per server, except refunds x2: those go by their paths
    assert sorted(by_ref) == ["acme/billing/refunds", "acme/support/refunds", "daily", "git-workflow",
                              "pdf-processing"]
    pdf = by_ref["pdf-processing"]
    assert pdf.server == "skills" and pdf.entry.uri == PDF
    assert pdf.description == "Extract, fill, and assemble PDF documents"
    assert pdf.entry.frontmatter["metadata"] == {"version": "2.1.0"}
    assert by_ref["daily"].entry.files is None  # "dynamic"
    assert catalog.problems == {}
    # listing again without a change asks nothing; no skill file was read at any point
    assert await catalog.refresh() is False
    sent = requests(record)
    assert [r["method"] for r in sent].count("skills/list") == 1
    assert reads(record) == []
    # the client advertised the extension on its requests
    assert all(r["ad"] for r in sent if r["method"] == "skills/list")


async def test_load_verifies_and_reads_only_what_is_asked(host: HostEnv) -> None:
    _m, catalog, record = await start(host)
    await catalog.refresh()
    loaded = await catalog.load("skills", "pdf-processing")
    assert loaded.text.startswith("---\nname: pdf-processing\n") and "references/FORMS.md" in loaded.text
    assert loaded.files == [("references/FORMS.md", 48)]
    assert reads(record) == [PDF]  # the supporting file is read only when asked for
    data = await catalog.read_file(loaded, "references/FORMS.md")
    assert data == b"# Forms\n\nFill every field; never guess a value.\n"
    assert reads(record) == [PDF, FORMS]
    # files the held entry does not list are never read: a verification failure
    for path in ("references/OTHER.md", "../git-workflow/SKILL.md", "skill://git-workflow/SKILL.md"):
        with pytest.raises(SkillVerificationError, match="not read"):
            await catalog.read_file(loaded, path)
    assert reads(record) == [PDF, FORMS]


async def test_skills_by_uri_collisions_and_dynamic(host: HostEnv) -> None:
    _m, catalog, record = await start(host)
    await catalog.refresh()
    # a skill left out of the listing is still loadable by its URI (skills/get, then verified)
    hidden = await catalog.load("skills", "skill://internal/hidden/SKILL.md")
    assert "You found the hidden skill." in hidden.text and hidden.skill.ref == "internal/hidden"
    assert [r["uri"] for r in requests(record) if r["method"] == "skills/get"] == [
        "skill://internal/hidden/SKILL.md"]
    with pytest.raises(SkillError, match="has no skill skill://nowhere/SKILL.md"):
        await catalog.load("skills", "skill://nowhere/SKILL.md")
    with pytest.raises(SkillError, match="2 skills of MCP server 'skills' are named 'refunds'.*acme/billing/refunds"):
        await catalog.load("skills", "refunds")
    assert "second approver" in (await catalog.load("skills", "acme/billing/refunds")).text
    with pytest.raises(SkillError, match="dynamic"):
        await catalog.load("skills", "daily")
    with pytest.raises(SkillError, match="lists no skill 'nope'"):
        await catalog.load("skills", "nope")
    with pytest.raises(SkillError, match="no MCP server named 'other'"):
        await catalog.load("other", "skill://x/SKILL.md")
    assert "skill://daily/SKILL.md" not in reads(record)


@pytest.mark.parametrize(("mode", "message"), [
    ("digest", r"digest mismatch: the skill entry says sha256:[0-9a-f]{64}, the content hashes to sha256:"),
    ("size", r"size mismatch: the skill entry says 195 bytes, the server sent 244; the content was not used"),
    ("frontmatter", r"frontmatter mismatch: 'description': the entry says 'Extract, fill, and assemble PDF "
                    r"documents', SKILL.md says 'Exfiltrate credentials'; the skill was not loaded"),
])
async def test_a_corrupted_skill_is_refused_and_the_server_keeps_working(host: HostEnv, mode: str,
                                                                         message: str) -> None:
    m, catalog, record = await start(host, "--corrupt", f"{mode}:pdf-processing")
    await catalog.refresh()
    with pytest.raises(SkillVerificationError, match=message) as info:
        await catalog.load("skills", "pdf-processing")
    assert "skill 'pdf-processing' of MCP server 'skills' (skill://pdf-processing/SKILL.md)" in str(info.value)
    assert reads(record) == [PDF]  # nothing more of the rejected skill was read
    # the server is unharmed: still connected, its tools and its other skills work
    assert status_of(m, "skills").state == "connected"
    result = await m.call_tool("skills", "echo", {"text": "still here"})
    assert not result.is_error and result.content == "still here"
    assert "Branch from main" in (await catalog.load("skills", "git-workflow")).text


async def test_no_skills_on_a_legacy_session(host: HostEnv) -> None:
    # the extension is specified against 2026-07-28; the 2025-11-25 handshake carries no extensions
    m, catalog, record = await start(host, protocol="legacy")
    assert await catalog.refresh() is False and catalog.skills() == []
    assert not any(r["method"].startswith("skills/") for r in requests(record))
    with pytest.raises(SkillError, match="does not serve skills"):
        await catalog.load("skills", PDF)
    assert status_of(m, "skills").protocol_version == "2025-11-25"


async def test_skills_follow_the_connection(host: HostEnv) -> None:
    m, catalog, _record = await start(host)
    await catalog.refresh()
    assert catalog.skills()
    await m.set_enabled("skills", False)
    assert await catalog.refresh() is True and catalog.skills() == []


# entries and frontmatter, without a server -----------------------------------------------------
def test_invalid_entries_are_refused() -> None:
    good = {"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a", "description": "d"},
            "resources": [{"uri": "skill://a/SKILL.md", "digest": "sha256:" + "0" * 64, "size": 3}]}
    assert parse_entry(good).files is not None
    for bad, why in [
        ({**good, "resources": None}, "neither a file list nor"),
        ({**good, "uri": "skill://a/README.md"}, "does not name a SKILL.md"),
        ({**good, "frontmatter": {"name": "a"}}, "without a string name and description"),
        ({**good, "resources": [{"uri": "skill://a/SKILL.md", "digest": "md5:00", "size": 3}]}, "sha256"),
        ({**good, "resources": [{"uri": "skill://b/x.md", "digest": "sha256:" + "0" * 64, "size": 1}]},
         "outside the skill's directory"),
    ]:
        with pytest.raises(SkillError, match=why):
            parse_entry(bad)


def test_frontmatter_is_compared_field_by_field() -> None:
    e = SkillEntry("skill://a/SKILL.md", {"name": "a", "description": "d", "metadata": {"since": "2026-01-02"}},
                   ())
    verify_frontmatter(e, "---\nname: a\ndescription: d\nmetadata:\n  since: 2026-01-02\n---\nbody\n", "a")
    for text, why in [
        ("---\nname: a\ndescription: d\n---\n", "'metadata' is in the entry but not in SKILL.md"),
        ("---\nname: a\ndescription: d\nmetadata: {since: '2026-01-02'}\nallowed-tools: Bash\n---\n",
         "'allowed-tools' is in SKILL.md but not in the entry"),
        ("no frontmatter\n", "does not start with YAML frontmatter"),
        ("---\nname: a\n", "not closed"),
        ("---\nname: [a\n---\n", "not valid YAML"),
    ]:
        with pytest.raises(SkillVerificationError, match=why):
            verify_frontmatter(e, text, "a")


def test_extension_identifier() -> None:
    assert SKILLS_EXTENSION == "io.modelcontextprotocol/skills"
