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
request models below); the client advertises the extension with :data:`SKILLS_CLIENT_EXTENSION`.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import logging
import posixpath
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

import attrs
import mcp_types as types
import yaml
from mcp.client.extension import advertise

if TYPE_CHECKING:
    from agent_ls.mcp.connection import ServerConnection

log = logging.getLogger(__name__)

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
SKILLS_CLIENT_EXTENSION = advertise(SKILLS_EXTENSION)
"""The client's capability ad (``Client(extensions=[...])``): the host implements the extension."""
SKILL_FILE = "SKILL.md"
MAX_SKILL_FILES = 512
MAX_SKILL_BYTES = 16 * 1024 * 1024
MAX_PAGES = 100
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


# wire models ---------------------------------------------------------------------------------
class ListSkillsRequest(types.PaginatedRequest[Literal["skills/list"]]):
    method: Literal["skills/list"] = "skills/list"


class ListSkillsResult(types.PaginatedResult, types.CacheableResult):
    skills: list[dict[str, Any]] = []
    """Raw entries: each is checked on its own, so one bad entry does not hide the others."""


class GetSkillRequestParams(types.RequestParams):
    uri: str


class GetSkillRequest(types.Request[GetSkillRequestParams, Literal["skills/get"]]):
    method: Literal["skills/get"] = "skills/get"
    params: GetSkillRequestParams


class GetSkillResult(types.CacheableResult):
    skill: dict[str, Any]


# errors --------------------------------------------------------------------------------------
class SkillError(Exception):
    """A skill cannot be found, listed or loaded (the message says which and why)."""


class SkillVerificationError(SkillError):
    """What a server sent does not match the skill's entry; the content was not used."""


# entries -------------------------------------------------------------------------------------
@attrs.frozen
class SkillFile:
    uri: str
    digest: str
    size: int


@attrs.frozen(eq=False)
class SkillEntry:
    """One ``Skill`` entry of ``skills/list`` / ``skills/get``."""

    uri: str
    frontmatter: dict[str, Any]
    files: tuple[SkillFile, ...] | None
    """The manifest; None when the server says ``"dynamic"``."""

    @property
    def name(self) -> str:
        return str(self.frontmatter.get("name", ""))

    @property
    def description(self) -> str:
        return str(self.frontmatter.get("description", ""))

    @property
    def root(self) -> str:
        """The skill's directory: its URI without ``/SKILL.md``."""
        return self.uri[: -len(SKILL_FILE) - 1]

    @property
    def path(self) -> str:
        """The skill path (``acme/billing/refunds``): the root without its scheme."""
        return self.root.split("://", 1)[-1]

    def file(self, uri: str) -> SkillFile | None:
        return next((f for f in self.files or () if f.uri == uri), None)

    def relative(self, uri: str) -> str:
        return uri[len(self.root) + 1:] if uri.startswith(self.root + "/") else uri


def parse_entry(raw: Any) -> SkillEntry:
    """A ``Skill`` entry from its JSON form; :class:`SkillError` when it is invalid."""
    if not isinstance(raw, dict) or not isinstance(raw.get("uri"), str):
        raise SkillError("a skill entry without a \"uri\"")
    uri = raw["uri"]
    fm = raw.get("frontmatter")
    if not uri.endswith("/" + SKILL_FILE):
        raise SkillError(f"skill entry {uri}: the uri does not name a {SKILL_FILE}")
    if not isinstance(fm, dict) or not isinstance(fm.get("name"), str) or not isinstance(fm.get("description"), str):
        raise SkillError(f"skill entry {uri}: frontmatter without a string name and description")
    resources = raw.get("resources")
    if resources == "dynamic":
        return SkillEntry(uri, fm, None)
    if not isinstance(resources, list):
        raise SkillError(f"skill entry {uri}: \"resources\" is neither a file list nor \"dynamic\"")
    files: list[SkillFile] = []
    for r in resources:
        if not (isinstance(r, dict) and isinstance(r.get("uri"), str) and isinstance(r.get("digest"), str)
                and _DIGEST.fullmatch(r["digest"]) and isinstance(r.get("size"), int)
                and not isinstance(r["size"], bool) and r["size"] >= 0):
            raise SkillError(f"skill entry {uri}: a file without a valid uri, sha256 digest and size: {r!r}"[:400])
        if not r["uri"].startswith(uri[: -len(SKILL_FILE)]):
            raise SkillError(f"skill entry {uri}: the file {r['uri']} is outside the skill's directory"[:400])
        files.append(SkillFile(r["uri"], r["digest"], r["size"]))
    return SkillEntry(uri, fm, tuple(files))


@attrs.frozen
class Skill:
    """A skill as the host offers it: its server (the host's label), its entry, and ``ref``, the
    name the model uses for it within the server."""

    server: str
    entry: SkillEntry
    ref: str

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def description(self) -> str:
        return self.entry.description


@attrs.frozen
class LoadedSkill:
    """A loaded skill: its verified ``SKILL.md`` text and the entry it was verified against."""

    skill: Skill
    text: str

    @property
    def files(self) -> list[tuple[str, int]]:
        """Supporting files (path relative to the skill, size in bytes), from the held entry."""
        e = self.skill.entry
        return [(e.relative(f.uri), f.size) for f in e.files or () if f.uri != e.uri]


# verification --------------------------------------------------------------------------------
def verify_bytes(expected: SkillFile, data: bytes, what: str) -> None:
    if len(data) != expected.size:
        raise SkillVerificationError(
            f"{what}: size mismatch: the skill entry says {expected.size} bytes, the server sent "
            f"{len(data)}; the content was not used")
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    if digest != expected.digest:
        raise SkillVerificationError(
            f"{what}: digest mismatch: the skill entry says {expected.digest}, the content hashes to "
            f"{digest}; the content was not used")


def _plain(value: Any) -> Any:
    """YAML values as their JSON rendering would read (dates become ISO strings)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, datetime.date | datetime.datetime):
        return value.isoformat()
    return value


def parse_frontmatter(text: str) -> dict[str, Any]:
    """The YAML frontmatter of a ``SKILL.md``; :class:`SkillVerificationError` without one."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        raise SkillVerificationError("SKILL.md does not start with YAML frontmatter (---)")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise SkillVerificationError("SKILL.md frontmatter is not closed (no second ---)") from None
    try:
        data = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as e:
        raise SkillVerificationError(f"SKILL.md frontmatter is not valid YAML: {e}") from None
    if not isinstance(data, dict):
        raise SkillVerificationError("SKILL.md frontmatter is not a YAML mapping")
    return dict(_plain(data))


def verify_frontmatter(entry: SkillEntry, text: str, what: str) -> None:
    """Compare the ``SKILL.md`` frontmatter with the entry's, field by field."""
    try:
        found = parse_frontmatter(text)
    except SkillVerificationError as e:
        raise SkillVerificationError(f"{what}: {e}; the skill was not loaded") from None
    diffs = []
    for key in sorted(set(found) | set(entry.frontmatter)):
        if key not in found:
            diffs.append(f"{key!r} is in the entry but not in SKILL.md")
        elif key not in entry.frontmatter:
            diffs.append(f"{key!r} is in SKILL.md but not in the entry")
        elif found[key] != entry.frontmatter[key]:
            diffs.append(f"{key!r}: the entry says {entry.frontmatter[key]!r}, SKILL.md says {found[key]!r}"[:300])
    if diffs:
        raise SkillVerificationError(f"{what}: frontmatter mismatch: {'; '.join(diffs)}; the skill was not loaded")


def _content_bytes(result: types.ReadResourceResult, uri: str) -> bytes:
    contents = [c for c in result.contents if str(c.uri) == uri] or list(result.contents)
    if len(contents) != 1:
        raise SkillVerificationError(f"{uri}: the server returned {len(contents)} contents for one file")
    c = contents[0]
    if isinstance(c, types.TextResourceContents):
        return c.text.encode("utf-8")
    return base64.b64decode(c.blob)


# the catalogue -------------------------------------------------------------------------------
class ConnectionSource(Protocol):
    """What the catalogue needs from the MCP manager."""

    def server_names(self) -> list[str]: ...

    def connection(self, name: str) -> ServerConnection | None: ...


def offers_skills(conn: ServerConnection) -> bool:
    caps = conn.capabilities
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
        return _content_bytes(result, uri)

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
