"""The MCP skills extension (``io.modelcontextprotocol/skills``, SEP-2640), host side.

A server that declares the extension serves *skills*: directories of files (at least a
``SKILL.md`` with YAML frontmatter) exposed as ordinary resources. ``skills/list`` returns one
entry per skill (its ``SKILL.md`` URI, its frontmatter verbatim, every file with its size and
``sha256:`` digest); ``skills/get`` returns one entry by URI (listings may be partial).
:class:`SkillCatalog` **lists** them (:meth:`~SkillCatalog.refresh`: again only when a server
reconnected or announced a list change; nothing of a skill is read then), **loads** one
(:meth:`~SkillCatalog.load`: reads the ``SKILL.md`` and verifies byte size, SHA-256 digest and
the frontmatter field by field) and **reads a supporting file** of a loaded skill
(:meth:`~SkillCatalog.read_file`: only files its held entry lists, verified the same way). A
mismatch raises :class:`SkillVerificationError`; the content is not used. Skills are
identified by (server label, ``SKILL.md`` URI); the model-facing ``ref`` is the skill's name,
or its path where two skills of one server share a name. ``"dynamic"`` skills (no digests) and
skills over the extension's limits (512 files, 16 MiB) are not loaded.

Requests go through the SDK session (:meth:`ServerConnection.send_request` with the typed
request models of :mod:`agent_ls.mcp.skill_entries`, where the entries are parsed and verified);
the client advertises the extension with :data:`~agent_ls.mcp.skill_entries.SKILLS_CLIENT_EXTENSION`.
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import mcp_types as types

from agent_ls.mcp.skill_entries import (
    MAX_PAGES,
    MAX_SKILL_BYTES,
    MAX_SKILL_FILES,
    SKILL_FILE,
    SKILLS_EXTENSION,
    GetSkillRequest,
    GetSkillRequestParams,
    GetSkillResult,
    ListSkillsRequest,
    ListSkillsResult,
    LoadedSkill,
    Skill,
    SkillEntry,
    SkillError,
    SkillVerificationError,
    content_bytes,
    parse_entry,
    verify_bytes,
    verify_frontmatter,
)

if TYPE_CHECKING:
    from agent_ls.mcp.connection.connection import ServerConnection

log = logging.getLogger(__name__)


# the catalogue -------------------------------------------------------------------------------
class ConnectionSource(Protocol):
    """What the catalogue needs from the MCP manager."""

    def server_names(self) -> list[str]: ...

    def connection(self, name: str) -> ServerConnection | None: ...


def offers_skills(conn: ServerConnection) -> bool:
    caps = conn.handshake.capabilities
    return caps is not None and bool(caps.extensions) and SKILLS_EXTENSION in (caps.extensions or {})


def assign_refs(server: str, entries: Sequence[SkillEntry]) -> list[Skill]:
    """A name per skill, unique in its server: the skill name, or its path where names collide."""
    counts: dict[str, int] = {}
    for e in entries:
        counts[e.name] = counts.get(e.name, 0) + 1
    return [Skill(server, e, e.name if counts[e.name] == 1 else e.path) for e in entries]


class SkillCatalog:
    """The skills of every connected server that serves them, and loading them verified."""

    def __init__(self, source: ConnectionSource) -> None:
        self._source = source
        self._skills: dict[str, tuple[tuple[Any, ...], list[Skill]]] = {}
        self.problems: dict[str, str] = {}
        """Per server: why its skills could not be listed (or which entries were dropped)."""

    async def refresh(self) -> bool:
        """List the skills of servers that connected or changed since the last call; True when
        the set of skills changed. Reads no skill content."""
        changed = False
        live: set[str] = set()
        for name in self._source.server_names():
            conn = self._source.connection(name)
            if conn is None or not conn.connected or not offers_skills(conn):
                continue
            live.add(name)
            key = (id(conn), conn.connected_at, conn.list_version)
            held = self._skills.get(name)
            if held is not None and held[0] == key:
                continue
            skills = await self._list(conn)
            if held is None or [s.entry.uri for s in held[1]] != [s.entry.uri for s in skills] \
                    or [s.entry.frontmatter for s in held[1]] != [s.entry.frontmatter for s in skills]:
                changed = True
            self._skills[name] = (key, skills)
        for gone in set(self._skills) - live:
            del self._skills[gone]
            self.problems.pop(gone, None)
            changed = True
        return changed

    def skills(self) -> list[Skill]:
        return [s for name in sorted(self._skills) for s in self._skills[name][1]]

    def find(self, server: str, ref: str) -> Skill | None:
        """A listed skill of ``server`` by its ref, name (when unique), path or ``SKILL.md`` URI."""
        skills = self._skills.get(server, ((), []))[1]
        for match in (lambda s: s.ref == ref, lambda s: s.entry.uri == ref, lambda s: s.entry.path == ref):
            found = [s for s in skills if match(s)]
            if len(found) == 1:
                return found[0]
        return None

    async def get(self, server: str, uri: str) -> Skill:
        """The entry of one skill by its ``SKILL.md`` URI (``skills/get``), listed or not."""
        conn = self._connection(server)
        try:
            result = await conn.send_request(GetSkillRequest(params=GetSkillRequestParams(uri=uri)), GetSkillResult)
        except Exception as e:
            raise SkillError(f"MCP server {server!r} has no skill {uri}: {e}") from None
        entry = parse_entry(result.skill)
        if entry.uri != uri:
            raise SkillError(f"MCP server {server!r} answered skills/get {uri} with the skill {entry.uri}")
        return Skill(server, entry, entry.path)

    async def load(self, server: str, ref: str) -> LoadedSkill:
        """Read and verify a skill's ``SKILL.md`` (size, digest, frontmatter)."""
        skill = self.find(server, ref)
        if skill is None:
            if "://" not in ref:
                listed = self._skills.get(server, ((), []))[1]
                same = [s.ref for s in listed if s.name == ref]
                if same:
                    raise SkillError(f"{len(same)} skills of MCP server {server!r} are named {ref!r}; "
                                     f"name one by its path: {', '.join(same)}")
                known = ", ".join(s.ref for s in listed) or "none"
                raise SkillError(f"MCP server {server!r} lists no skill {ref!r} (its skills: {known})")
            skill = await self.get(server, ref)
        entry = skill.entry
        what = f"skill {skill.ref!r} of MCP server {server!r} ({entry.uri})"
        if entry.files is None:
            raise SkillError(f"{what}: its content is dynamic (no digests), so it cannot be verified; "
                             "agent-ls does not load such skills")
        total = sum(f.size for f in entry.files)
        if len(entry.files) > MAX_SKILL_FILES or total > MAX_SKILL_BYTES:
            raise SkillError(f"{what}: {len(entry.files)} files, {total} bytes: over the limits of the skills "
                             f"extension ({MAX_SKILL_FILES} files, {MAX_SKILL_BYTES} bytes); not loaded")
        expected = entry.file(entry.uri)
        if expected is None:
            raise SkillError(f"{what}: the entry does not list its own {SKILL_FILE}; not loaded")
        data = await self._read(server, entry.uri)
        verify_bytes(expected, data, what)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise SkillVerificationError(f"{what}: {SKILL_FILE} is not UTF-8 text; not loaded") from None
        verify_frontmatter(entry, text, what)
        return LoadedSkill(skill, text)

    async def read_file(self, loaded: LoadedSkill, path: str) -> bytes:
        """A supporting file of a loaded skill, by path relative to the skill (or full URI),
        verified against the entry the skill was loaded from."""
        entry = loaded.skill.entry
        what = f"file {path!r} of skill {loaded.skill.ref!r} of MCP server {loaded.skill.server!r}"
        rel = posixpath.normpath(path.lstrip("/"))
        uri = path if "://" in path else f"{entry.root}/{rel}"
        if rel.startswith("..") and "://" not in path:
            raise SkillVerificationError(f"{what}: outside the skill's directory, so it is not read")
        expected = entry.file(uri)
        if expected is None:
            listed = ", ".join(p for p, _ in loaded.files) or "none"
            raise SkillVerificationError(
                f"{what}: not listed in the skill's entry, so it is not read (its files: {listed})")
        data = await self._read(loaded.skill.server, uri)
        verify_bytes(expected, data, what)
        return data

    # internals ---------------------------------------------------------------------------
    def _connection(self, server: str) -> ServerConnection:
        conn = self._source.connection(server)
        if conn is None:
            raise SkillError(f"no MCP server named {server!r} is configured")
        if not offers_skills(conn):
            raise SkillError(f"MCP server {server!r} does not serve skills")
        return conn

    async def _read(self, server: str, uri: str) -> bytes:
        conn = self._connection(server)
        try:
            result = await conn.read_resource(uri)
        except Exception as e:
            raise SkillError(f"reading {uri} from MCP server {server!r} failed: {e}") from None
        return content_bytes(result, uri)

    async def _list(self, conn: ServerConnection) -> list[Skill]:
        entries: list[SkillEntry] = []
        bad: list[str] = []
        cursor: str | None = None
        try:
            for _ in range(MAX_PAGES):
                params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
                page = await conn.send_request(ListSkillsRequest(params=params), ListSkillsResult)
                for raw in page.skills:
                    try:
                        entries.append(parse_entry(raw))
                    except SkillError as e:
                        bad.append(str(e))
                cursor = page.next_cursor
                if not cursor:
                    break
        except Exception as e:
            self.problems[conn.name] = f"skills/list failed: {type(e).__name__}: {e}"
            log.warning("MCP server %s: %s", conn.name, self.problems[conn.name])
            return []
        if bad:
            self.problems[conn.name] = "invalid skill entries were left out: " + "; ".join(bad)
            log.warning("MCP server %s: %s", conn.name, self.problems[conn.name])
        else:
            self.problems.pop(conn.name, None)
        return assign_refs(conn.name, entries)
