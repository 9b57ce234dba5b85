"""The bare mcp SDK client side of the knob server tests: the base tool set, a recorder for what the
server sends to the client, the server's stderr as a fixture (``errlog``), a stdio session, and
small readers and waits."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import stdio_client

from .launch import knob_server_parameters

BASE_TOOLS = {
    "echo", "add", "delete_item", "fetch_url", "no_annotations_write_file", "crash", "hang", "sleep",
    "cancel_probe", "huge", "flood", "progress", "add_tool", "remove_tool", "touch_prompts",
    "touch_resources", "roots", "roots_changed_count", "ask", "sample", "image", "resource_result",
    "structured", "structured_only", "fail", "raise_error",
}  # fmt: skip

ROOTS = [
    types.Root(uri="file:///tmp/knob-root-a", name="a"),
    types.Root(uri="file:///tmp/knob-root-b", name="b"),
]


class Recorder:
    """Client callbacks that record what the server sent."""

    def __init__(self) -> None:
        self.messages: list[Any] = []
        self.elicitations: list[types.ElicitRequestParams] = []
        self.samplings: list[types.CreateMessageRequestParams] = []

    async def message_handler(self, message: Any) -> None:
        self.messages.append(message)

    async def list_roots(self, ctx: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=ROOTS)

    async def elicit(self, ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.elicitations.append(params)
        return types.ElicitResult(action="accept", content={"name": "bob", "count": 7, "ok": True})

    async def sample(self, ctx: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        self.samplings.append(params)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="sampled: 42"), model="fake-model"
        )

    def client_kwargs(self) -> dict[str, Any]:
        return {
            "message_handler": self.message_handler,
            "list_roots_callback": self.list_roots,
            "elicitation_callback": self.elicit,
            "sampling_callback": self.sample,
        }

    def of_type(self, cls: type) -> list[Any]:
        return [m for m in self.messages if isinstance(m, cls)]


@pytest.fixture
def errlog(tmp_path: Path):
    with open(tmp_path / "server-stderr.txt", "w+", encoding="utf-8") as f:
        yield f


def read_log(f: Any) -> str:
    f.flush()
    return Path(f.name).read_text(encoding="utf-8")


@asynccontextmanager
async def stdio_knob(
    *args: Any, errlog: Any, mode: str = "legacy", env: dict[str, str] | None = None, **kwargs: Any
) -> AsyncIterator[Client]:
    transport = stdio_client(knob_server_parameters(*args, env=env), errlog=errlog)
    async with Client(transport, mode=mode, **kwargs) as client:
        yield client


def text_of(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def list_all_tools(client: Client) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor = None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


def leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in leaves(sub)]
    return [exc]


async def wait_until(predicate: Any, timeout: float = 5.0) -> None:
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.02)

