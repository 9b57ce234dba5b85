"""The command line's output, made safe for a terminal.

``agent-ls`` prints text that others wrote: server names and errors from a repository's
settings files, an MCP server's stderr, the model's answers. A terminal acts on some characters
(an escape sequence moves the cursor, rewrites the title or the clipboard; a carriage return
overwrites the line; a bidi override reorders it), so every write to stdout and stderr passes
through :func:`agent_ls.core.visible.terminal_safe`: those characters are printed as escapes
(``\\u001B``), line breaks and tabs stay. The language server and the ACP agent do not use it:
their stdout is the protocol.
"""

from __future__ import annotations

import io
import sys
from typing import TextIO

from agent_ls.core.visible import terminal_safe


class SafeText(io.TextIOBase):
    """A text stream that writes :func:`terminal_safe` text to another one."""

    def __init__(self, raw: TextIO) -> None:
        super().__init__()
        self.raw = raw

    def write(self, s: str) -> int:
        self.raw.write(terminal_safe(s))
        return len(s)

    def flush(self) -> None:
        self.raw.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.raw.encoding


def install() -> None:
    """Route this process's ``sys.stdout`` and ``sys.stderr`` through :class:`SafeText`."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if not isinstance(stream, SafeText):
            setattr(sys, name, SafeText(stream))
