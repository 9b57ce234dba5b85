"""Words that are not plain text, expanded as the shell will: brace expansion, ``~``, globs
against the real tree. The protected-path check then sees what the command will touch
(``.gi?/config`` is ``.git/config`` when that file exists), and a word that cannot be expanded
here (a command substitution, most variables, ``~user``, an extended glob) is reported so the
command asks.
"""

from __future__ import annotations

import glob
import itertools
import os
import re

from agent_ls.agent.permissions.shell import Shape

MAX_WORDS = 256
"""More brace alternatives than this: the word is not expanded (the command asks)."""
MAX_MATCHES = 2000
"""More glob matches than this: the word is not expanded (the command asks)."""

_Chars = list[tuple[str, bool]]  # (character, quoted)


def _chars(shape: Shape) -> _Chars:
    return [(c, quoted) for text, quoted in shape for c in text]


def _find_brace(chars: _Chars) -> tuple[int, int, list[int]] | None:
    """The first unquoted ``{...}`` with a top-level comma: (open, close, comma positions)."""
    for start, (c, q) in enumerate(chars):
        if c != "{" or q:
            continue
        depth, commas = 0, list[int]()
        for k in range(start, len(chars)):
            ch, quoted = chars[k]
            if quoted:
                continue
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    if commas:
                        return start, k, commas
                    break
            elif ch == "," and depth == 1:
                commas.append(k)
    return None


_RANGE = re.compile(r"\{(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?\}")


def _braces(chars: _Chars, out: list[_Chars]) -> None:
    if len(out) > MAX_WORDS:
        raise OverflowError
    found = _find_brace(chars)
    if found is None:
        text = "".join(c if not q else "\0" for c, q in chars)
        m = _RANGE.search(text)
        if m is None:
            out.append(chars)
            return
        a, b = m.group(1), m.group(2)
        if a.lstrip("-").isdigit() and b.lstrip("-").isdigit():
            lo, hi = int(a), int(b)
            items = [str(x) for x in (range(lo, hi + 1) if lo <= hi else range(lo, hi - 1, -1))]
        elif a.isalpha() and b.isalpha():
            lo, hi = ord(a), ord(b)
            items = [chr(x) for x in (range(lo, hi + 1) if lo <= hi else range(lo, hi - 1, -1))]
        else:
            out.append(chars)
            return
        if len(items) > MAX_WORDS:
            raise OverflowError
        for item in items:
            _braces(chars[:m.start()] + [(c, True) for c in item] + chars[m.end():], out)
        return
    start, end, commas = found
    bounds = [start, *commas, end]
    for a, b in itertools.pairwise(bounds):
        _braces(chars[:start] + chars[a + 1:b] + chars[end + 1:], out)


def expand(shape: Shape | None, cwd: str, home: str | None = None) -> list[str] | None:
    """The words ``shape`` becomes (with the word as written when a glob matches nothing), or
    None when it cannot be expanded here."""
    if shape is None:
        return None
    chars = _chars(shape)
    unquoted = "".join(c for c, q in chars if not q)
    if any(c in unquoted for c in "$`") or re.search(r"[?*+@!]\(", unquoted):
        return None  # an expansion the parser left in a word, or an extended glob
    words: list[_Chars] = []
    try:
        _braces(chars, words)
    except (OverflowError, RecursionError):
        return None
    out: list[str] = []
    for w in words:
        if w and w[0] == ("~", False):
            rest = "".join(c for c, _ in w[1:])
            if rest and not rest.startswith("/"):
                return None  # ~user, ~+, ~-
            w = [(c, True) for c in (home or os.path.expanduser("~"))] + w[1:]
        literal = "".join(c for c, _ in w)
        out.append(literal)
        if not any(c in "*?[" for c, q in w if not q):
            continue
        pattern = "".join(glob.escape(c) if q else c for c, q in w)
        base = pattern if os.path.isabs(pattern) else os.path.join(cwd, pattern)
        try:
            matches = list(itertools.islice(glob.iglob(base, include_hidden=True), MAX_MATCHES + 1))
        except (OSError, ValueError, re.error):
            return None
        if len(matches) > MAX_MATCHES:
            return None
        out.extend(matches)
    return out
