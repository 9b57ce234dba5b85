"""Prove every knob of the knob fixture server with the bare mcp SDK client."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from .knob_server import LONG_TOOL_NAMES
from .launch import KNOB_SERVER, knob_server_parameters, knob_stdio_params, run_http_knob_server

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


# --------------------------------------------------------------------------- launch helpers


def test_stdio_params_shape() -> None:
    entry = knob_stdio_params("--tools", 3)
    assert entry == {"command": sys.executable, "args": [str(KNOB_SERVER), "--tools", "3"]}
    assert KNOB_SERVER.is_file()


def test_help_lists_env_vars() -> None:
    out = subprocess.run(
        [sys.executable, str(KNOB_SERVER), "--help"], capture_output=True, text=True, timeout=30, check=True
    ).stdout
    for env in ("KNOB_SLOW_HANDSHAKE", "KNOB_EXIT_DURING_HANDSHAKE", "KNOB_GARBAGE_STDOUT", "KNOB_TOOLS"):
        assert env in out


# --------------------------------------------------------------------------- stdio, legacy


async def test_basic_tools_and_result_shapes(errlog: Any) -> None:
    async with stdio_knob("--instructions", "use the knobs", errlog=errlog) as client:
        assert client.protocol_version == "2025-11-25"
        assert client.server_info is not None and client.server_info.name == "knob"
        assert client.instructions == "use the knobs"
        caps = client.server_capabilities
        assert caps.tools is not None and caps.tools.list_changed
        assert caps.prompts is not None and caps.prompts.list_changed
        assert caps.resources is not None and caps.resources.list_changed

        tools = {t.name: t for t in await list_all_tools(client)}
        assert set(tools) >= BASE_TOOLS
        assert tools["echo"].annotations is not None and tools["echo"].annotations.read_only_hint is True
        assert tools["add"].annotations is not None and tools["add"].annotations.read_only_hint is True
        assert (
            tools["delete_item"].annotations is not None and tools["delete_item"].annotations.destructive_hint
        )
        assert tools["fetch_url"].annotations is not None and tools["fetch_url"].annotations.open_world_hint
        assert tools["no_annotations_write_file"].annotations is None
        assert tools["structured"].output_schema is not None
        assert tools["structured_only"].output_schema is not None

        assert text_of(await client.call_tool("echo", {"text": "héllo"})) == "héllo"
        assert text_of(await client.call_tool("add", {"a": 1, "b": 2})) == "3"
        assert text_of(await client.call_tool("add", {"a": 1, "b": 1.5})) == "2.5"
        assert text_of(await client.call_tool("sleep", {"seconds": 0.05})) == "slept 0.05"
        assert len(text_of(await client.call_tool("huge", {"chars": 300_000}))) == 300_000

        image = await client.call_tool("image", {})
        kinds = [type(b) for b in image.content]
        assert kinds == [types.TextContent, types.ImageContent]
        assert image.content[1].mime_type == "image/png"  # type: ignore[union-attr]

        resource = await client.call_tool("resource_result", {})
        assert {type(b) for b in resource.content} == {
            types.TextContent,
            types.EmbeddedResource,
            types.ResourceLink,
        }

        structured = await client.call_tool("structured", {})
        assert structured.structured_content == {
            "city": "Lisbon",
            "temperature_c": 21.5,
            "conditions": ["sunny", "breezy"],
        }
        assert structured.content  # text fallback too

        only = await client.call_tool("structured_only", {})
        assert only.content == [] and only.structured_content is not None and not only.is_error

        failed = await client.call_tool("fail", {})
        assert failed.is_error and "always fails" in text_of(failed)
        raised = await client.call_tool("raise_error", {})
        assert raised.is_error and "raise_error" in text_of(raised)

        progress: list[float] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append(value)

        assert (
            text_of(await client.call_tool("progress", {"steps": 3}, progress_callback=on_progress)) == "done"
        )
        await wait_until(lambda: len(progress) == 3)

        resources = {str(r.uri) for r in (await client.list_resources()).resources}
        assert {"knob://readme", "knob://blob"} <= resources
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["knob://items/{item_id}"]
        readme = (await client.read_resource("knob://readme")).contents[0]
        assert isinstance(readme, types.TextResourceContents) and "knob server" in readme.text
        blob = (await client.read_resource("knob://blob")).contents[0]
        assert isinstance(blob, types.BlobResourceContents)
        item = (await client.read_resource("knob://items/42")).contents[0]
        assert isinstance(item, types.TextResourceContents) and json.loads(item.text)["id"] == "42"

        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        assert {"review", "greet"} <= set(prompts)
        assert [a.name for a in prompts["greet"].arguments or []] == ["name", "style"]
        greeting = await client.get_prompt("greet", {"name": "Ada"})
        assert "Ada" in greeting.messages[0].content.text  # type: ignore[union-attr]
        review = await client.get_prompt("review", {"code": "x = 1"})
        assert "x = 1" in review.messages[0].content.text  # type: ignore[union-attr]


async def test_hundreds_of_tools_and_long_names(errlog: Any) -> None:
    async with stdio_knob("--tools", 300, "--long-names", errlog=errlog) as client:
        tools = await list_all_tools(client)
        names = [t.name for t in tools]
        assert len(names) >= 300 + len(BASE_TOOLS)
        assert {f"tool_{i:04d}" for i in range(300)} <= set(names)
        assert len({t.description for t in tools if t.name.startswith("tool_")}) > 10
        for long_name in LONG_TOOL_NAMES:
            assert long_name in names and len(long_name) >= 80
        assert any(not n.isascii() for n in names) and any(" " in n for n in names)
        assert any("/" in n and "." in n for n in names)
        weird = LONG_TOOL_NAMES[2]
        assert text_of(await client.call_tool(weird, {"text": "hi"})) == f"{weird}: hi"
        assert text_of(await client.call_tool("tool_0001", {"count": 2})) == "tool_0001: count=2 flag=False"


async def test_env_vars_set_knobs(errlog: Any) -> None:
    env = {"KNOB_NAME": "from-env", "KNOB_TOOLS": "5", "KNOB_STDERR_LINE": "env-marker-line"}
    async with stdio_knob(errlog=errlog, env=env) as client:
        assert client.server_info is not None and client.server_info.name == "from-env"
        names = {t.name for t in await list_all_tools(client)}
        assert {f"tool_{i:04d}" for i in range(5)} <= names and "tool_0005" not in names
    assert "env-marker-line" in read_log(errlog)


async def test_crash_kills_the_session(errlog: Any) -> None:
    async with stdio_knob(errlog=errlog) as client:
        with anyio.fail_after(10), pytest.raises(MCPError):
            await client.call_tool("crash", {})
        with anyio.fail_after(10), pytest.raises(MCPError):
            await client.call_tool("echo", {"text": "still there?"})
    assert "crash() called" in read_log(errlog)


async def test_hang_times_out_and_cancel_reaches_server(errlog: Any, tmp_path: Path) -> None:
    cancel_file = tmp_path / "cancel.txt"
    async with stdio_knob("--cancel-file", cancel_file, errlog=errlog) as client:
        started = time.monotonic()
        with pytest.raises(MCPError) as info:
            await client.call_tool("hang", {}, read_timeout_seconds=0.5)
        assert info.value.error.code == -32001
        assert time.monotonic() - started < 5
        # The session survives the timeout.
        assert text_of(await client.call_tool("echo", {"text": "alive"})) == "alive"

        # A timed-out call sends notifications/cancelled; the server records it.
        with pytest.raises(MCPError):
            await client.call_tool("cancel_probe", {}, read_timeout_seconds=0.5)
        await wait_until(lambda: cancel_file.exists() and "cancelled" in cancel_file.read_text())

        # Cancelling the awaiting task sends notifications/cancelled as well.
        cancel_file.unlink()
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "cancel_probe", {})
            await wait_until(lambda: cancel_file.exists() and "started" in cancel_file.read_text())
            tg.cancel_scope.cancel()
        await wait_until(lambda: "cancelled" in cancel_file.read_text())
        assert text_of(await client.call_tool("echo", {"text": "alive"})) == "alive"


async def test_roots_elicitation_sampling(errlog: Any) -> None:
    rec = Recorder()
    async with stdio_knob(errlog=errlog, **rec.client_kwargs()) as client:
        roots = json.loads(text_of(await client.call_tool("roots", {})))
        assert roots == {"roots": [{"uri": str(r.uri), "name": r.name} for r in ROOTS]}

        assert text_of(await client.call_tool("roots_changed_count", {})) == "0"
        await client.send_roots_list_changed()
        await client.send_roots_list_changed()
        for _ in range(100):
            if text_of(await client.call_tool("roots_changed_count", {})) == "2":
                break
            await anyio.sleep(0.02)
        assert text_of(await client.call_tool("roots_changed_count", {})) == "2"

        answer = json.loads(text_of(await client.call_tool("ask", {"question": "Who are you?"})))
        assert answer == {"action": "accept", "content": {"name": "bob", "count": 7, "ok": True}}
        (params,) = rec.elicitations
        assert isinstance(params, types.ElicitRequestFormParams) and params.message == "Who are you?"
        props = params.requested_schema["properties"]
        assert props["name"]["default"] == "anon" and props["count"]["default"] == 3
        assert props["ok"]["type"] == "boolean"

        assert text_of(await client.call_tool("sample", {"prompt": "meaning of life?"})) == "sampled: 42"
        (sampling,) = rec.samplings
        assert sampling.messages[0].content.text == "meaning of life?"  # type: ignore[union-attr]


async def test_list_changed_notifications(errlog: Any) -> None:
    rec = Recorder()
    async with stdio_knob(errlog=errlog, **rec.client_kwargs()) as client:
        await client.call_tool("add_tool", {"name": "dyn_tool"})
        await wait_until(lambda: rec.of_type(types.ToolListChangedNotification))
        assert "dyn_tool" in {t.name for t in await list_all_tools(client)}
        assert text_of(await client.call_tool("dyn_tool", {"text": "x"})) == "dynamic tool dyn_tool says x"

        await client.call_tool("remove_tool", {"name": "dyn_tool"})
        await wait_until(lambda: len(rec.of_type(types.ToolListChangedNotification)) == 2)
        assert "dyn_tool" not in {t.name for t in await list_all_tools(client)}

        await client.call_tool("touch_prompts", {})
        await wait_until(lambda: rec.of_type(types.PromptListChangedNotification))
        assert "dynamic_prompt_0" in {p.name for p in (await client.list_prompts()).prompts}

        await client.call_tool("touch_resources", {})
        await wait_until(lambda: rec.of_type(types.ResourceListChangedNotification))
        assert "knob://dynamic/0" in {str(r.uri) for r in (await client.list_resources()).resources}


async def test_garbage_stdout_is_tolerated(errlog: Any) -> None:
    rec = Recorder()
    async with stdio_knob("--garbage-stdout", errlog=errlog, message_handler=rec.message_handler) as client:
        for i in range(5):
            assert text_of(await client.call_tool("echo", {"text": f"n{i}"})) == f"n{i}"
        assert len(await list_all_tools(client)) >= len(BASE_TOOLS)
        assert len(text_of(await client.call_tool("huge", {"chars": 100_000}))) == 100_000
        # The garbage really reached the client: unparsable lines surface as exceptions.
        await wait_until(lambda: len([m for m in rec.messages if isinstance(m, Exception)]) >= 10)


async def test_stderr_line_and_flood(errlog: Any) -> None:
    async with stdio_knob(
        "--stderr-line", "MARKER: hello from knob", "--stderr-flood", 500, errlog=errlog
    ) as client:
        assert text_of(await client.call_tool("flood", {"lines": 3000})) == "wrote 3000 lines to stderr"
        assert text_of(await client.call_tool("echo", {"text": "ok"})) == "ok"
    log = read_log(errlog)
    assert "MARKER: hello from knob" in log.splitlines()
    assert log.count("knob stderr flood line") == 500
    assert log.count("knob flood tool line") == 3000


async def test_slow_handshake_delays_initialize(errlog: Any) -> None:
    started = time.monotonic()
    async with stdio_knob("--slow-handshake", 1.5, errlog=errlog) as client:
        elapsed = time.monotonic() - started
        assert text_of(await client.call_tool("echo", {"text": "late"})) == "late"
    assert elapsed >= 1.5
    assert "delaying initialize" in read_log(errlog)


async def test_exit_during_handshake_fails_the_client(errlog: Any) -> None:
    with anyio.fail_after(15), pytest.raises(BaseException) as info:  # noqa: B017 - checked below
        async with stdio_knob("--exit-during-handshake", 7, errlog=errlog):
            pass
    # The SDK wraps it in task-group ExceptionGroups; the leaf is CONNECTION_CLOSED.
    (leaf,) = leaves(info.value)
    assert isinstance(leaf, MCPError) and leaf.error.code == -32000
    assert "exiting with code 7 on initialize" in read_log(errlog)


async def test_exit_during_handshake_exit_code() -> None:
    proc = await anyio.open_process(
        [sys.executable, str(KNOB_SERVER), "--exit-during-handshake", "5"], stderr=subprocess.PIPE
    )
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    async with proc:
        assert proc.stdin is not None and proc.stderr is not None
        await proc.stdin.send((json.dumps(init) + "\n").encode())
        with anyio.fail_after(15):
            code = await proc.wait()
        stderr = (await proc.stderr.receive()).decode()
    assert code == 5
    assert "exiting with code 5" in stderr


# --------------------------------------------------------------------------- stdio, auto (2026-07-28)


async def test_auto_mode_stdio(errlog: Any) -> None:
    rec = Recorder()
    async with stdio_knob(errlog=errlog, mode="auto", **rec.client_kwargs()) as client:
        assert client.protocol_version == "2026-07-28"
        assert text_of(await client.call_tool("echo", {"text": "modern"})) == "modern"
        roots = json.loads(text_of(await client.call_tool("roots", {})))
        assert [r["name"] for r in roots["roots"]] == ["a", "b"]
        answer = json.loads(text_of(await client.call_tool("ask", {"question": "q"})))
        assert answer["action"] == "accept"
        assert text_of(await client.call_tool("sample", {"prompt": "p"})) == "sampled: 42"
        with pytest.raises(MCPError):
            await client.call_tool("hang", {}, read_timeout_seconds=0.3)


# --------------------------------------------------------------------------- Streamable HTTP


async def test_http_legacy_and_auto() -> None:
    server = run_http_knob_server("--stderr-line", "HTTP-MARKER", "--tools", 20)
    async with server as url:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        await wait_until(lambda: "HTTP-MARKER" in server.stderr_lines)
        assert server.stderr_lines[0] == f"LISTENING {url}"

        rec = Recorder()
        async with Client(url, mode="legacy", **rec.client_kwargs()) as client:
            assert client.protocol_version == "2025-11-25"
            assert len(await list_all_tools(client)) >= len(BASE_TOOLS) + 20
            assert text_of(await client.call_tool("echo", {"text": "over http"})) == "over http"
            roots = json.loads(text_of(await client.call_tool("roots", {})))
            assert len(roots["roots"]) == 2
            answer = json.loads(text_of(await client.call_tool("ask", {"question": "q"})))
            assert answer["content"]["name"] == "bob"
            assert text_of(await client.call_tool("sample", {"prompt": "p"})) == "sampled: 42"
            await client.call_tool("add_tool", {"name": "http_dyn"})
            await wait_until(lambda: rec.of_type(types.ToolListChangedNotification))
            with pytest.raises(MCPError):
                await client.call_tool("hang", {}, read_timeout_seconds=0.3)
            assert text_of(await client.call_tool("echo", {"text": "after"})) == "after"

        async with Client(url, mode="auto", **Recorder().client_kwargs()) as client:
            assert client.protocol_version == "2026-07-28"
            assert text_of(await client.call_tool("add", {"a": 2, "b": 2})) == "4"
            assert json.loads(text_of(await client.call_tool("roots", {})))["roots"][0]["name"] == "a"
    assert server.process is not None and server.process.returncode is not None


def test_http_sync_context_manager_and_cleanup() -> None:
    server = run_http_knob_server("--slow-handshake", 0.5)
    with server as url:
        assert url.endswith("/mcp")

        async def call() -> tuple[float, str]:
            started = time.monotonic()
            async with Client(url, mode="legacy") as client:
                elapsed = time.monotonic() - started
                return elapsed, text_of(await client.call_tool("echo", {"text": "sync"}))

        elapsed, text = anyio.run(call)
        assert text == "sync" and elapsed >= 0.5
    assert server.process is not None and server.process.returncode is not None


def test_http_server_that_dies_before_listening_raises() -> None:
    with (
        pytest.raises(RuntimeError, match="before listening"),
        run_http_knob_server("--tools", "not-a-number"),
    ):
        pass
