"""What a server's skills are on the wire, and checking a skill's bytes against its entry
(the skills extension, ``io.modelcontextprotocol/skills``, SEP-2640).

The typed ``skills/list`` / ``skills/get`` models, the entries parsed from them (one bad entry
does not hide the others), and the verification of byte size, ``sha256:`` digest and
frontmatter that :class:`agent_ls.mcp.skills.SkillCatalog` applies before a skill is used.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import re
from typing import Any, Literal

import attrs
import mcp_types as types
import yaml
from mcp.client.extension import advertise

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


def content_bytes(result: types.ReadResourceResult, uri: str) -> bytes:
    contents = [c for c in result.contents if str(c.uri) == uri] or list(result.contents)
    if len(contents) != 1:
        raise SkillVerificationError(f"{uri}: the server returned {len(contents)} contents for one file")
    c = contents[0]
    if isinstance(c, types.TextResourceContents):
        return c.text.encode("utf-8")
    return base64.b64decode(c.blob)

