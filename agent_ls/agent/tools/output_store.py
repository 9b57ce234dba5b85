"""Oversized tool output, kept for the session and read page by page.

A tool result (built-in or MCP) whose text is longer than the page size is not cut: the session
(:meth:`agent_ls.agent.session.Session`) puts the full text in the session's
:class:`OutputStore` under a short handle (``out-3``) and gives the model the first page plus a
line naming the handle, the total size and how to read on. The model reads further pages, or
searches the stored text, with the built-in ``read_output`` tool (:class:`ReadOutputTool`).

Offsets are in characters (0-based), not lines: tool output is often one huge line (JSON,
minified text), and character offsets make page ``n`` simply ``offset = (n - 1) * page``.
A ``search`` returns matching lines with their line numbers and character offsets, so the
model can page to a match.

The store is bounded per session (``max_chars``, the total of the texts kept): storing a new
output evicts the oldest ones first, and reading an evicted handle says so. The store lives in
memory, and on disk when a backend is attached (:meth:`OutputStore.attach`: the session
database, :class:`agent_ls.agent.store.PersistedOutputs`), so handles survive a restart and
a compaction. Handles named in a resumed session's history (from an earlier run) are never
reused.

Compaction (:mod:`agent_ls.agent.context`) may clear a tool result from the conversation only
when its text is here: :meth:`OutputStore.keep` stores results of a clearable size that fit a
page too (the model still sees them whole), under the tool call's id.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any, Protocol

import attrs

from agent_ls.core.tools import Capability, ToolResult, ToolSpec

READ_OUTPUT = "read_output"
DEFAULT_PAGE_CHARS = 30_000
"""Characters of a tool result the model sees at once (``agent.outputPageChars``)."""
DEFAULT_STORE_CHARS = 10_000_000
"""Characters of oversized output kept per session (``agent.outputStoreChars``)."""
MIN_PAGE_CHARS = 1_000
SEARCH_MAX_MATCHES = 200
SEARCH_LINE_CHARS = 300
HANDLE_PREFIX = "out-"
_HANDLE = re.compile(r"\bout-(\d+)\b")


@attrs.frozen
class StoredOutput:
    handle: str
    tool: str
    text: str
    total_chars: int
    """Size of the tool's text; larger than ``len(text)`` only when it exceeded the whole store."""
    call_id: str = ""
    """The tool call whose result this is (compaction clears the result by it)."""


class OutputBackend(Protocol):
    """Where a session's outputs are kept on disk."""

    def save(self, number: int, item: StoredOutput) -> None: ...

    def load(self, number: int) -> StoredOutput | None: ...

    def index(self) -> tuple[int, dict[str, int]]:
        """The highest handle number ever stored and the stored outputs' numbers by call id."""
        ...


class OutputStore:
    """Full texts of oversized tool results for one session, oldest evicted first."""

    def __init__(self, page_chars: int = DEFAULT_PAGE_CHARS, max_chars: int = DEFAULT_STORE_CHARS) -> None:
        self.page_chars = max(MIN_PAGE_CHARS, page_chars)
        self.max_chars = max(self.page_chars, max_chars)
        self._items: OrderedDict[int, StoredOutput] = OrderedDict()
        self._next = 1
        self._evicted: set[int] = set()
        self._earlier = 0
        """Handles up to this number come from an earlier run (a resumed history)."""
        self.size = 0
        """Characters currently kept (never more than ``max_chars``)."""
        self.last: StoredOutput | None = None
        """The output stored last."""
        self._by_call: dict[str, int] = {}
        self.backend: OutputBackend | None = None
        self.problem: str | None = None
        """Why the persisted outputs could not be used (shown once to the user), if so."""
        self.defer_saves = False
        """True: :meth:`put` only queues the disk write; :meth:`flush` (in a worker thread) does it."""
        self._pending: list[tuple[int, StoredOutput]] = []
        self._pending_lock = threading.Lock()

    def attach(self, backend: OutputBackend) -> None:
        """Keep outputs on disk too (the session database) and read earlier ones from there."""
        self.backend = backend
        try:
            highest, by_call = backend.index()
        except Exception as e:  # a corrupt store: go on in memory
            self.problem = f"the stored tool outputs of this session could not be read ({type(e).__name__}: {e})"
            return
        self._earlier = max(self._earlier, highest)
        self._next = max(self._next, highest + 1)
        self._by_call.update(by_call)

    # storing -------------------------------------------------------------------------------
    def skip_handles_in(self, texts: Iterable[Any]) -> None:
        """Never reuse a handle named in ``texts`` (a resumed history's tool results)."""
        for text in texts:
            if isinstance(text, str) and HANDLE_PREFIX in text:
                for m in _HANDLE.finditer(text):
                    self._earlier = max(self._earlier, int(m.group(1)))
        self._next = max(self._next, self._earlier + 1)

    def put(self, text: str, tool: str = "", call_id: str = "") -> StoredOutput:
        """Keep ``text`` (at most ``max_chars`` of it) and evict the oldest outputs to make room."""
        number = self._next
        self._next += 1
        kept = text[: self.max_chars]
        item = StoredOutput(f"{HANDLE_PREFIX}{number}", tool, kept, len(text), call_id)
        if call_id:
            self._by_call[call_id] = number
        if self.backend is not None:
            with self._pending_lock:
                self._pending.append((number, item))
            if not self.defer_saves:
                self.flush()
        while self._items and self.size + len(kept) > self.max_chars:
            old, gone = self._items.popitem(last=False)
            self.size -= len(gone.text)
            if self.backend is None:  # else only dropped from memory: the backend keeps its own bound
                self._evicted.add(old)
        self._items[number] = item
        self.size += len(kept)
        self.last = item
        return item

    def flush(self) -> None:
        """Write the queued outputs to the backend, in order (blocking: a worker thread's job)."""
        if self.backend is None:
            return
        with self._pending_lock:
            items, self._pending = self._pending, []
        for number, item in items:
            try:
                self.backend.save(number, item)
            except Exception as e:
                self.problem = f"a tool output could not be saved ({type(e).__name__}: {e})"

    def _queued(self, number: int) -> StoredOutput | None:
        with self._pending_lock:
            return next((item for n, item in self._pending if n == number), None)

    def get(self, handle: str) -> StoredOutput | str:
        """The stored output, or a message saying why there is none."""
        m = re.fullmatch(rf"\s*{HANDLE_PREFIX}(\d+)\s*", handle or "")
        if m is None:
            return f"{handle!r} is not an output handle (they look like '{HANDLE_PREFIX}3')"
        number = int(m.group(1))
        if number in self._items:
            return self._items[number]
        if (queued := self._queued(number)) is not None:
            return queued
        if self.backend is not None and number not in self._evicted:
            try:
                stored = self.backend.load(number)
            except Exception as e:
                return f"output {handle.strip()} could not be read from the session store ({type(e).__name__}: {e})"
            if stored is not None:
                return stored
            if number < self._next:
                return (f"output {handle.strip()} was evicted: agent-ls keeps a bounded amount of tool output "
                        "per session and in total and drops the oldest first. Run the tool again to see it.")
        if number in self._evicted:
            return (f"output {handle.strip()} was evicted: the session keeps at most {self.max_chars} characters "
                    "of stored output and drops the oldest first. Run the tool again (narrowing it if you can) "
                    "to see it.")
        if number <= self._earlier:
            return (f"output {handle.strip()} is gone: it was kept in memory only (a session without a session "
                    "database) and agent-ls has restarted since. Run the tool again to see it.")
        return f"there is no stored output {handle.strip()}"

    def handles(self) -> list[str]:
        return [item.handle for item in self._items.values()]

    def handle_for(self, call_id: str) -> str | None:
        """The handle of the stored result of tool call ``call_id``, if there is one."""
        number = self._by_call.get(call_id)
        return None if number is None else f"{HANDLE_PREFIX}{number}"

    def describe(self, handle: str) -> tuple[str, int]:
        """The tool and size of a stored output (for a compaction stub)."""
        found = self.get(handle)
        return ("tool", 0) if isinstance(found, str) else (found.tool, found.total_chars)

    def keep(self, result: ToolResult, tool: str, call_id: str, min_chars: int) -> ToolResult:
        """Like :meth:`page_result`, and a result of at least ``min_chars`` that fits a page is
        stored too (unchanged for the model), so that compaction may clear it."""
        if len(result.content) > self.page_chars:
            return self.page_result(result, tool, call_id)
        if len(result.content) >= min_chars and not result.is_error:
            self.put(result.content, tool, call_id)
        return result

    # what the model sees -------------------------------------------------------------------
    def page_result(self, result: ToolResult, tool: str, call_id: str = "") -> ToolResult:
        """``result`` unchanged when it fits a page; else its first page plus a line naming the
        stored output's handle and how to read more."""
        text = result.content
        if len(text) <= self.page_chars:
            return result
        item = self.put(text, tool, call_id)
        first = text[: self.page_chars]
        note = (f"\n\n[output {item.handle}: {item.total_chars} characters (~{item.total_chars // 1000} kB) in "
                f"total; shown: characters 0-{len(first)}. The full output is stored: call "
                f"{READ_OUTPUT}(handle=\"{item.handle}\", offset={len(first)}) for the next page, or "
                f"{READ_OUTPUT}(handle=\"{item.handle}\", search=\"...\") to find lines in it.")
        if item.total_chars > len(item.text):
            note += (f" Only the first {len(item.text)} characters could be kept (the session's output store "
                     "holds at most that many).")
        note += "]"
        return attrs.evolve(result, content=first + note)

    def read(self, handle: str, offset: int = 0, limit: int | None = None, search: str | None = None) -> ToolResult:
        found = self.get(handle)
        if isinstance(found, str):
            return ToolResult.error(found)
        text = found.text
        limit = self.page_chars if limit is None else min(limit, self.page_chars)
        if offset > len(text):
            return ToolResult.error(f"offset {offset} is past the end of {found.handle} ({len(text)} characters)")
        if search is not None:
            return self._search(found, search, offset, limit)
        end = min(len(text), offset + limit)
        body = text[offset:end]
        if end < len(text):
            tail = f"next: {READ_OUTPUT}(handle=\"{found.handle}\", offset={end})"
        else:
            tail = "end of the output"
        return ToolResult(content=f"{body}\n\n[{found.handle}: characters {offset}-{end} of {len(text)}; {tail}]")

    def _search(self, item: StoredOutput, needle: str, offset: int, limit: int) -> ToolResult:
        if not needle:
            return ToolResult.error("search must not be empty")
        text = item.text
        rx = re.compile(re.escape(needle), re.IGNORECASE)
        lines: list[str] = []
        used = 0
        line_no = text.count("\n", 0, offset) + 1
        counted_to = offset
        pos = offset
        next_offset: int | None = None
        while True:
            m = rx.search(text, pos)
            if m is None:
                break
            start = text.rfind("\n", 0, m.start()) + 1
            end = text.find("\n", m.end())
            end = len(text) if end < 0 else end
            line_no += text.count("\n", counted_to, start)
            counted_to = start
            shown = text[start:end]
            if len(shown) > SEARCH_LINE_CHARS:  # a huge line: show the match with context
                lo = max(start, m.start() - SEARCH_LINE_CHARS // 2)
                hi = min(end, lo + SEARCH_LINE_CHARS)
                shown = f"{'[...]' if lo > start else ''}{text[lo:hi]}{'[...]' if hi < end else ''}"
            entry = f"{line_no}: (offset {start}) {shown}"
            if lines and (used + len(entry) > limit or len(lines) >= SEARCH_MAX_MATCHES):
                next_offset = start
                break
            lines.append(entry)
            used += len(entry) + 1
            pos = end + 1
        if not lines:
            return ToolResult(content=f"No line of {item.handle} (from offset {offset}) contains {needle!r}")
        more = (f"; more matches: {READ_OUTPUT}(handle=\"{item.handle}\", search={needle!r}, offset={next_offset})"
                if next_offset is not None else "")
        return ToolResult(content="\n".join(lines) + f"\n\n[{len(lines)} matching line(s) in {item.handle}{more}]")


class ReadOutputTool:
    """The ``read_output`` built-in tool over a session's :class:`OutputStore`."""

    def __init__(self, store: OutputStore) -> None:
        self.store = store
        self._spec = ToolSpec(
            name=READ_OUTPUT,
            description=(
                "Read a tool output that was too long to show at once. Such a result ends with a line naming "
                f"its handle (e.g. '{HANDLE_PREFIX}3'). Returns up to `limit` characters from character "
                f"`offset` (0-based; at most {store.page_chars} per call, the default), or with `search` the "
                "lines containing that text (case-insensitive) with their line numbers and character offsets."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "handle": {"type": "string", "description": f"The output handle, e.g. '{HANDLE_PREFIX}3'."},
                    "offset": {"type": "integer", "minimum": 0,
                               "description": "0-based character offset to start at (default 0)."},
                    "limit": {"type": "integer", "minimum": 1,
                              "description": f"Characters to return (default and maximum {store.page_chars})."},
                    "search": {"type": "string",
                               "description": "Return the lines containing this text (case-insensitive) instead."},
                },
                "required": ["handle"],
                "additionalProperties": False,
            },
            capability=Capability.READ,
        )

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    def __repr__(self) -> str:
        return f"<ReadOutputTool {READ_OUTPUT}>"

    async def call(self, arguments: dict[str, Any]) -> ToolResult:
        # lazy: not loaded with the output store alone (agent.config loads it), ~3 ms
        from agent_ls.agent.tools.arguments import validate_arguments

        args = validate_arguments(self._spec, arguments)
        if isinstance(args, str):
            return ToolResult.error(args)
        return self.store.read(args["handle"], args.get("offset", 0), args.get("limit"), args.get("search"))
