"""ACP front end vs LSP front end: from the LLM's first byte to the first streamed update.

    .venv/bin/python scripts/bench_acp.py [--prompts 30]

Both front ends run as real subprocesses over stdio in the same run, on the same settings and
the same scripted OpenAI-compatible LLM (in this process, so its timestamps share the clock):

- ``agent-ls acp`` driven by the ``agent-client-protocol`` package's client
  (``spawn_agent_process``): ``session/prompt`` -> first ``session/update``
  (``agent_message_chunk``);
- ``agent-ls`` (LSP) driven by pygls' client: ``agent/prompt`` -> first ``agent/event`` of type
  ``text``.

For each warm prompt: (time the first update reached the client) - (the LLM's first byte).
Prompts alternate between the front ends so that machine noise hits both alike; the first
prompt of each (litellm still importing) is not counted. Prints the medians and the ratio
ACP / LSP (target <= 1.1).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from acp import spawn_agent_process, text_block  # noqa: E402
from acp.schema import ClientCapabilities  # noqa: E402
from lsprotocol import types as lsp  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402

from tests.llm.scripted_server import ScriptedLLM, text  # noqa: E402


class FirstUpdateClient:
    """The ACP client: notes when the first agent message chunk arrives."""

    def __init__(self) -> None:
        self.first: float | None = None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if self.first is None and update.session_update == "agent_message_chunk":
            self.first = time.perf_counter()

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the benchmark asks for no permission")


def environment(tmp: Path, llm: ScriptedLLM) -> tuple[Path, dict[str, str]]:
    ws = tmp / "ws"
    ws.mkdir()
    config = tmp / "config"
    config.mkdir()
    (config / "settings.json").write_text(json.dumps({
        "model": "openai/scripted", "apiBase": llm.openai_base,
        "agent": {"maxRetries": 0, "deferMcpTools": False},
    }))
    env = dict(os.environ)
    env.update({"AGENT_LS_CONFIG_DIR": str(config), "AGENT_LS_DATA_DIR": str(tmp / "data"),
                "OPENAI_API_KEY": "x", "PYTHONPATH": str(REPO)})
    for k in ("AGENT_LS_MODEL", "AGENT_LS_API_BASE", "AGENT_LS_USER_SETTINGS"):
        env.pop(k, None)
    return ws, env


async def run(prompts: int) -> None:
    with ScriptedLLM() as llm, tempfile.TemporaryDirectory() as d:
        ws, env = environment(Path(d), llm)
        lsp_first: dict[str, float] = {}
        lsp_client = LanguageClient("bench", "1.0")

        @lsp_client.feature("agent/event")
        def on_event(params: Any) -> None:
            if params.event.type == "text" and "t" not in lsp_first:
                lsp_first["t"] = time.perf_counter()

        for method in ("mcp/statusChanged", "window/logMessage"):
            lsp_client.feature(method)(lambda params: None)  # not measured

        await lsp_client.start_io(sys.executable, "-m", "agent_ls.cli", env=env, cwd=str(ws))
        await lsp_client.initialize_async(lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(),
            workspace_folders=[lsp.WorkspaceFolder(uri=ws.as_uri(), name="ws")]))
        lsp_client.initialized(lsp.InitializedParams())

        acp_client = FirstUpdateClient()
        async with spawn_agent_process(acp_client, sys.executable, "-m", "agent_ls.cli", "acp", env=env,
                                       cwd=ws, transport_kwargs={"stderr": None}) as (conn, _proc):
            await conn.initialize(protocol_version=1, client_capabilities=ClientCapabilities())
            sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            lsp_sid: str | None = None

            async def lsp_prompt(i: int) -> float:
                nonlocal lsp_sid
                lsp_first.clear()
                llm.script(text("hello there, general", chunks=3))
                params: dict[str, Any] = {"text": f"hi {i}"}
                if lsp_sid is not None:
                    params["sessionId"] = lsp_sid
                result = await lsp_client.protocol.send_request_async("agent/prompt", params)
                assert result.stopReason == "end", result
                lsp_sid = result.sessionId
                first_byte = llm.requests[-1].first_byte_at
                assert first_byte is not None
                return lsp_first["t"] - first_byte

            async def acp_prompt(i: int) -> float:
                acp_client.first = None
                llm.script(text("hello there, general", chunks=3))
                result = await conn.prompt(session_id=sid, prompt=[text_block(f"hi {i}")])
                assert result.stop_reason == "end_turn", result
                first_byte = llm.requests[-1].first_byte_at
                assert first_byte is not None and acp_client.first is not None
                return acp_client.first - first_byte

            await lsp_prompt(-1)  # warm-up: litellm imports, first connections
            await acp_prompt(-1)
            lsp_t: list[float] = []
            acp_t: list[float] = []
            for i in range(prompts):
                order = (lsp_prompt, acp_prompt) if i % 2 == 0 else (acp_prompt, lsp_prompt)
                for fn in order:
                    (lsp_t if fn is lsp_prompt else acp_t).append(await fn(i))
        await lsp_client.shutdown_async(None)
        lsp_client.exit(None)
        await lsp_client.stop()
    a, b = statistics.median(acp_t), statistics.median(lsp_t)
    print(f"LLM first byte -> first streamed update, warm prompts, n={prompts} each:\n"
          f"  LSP (agent/event text)                 median {b * 1e3:.2f} ms\n"
          f"  ACP (session/update agent_message_chunk) median {a * 1e3:.2f} ms\n"
          f"  ratio ACP/LSP {a / b:.2f} (target <= 1.1)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=30)
    args = parser.parse_args()
    asyncio.run(run(args.prompts))


if __name__ == "__main__":
    main()
