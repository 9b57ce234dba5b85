"""Ranking for the ``tool_search`` tool: how the model finds deferred (MCP) tools.

Two query forms:

* ``select:name_a,name_b`` loads exactly those tools, in that order. Each name is matched
  exactly; failing that, a unique case-insensitive match on the model-facing name (with or
  without its ``mcp__`` prefix) or on the tool's original name on its server is accepted. Names that match nothing (or more than
  one tool) are reported in :attr:`SearchResult.missing`.
* anything else is a keyword query ranked with BM25 over each tool's name (split into words
  on ``_``, ``-``, ``__`` and camelCase), its original name, its server name, its
  description and the property names of its input schema (name words weigh most). Words
  are lower-cased, singularised, and also match their synonyms (remove/delete,
  fetch/get/read, create/add/new, search/find/query, list/enumerate, ...) at about half the
  weight of the word itself; a tool whose name covers more of the query words is boosted.
  A word prefixed with ``+`` is required: only tools containing it are ranked. Scores are
  rounded and ties broken by name, so results are deterministic.

BM25 is implemented here (about fifty lines) rather than taken from a package: the corpus
is a few hundred tools at most, the tokenisation and field weighting are the interesting
part, and the usual package (``rank-bm25``) brings numpy and offers no field weights.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import attrs

from agent_ls.core.tools import ToolSpec

SELECT_PREFIX = "select:"

# BM25 parameters (the usual defaults) and per-field weights (BM25F-style weighted counts).
K1 = 1.2
B = 0.75
W_NAME = 3.0
W_SERVER = 2.0
W_DESCRIPTION = 1.0
W_PROPERTY = 1.0
SYNONYM_WEIGHT = 1.0
"""Weight of a synonym-group match. The word itself and its group both score, so an exact
word counts about twice as much as a synonym."""
NAME_COVERAGE_WEIGHT = 1.0
"""The score is multiplied by ``1 + this * share of the query's words found in the tool's
name or server name`` (the name is the strongest signal; descriptions and schemas are noisy)."""
EXACT_NAME_BONUS = 1000.0

_STOPWORDS = frozenset(
    {
        "a", "an", "and", "any", "are", "as", "at", "be", "by", "can", "for", "from", "has", "have",
        "if", "in", "into", "is", "it", "its", "of", "on", "or", "that", "the", "their", "then",
        "this", "to", "tool", "use", "used", "uses", "using", "via", "when", "which", "will", "with",
        "you", "your", "mcp",
    }
)  # fmt: skip

_SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    ("delete", "remove", "rm", "del", "erase", "destroy", "drop", "unlink"),
    ("read", "get", "fetch", "retrieve", "load", "show", "view", "cat"),
    ("create", "add", "new", "make", "insert"),
    ("search", "find", "query", "lookup", "grep", "locate"),
    ("list", "enumerate", "ls", "browse"),
    ("update", "edit", "modify", "change", "patch", "alter"),
    ("write", "save", "put", "store"),
    ("send", "post", "publish"),
    ("run", "execute", "exec", "invoke"),
    ("issue", "ticket", "bug"),
    ("pull", "pr", "mr"),
    ("repository", "repo"),
    ("directory", "dir", "folder"),
    ("database", "db"),
    ("message", "msg"),
    ("move", "rename", "mv"),
)
_SYNONYMS: dict[str, str] = {word: group[0] for group in _SYNONYM_GROUPS for word in group}

_CAMEL_1 = re.compile(r"([a-z0-9])([A-Z])")
_CAMEL_2 = re.compile(r"([A-Z]+)([A-Z][a-z])")
_WORD = re.compile(r"[A-Za-z0-9]+")


def _singular(word: str) -> str:
    if len(word) <= 3 or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "zes", "sses")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


def normalize(word: str) -> str:
    """One word as it is indexed: lower-case and singular."""
    return _singular(word.lower())


def synonym_group(word: str) -> str | None:
    """The synonym-group token of a normalised word (``"~delete"`` for ``remove``), if any."""
    head = _SYNONYMS.get(word)
    return None if head is None else f"~{head}"


def tokenize(text: str) -> list[str]:
    """Words of ``text``, normalised, without stopwords.

    Identifiers are split on ``_``, ``-``, ``__`` and camelCase; a split word is also kept
    whole (``SQLite`` gives ``sq``, ``lite`` and ``sqlite``).
    """
    out = []
    for raw in _WORD.findall(text):
        parts = _CAMEL_2.sub(r"\1 \2", _CAMEL_1.sub(r"\1 \2", raw)).split()
        if len(parts) > 1:
            parts.append(raw)
        for part in parts:
            word = normalize(part)
            if word not in _STOPWORDS:
                out.append(word)
    return out


def _with_synonyms(words: list[str]) -> list[str]:
    out = list(words)
    for word in words:
        group = synonym_group(word)
        if group is not None:
            out.append(group)
    return out


def _schema_properties(schema: dict[str, Any], depth: int = 0) -> Iterator[str]:
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return
    for key, sub in props.items():
        yield str(key)
        if depth < 1 and isinstance(sub, dict):
            yield from _schema_properties(sub, depth + 1)
            if isinstance(sub.get("items"), dict):
                yield from _schema_properties(sub["items"], depth + 1)


def _short_name(spec: ToolSpec) -> str:
    """The tool's own name: its original name, or the model-facing one without ``mcp__server__``."""
    if spec.display_name:
        return spec.display_name
    parts = spec.name.split("__")
    return "__".join(parts[2:]) if len(parts) >= 3 and parts[0] == "mcp" else spec.name


@attrs.frozen
class SearchResult:
    """What a ``tool_search`` call found; iterating yields the found specs."""

    found: tuple[ToolSpec, ...]
    missing: tuple[str, ...] = ()
    """``select:`` names that matched no tool (or several)."""
    query: str = ""
    select: bool = False
    """True for a ``select:`` query."""

    def __iter__(self) -> Iterator[ToolSpec]:
        return iter(self.found)

    def __len__(self) -> int:
        return len(self.found)

    def __getitem__(self, index: int) -> ToolSpec:
        return self.found[index]

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.found]


class ToolIndex:
    """A search index over a fixed set of tool specs (rebuild it when the set changes)."""

    def __init__(self, specs: Sequence[ToolSpec]) -> None:
        self.specs: tuple[ToolSpec, ...] = tuple(specs)
        self._by_name = {s.name: s for s in self.specs}
        self._docs: list[dict[str, float]] = []
        self._name_words: list[frozenset[str]] = []
        self._lengths: list[float] = []
        self._df: Counter[str] = Counter()
        for spec in self.specs:
            tf: dict[str, float] = {}
            name_words = tokenize(_short_name(spec))
            if spec.display_name:
                name_words += [w for w in tokenize(spec.name) if w not in name_words]
            self._name_words.append(frozenset(_with_synonyms(name_words + tokenize(spec.server or ""))))
            for words, weight in (
                (name_words, W_NAME),
                (tokenize(spec.server or ""), W_SERVER),
                (tokenize(spec.description), W_DESCRIPTION),
                ([w for key in _schema_properties(spec.input_schema) for w in tokenize(key)], W_PROPERTY),
            ):
                for word in _with_synonyms(words):
                    tf[word] = tf.get(word, 0.0) + weight
            self._docs.append(tf)
            self._lengths.append(sum(tf.values()))
            self._df.update(tf.keys())
        n = len(self.specs)
        self._avg_length = (sum(self._lengths) / n) if n else 0.0
        self._idf = {w: math.log(1.0 + (n - df + 0.5) / (df + 0.5)) for w, df in self._df.items()}

    # ------------------------------------------------------------------ API

    def search(self, query: str, limit: int = 5) -> SearchResult:
        """``select:a,b`` for exact names, otherwise the ``limit`` best keyword matches."""
        stripped = query.strip()
        if stripped[: len(SELECT_PREFIX)].lower() == SELECT_PREFIX:
            return self.select([n for n in stripped[len(SELECT_PREFIX) :].split(",")], query=query)
        ranked = self.rank(stripped, limit)
        return SearchResult(tuple(spec for spec, _ in ranked), (), query, False)

    def select(self, names: Sequence[str], *, query: str = "") -> SearchResult:
        """The tools named, in the order given (duplicates once); the rest in ``missing``."""
        found: list[ToolSpec] = []
        missing: list[str] = []
        for raw in names:
            name = raw.strip()
            if not name:
                continue
            spec = self._lookup(name)
            if spec is None:
                if name not in missing:
                    missing.append(name)
            elif spec not in found:
                found.append(spec)
        return SearchResult(tuple(found), tuple(missing), query, True)

    def rank(self, query: str, limit: int | None = None) -> list[tuple[ToolSpec, float]]:
        """Keyword ranking with scores, best first, ties by name; only tools scoring above 0."""
        required: list[str] = []
        words: list[str] = []
        for part in query.split():
            part_words = tokenize(part)
            if part.startswith("+"):
                required.extend(synonym_group(w) or w for w in part_words)
            words.extend(part_words)
        words = list(dict.fromkeys(words))
        # unique, in query order (a fixed summation order)
        terms = list(dict.fromkeys(_with_synonyms(words)))
        concepts = [(w, synonym_group(w)) for w in words]
        exact = query.strip().lower()
        scored: list[tuple[float, str, ToolSpec]] = []
        for i, spec in enumerate(self.specs):
            tf = self._docs[i]
            if any(w not in tf for w in required):
                continue
            norm = K1 * (1.0 - B + B * self._lengths[i] / self._avg_length) if self._avg_length else K1
            score = 0.0
            for word in terms:
                f = tf.get(word)
                if f:
                    weight = SYNONYM_WEIGHT if word[0] == "~" else 1.0
                    score += weight * self._idf[word] * f * (K1 + 1.0) / (f + norm)
            if score > 0.0 and concepts:
                names = self._name_words[i]
                covered = sum(1 for w, g in concepts if w in names or (g is not None and g in names))
                score *= 1.0 + NAME_COVERAGE_WEIGHT * covered / len(concepts)
            if exact and exact in (spec.name.lower(), (spec.display_name or "").lower()):
                score += EXACT_NAME_BONUS
            if score > 0.0:
                scored.append((round(score, 9), spec.name, spec))
        scored.sort(key=lambda t: (-t[0], t[1]))
        if limit is not None:
            scored = scored[: max(0, limit)]
        return [(spec, score) for score, _, spec in scored]

    # ------------------------------------------------------------ internals

    def _lookup(self, name: str) -> ToolSpec | None:
        spec = self._by_name.get(name)
        if spec is not None:
            return spec
        low = name.lower()
        matches = [s for s in self.specs if s.name.lower() == low]
        if not matches and not low.startswith("mcp__"):
            # "server__tool", as the deferred catalogue lists it under its server
            matches = [s for s in self.specs if s.name.lower() == f"mcp__{low}"]
        if not matches:
            matches = [s for s in self.specs if (s.display_name or "").lower() == low]
        return matches[0] if len(matches) == 1 else None
