"""Text a repository wrote, shown so that it reads as what it is.

A workspace's settings file can put characters into a server's name, command, arguments or env
that do not show as themselves: a line break that fakes another line of a trust prompt, an
escape sequence that moves the terminal's cursor and overwrites the command the user is about to
trust, a bidi override that shows ``hs.live`` for ``evil.sh``. Wherever the user decides on such
text (the terminal's trust prompts, ACP's permission text) it goes through :func:`visible` or
:func:`command_line`, which write those characters as escapes (``\\n``, ``\\u001B``, ``\\u202E``);
the editor's trust cards do the same (``editor-extension/shared/commandLine.ts``, same set).
Everything else the command line prints passes through :func:`terminal_safe`, which keeps line
breaks and tabs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

HIDDEN = re.compile(
    "[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]")
"""Control characters, bidi controls and zero-width / invisible formatting characters."""

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_PLAIN = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")
"""Characters that never need quoting in a POSIX shell word."""


def _escape(match: re.Match[str]) -> str:
    c = match.group()
    return _NAMED.get(c) or f"\\u{ord(c):04X}"


def visible(text: str) -> str:
    """``text`` with every character that would not show as itself written as an escape."""
    return HIDDEN.sub(_escape, text)


def terminal_safe(text: str) -> str:
    """:func:`visible`, but line breaks and tabs stay (for whole lines of output)."""
    return HIDDEN.sub(lambda m: m.group() if m.group() in "\n\t" else _escape(m), text)


def shell_word(arg: str) -> str:
    """One argument as a POSIX shell word: as is when plain, else single-quoted; with hidden
    characters, ANSI-C quoted (``$'a\\u202Eb'``), so the text shown is what a shell would run."""
    if arg == "":
        return "''"
    if _PLAIN.fullmatch(arg):
        return arg
    if HIDDEN.search(arg):
        return "$'" + HIDDEN.sub(_escape, arg.replace("\\", "\\\\").replace("'", "\\'")) + "'"
    return "'" + arg.replace("'", "'\\''") + "'"


def command_line(command: str, args: Sequence[str]) -> str:
    """The complete command line (never clipped): program and arguments as shell words."""
    return " ".join(shell_word(a) for a in [command, *args])
