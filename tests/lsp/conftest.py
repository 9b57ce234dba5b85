"""pytest-lsp fixtures: the real `agent-ls` language server over stdio, a recording editor.

Every test starts the server as a real subprocess (``python -m agent_ls.cli``, the module
behind the ``agent-ls`` command) with its own workspace, user settings and data folders, the
knob MCP server (tests/servers/knob_server.py) configured, and the scripted
OpenAI-compatible LLM on loopback as the model, reached through litellm.

The test client keeps the custom payloads as plain JSON (pygls would turn them into
namedtuples and rename keys that are not identifiers) and records everything the server sends.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features
from pytest_lsp.protocol import LanguageClientProtocol

from agent_ls.server.protocol import methods as P
from agent_ls.server.protocol.codec import RawNotification, RawRequest, RawResponse
from tests.harness import ProcessSetup, fresh_setup
from tests.harness import llm_server as llm_server  # the session's scripted LLM (a fixture)
from tests.harness import wait_for as wait_for  # for the tests here
from tests.llm.scripted_server import ScriptedLLM
from tests.servers.launch import knob_stdio_params

SERVER_COMMAND = [sys.executable, "-m", "agent_ls.cli"]

SERVER_REQUESTS = set(P.SERVER_REQUESTS)
SERVER_NOTIFICATIONS = {P.EVENT, P.MCP_STATUS_CHANGED, P.JOBS_CHANGED}
CUSTOM_CLIENT_REQUESTS = set(P.CLIENT_REQUESTS)


class Setup(ProcessSetup):
    """Workspace + user settings + environment for one language-server process, with the knob
    MCP server configured."""

    def __init__(self, root: Path, llm: ScriptedLLM) -> None:
        super().__init__(root, llm)
        (self.ws / ".agent-ls").mkdir()
        self.cancel_file = root / "cancel.log"
        self.user_settings["mcpServers"] = {"knob": knob_stdio_params("--cancel-file", self.cancel_file)}
        self.extra_env: dict[str, str] = {}
        self.pretrusted: list[Path] = [self.ws]
        """Folders whose settings (not their MCP servers) the user trusted before the server starts,
        as remembered in the data folder: the tests of other features see the workspace settings
        in effect, and workspace servers still ask one by one. Empty: a folder never trusted."""

    def write(self) -> None:
        super().write()
        for folder in self.pretrusted:
            self.trust_settings(folder)

    def trust_settings(self, folder: Path) -> None:
        """Remember that the user trusts the folder's current settings (the real decision record)."""
        from agent_ls.config.settings import load_settings
        from agent_ls.config.state import HostState
        from agent_ls.config.trust import TrustPolicy

        state = HostState(self.state_file)
        request = load_settings([folder], user_settings=self.user_file, environ={},
                                trust=TrustPolicy(state)).workspaces[folder].request
        state.set_workspace_decision(folder, request.digest, True, request.settings_snapshot())

    def env(self) -> dict[str, str]:
        e = super().env()
        e.update(self.extra_env)
        return e


@pytest.fixture
def setup(tmp_path: Path, llm_server: ScriptedLLM) -> Iterator[Setup]:
    yield from fresh_setup(Setup, tmp_path, llm_server)


class RawClientProtocol(LanguageClientProtocol):
    """Custom messages stay plain JSON on the client side too."""

    def get_message_type(self, method: str) -> Any:
        if method in SERVER_REQUESTS:
            return RawRequest
        if method in SERVER_NOTIFICATIONS:
            return RawNotification
        return super().get_message_type(method)

    def get_result_type(self, method: str) -> Any:
        if method == lsp.TEXT_DOCUMENT_CODE_ACTION:
            return RawResponse  # lsprotocol 2025.0.0 parses a CodeAction with a command as a Command
        if method in CUSTOM_CLIENT_REQUESTS or "/" in method and method.split("/")[0] in ("agent", "mcp"):
            return RawResponse
        return super().get_result_type(method)


def make_client() -> LanguageClient:
    client = LanguageClient(protocol_cls=RawClientProtocol, converter_factory=default_converter)
    # pytest-lsp's defaults, except window/showDocument: the editor below answers it.
    register_lsp_features(client, {m: f for m, f in DEFAULT_CLIENT_FEATURES.items() if m != lsp.WINDOW_SHOW_DOCUMENT})
    return client


def plain(value: Any) -> Any:
    """Standard payloads arrive as attrs or namedtuples: back to plain JSON values."""
    if hasattr(value, "__attrs_attrs__"):
        from lsprotocol.converters import get_converter

        return get_converter().unstructure(value)
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


class Editor:
    """A started language server plus everything it sent us; answers its requests."""

    def __init__(self, client: LanguageClient, setup: Setup) -> None:
        self.client = client
        self.setup = setup
        self.events: list[dict[str, Any]] = []
        self.status_changes: list[list[dict[str, Any]]] = []
        self.approvals: list[dict[str, Any]] = []
        self.approval_answers: list[Any] = []
        """Answers used in order (a dict is the whole result, e.g. with a ``scope``; an async
        function of the request returns the answer);
        ``default_approval`` after that."""
        self.default_approval = "allow_once"
        self.hold_approvals = False
        """When set, approval requests wait until the server cancels them."""
        self.cancelled_approvals: list[dict[str, Any]] = []
        self.trust_answer: bool | None = True
        self.trust_requests: list[dict[str, Any]] = []
        self.workspace_trust_answer: bool | None = True
        self.workspace_trust_requests: list[dict[str, Any]] = []
        self.hold_workspace_trust = False
        """When set, workspace trust prompts wait until the server withdraws them."""
        self.withdrawn_workspace_trust: list[dict[str, Any]] = []
        self.plain_lsp = False
        """A plain LSP editor (Neovim, eglot): no ``agent/trustWorkspace`` nor ``mcp/trustServer``
        handler (the server gets "method not found")."""
        self.message_requests: list[lsp.ShowMessageRequestParams] = []
        self.message_answers: list[str | None] = []
        """``window/showMessageRequest``: the titles to answer with, in order (None: dismissed)."""
        self.initialization_options: dict[str, Any] | None = None
        self.workspace_changes: list[list[dict[str, Any]]] = []
        self.elicitations: list[dict[str, Any]] = []
        self.elicit_answer: dict[str, Any] = {"action": "accept", "content": {}}
        self.applied_edits: list[Any] = []
        self.apply_edit_capable = True
        """Whether ``initialize`` advertises ``workspace.applyEdit``."""
        self.workspace_edit: lsp.WorkspaceEditClientCapabilities | None = None
        """``workspace.workspaceEdit`` as advertised (documentChanges, resource operations)."""
        self.apply_answer: Callable[[lsp.ApplyWorkspaceEditParams], lsp.ApplyWorkspaceEditResult] | None = None
        """Answers ``workspace/applyEdit`` when set (after recording it); else applied=true."""
        self.experimental: Any = None
        """``capabilities.experimental`` as advertised (``{"agentLs": {"reviewEdits": true}}``)."""
        self.reviews: list[dict[str, Any]] = []
        """The ``agent/reviewEdit`` requests received."""
        self.review_answer: Callable[[dict[str, Any]], Any] | None = None
        """Answers ``agent/reviewEdit`` (a dict, or an awaitable of one); ``deferred`` when unset."""
        self.registrations: list[Any] = []
        self.init_result: lsp.InitializeResult | None = None
        self.shown_documents: list[lsp.ShowDocumentParams] = []
        self.follow_auth_urls = True
        """Complete OAuth authorization pages shown with window/showDocument (like a browser
        whose user clicks "Allow")."""

    # requests ------------------------------------------------------------------------------
    async def request(self, method: str, params: Any = None, timeout: float = 60.0) -> Any:
        """Send a request; a server that never answers fails the test instead of hanging it."""
        result = await asyncio.wait_for(
            self.client.protocol.send_request_async(method, {} if params is None else params), timeout)
        return plain(result)

    async def raw_request(self, method: str, params: Any, timeout: float = 15.0) -> Any:
        """A request sent exactly as given (the client would refuse to serialize bad params
        of a standard method)."""
        from concurrent.futures import Future

        proto = self.client.protocol
        msg_id = f"raw-{uuid.uuid4().hex[:8]}"
        future: Future[Any] = Future()
        proto._request_futures[msg_id] = future
        proto._result_types[msg_id] = RawResponse
        proto._send_data(RawRequest(id=msg_id, method=method, jsonrpc="2.0", params=params))
        return await asyncio.wait_for(asyncio.wrap_future(future), timeout)

    def start_request(self, method: str, params: Any = None) -> tuple[str, asyncio.Task[Any]]:
        """Send a request in the background; returns its id (for ``$/cancelRequest``) and task."""
        msg_id = f"req-{uuid.uuid4().hex[:8]}"
        task = asyncio.ensure_future(self.client.protocol.send_request_async(method, params or {}, msg_id=msg_id))
        return msg_id, task

    def cancel(self, msg_id: str) -> None:
        self.client.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=msg_id))

    def notify(self, method: str, params: Any) -> None:
        self.client.protocol.notify(method, params)

    # MCP status helpers -------------------------------------------------------------------------
    async def status(self) -> dict[str, dict[str, Any]]:
        result = await self.request(P.MCP_STATUS)
        return {s["name"]: s for s in result["servers"]}

    async def wait_state(self, name: str, state: str | tuple[str, ...], timeout: float = 30.0) -> dict[str, Any]:
        states = (state,) if isinstance(state, str) else state
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        last: dict[str, Any] | None = None
        while loop.time() < end:
            last = (await self.status()).get(name)
            if last is not None and last["state"] in states:
                return last
            await asyncio.sleep(0.05)
        raise AssertionError(f"server {name} not in {states} after {timeout}s: {last}")

    # events ------------------------------------------------------------------------------------
    def session_events(self, session_id: str | None = None) -> list[dict[str, Any]]:
        return [e["event"] for e in self.events if session_id is None or e["sessionId"] == session_id]

    def event_types(self, session_id: str | None = None, *, merge_text: bool = True) -> list[str]:
        out: list[str] = []
        for e in self.session_events(session_id):
            if merge_text and e["type"] == "text" and out and out[-1] == "text":
                continue
            out.append(e["type"])
        return out

    # documents -----------------------------------------------------------------------------------
    def open_document(self, path: Path, text: str, language_id: str = "python") -> str:
        uri = path.as_uri()
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id=language_id, version=1, text=text)))
        return uri


async def open_editor(setup: Setup, folders: list[Path] | None = None,
                      configure: Callable[[Editor], None] | None = None,
                      command: list[str] | None = None) -> Editor:
    setup.write()
    config = ClientServerConfig(server_command=command or SERVER_COMMAND, server_env=setup.env(), client_factory=make_client)
    client: LanguageClient = await config.start()  # type: ignore[assignment]
    ed = Editor(client, setup)
    if configure is not None:
        configure(ed)

    @client.feature(P.EVENT)
    def on_event(params: Any) -> None:
        ed.events.append(params)

    @client.feature(P.MCP_STATUS_CHANGED)
    def on_status(params: Any) -> None:
        ed.status_changes.append(params["servers"])
        ed.workspace_changes.append(params.get("workspaces", []))

    @client.feature(P.APPROVE)
    async def on_approve(params: Any) -> dict[str, Any]:
        ed.approvals.append(params)
        if ed.hold_approvals:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                ed.cancelled_approvals.append(params)
                raise
        answer = ed.approval_answers.pop(0) if ed.approval_answers else ed.default_approval
        if callable(answer):  # decides from the request, when it likes (answers in any order)
            answer = await answer(params)
        return answer if isinstance(answer, dict) else {"answer": answer}

    def on_trust(params: Any) -> dict[str, Any]:
        ed.trust_requests.append(params)
        return {"trusted": ed.trust_answer}

    async def on_trust_workspace(params: Any) -> dict[str, Any]:
        ed.workspace_trust_requests.append(params)
        if ed.hold_workspace_trust:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                ed.withdrawn_workspace_trust.append(params)
                raise
        return {"trusted": ed.workspace_trust_answer}

    if not ed.plain_lsp:
        client.feature(P.TRUST_SERVER)(on_trust)
        client.feature(P.TRUST_WORKSPACE)(on_trust_workspace)

    @client.feature(lsp.WINDOW_SHOW_MESSAGE_REQUEST)
    def on_message_request(params: lsp.ShowMessageRequestParams) -> lsp.MessageActionItem | None:
        ed.message_requests.append(params)
        title = ed.message_answers.pop(0) if ed.message_answers else None
        return lsp.MessageActionItem(title=title) if title is not None else None

    @client.feature(P.ELICIT)
    def on_elicit(params: Any) -> dict[str, Any]:
        ed.elicitations.append(params)
        return ed.elicit_answer

    @client.feature(P.REVIEW_EDIT)
    async def on_review(params: Any) -> Any:
        ed.reviews.append(params)
        answer = ed.review_answer(params) if ed.review_answer is not None else {"decision": "deferred"}
        if asyncio.iscoroutine(answer) or isinstance(answer, asyncio.Future):
            answer = await answer
        return answer

    @client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
    def on_register(params: lsp.RegistrationParams) -> None:
        ed.registrations.extend(params.registrations)

    @client.feature(lsp.WINDOW_SHOW_DOCUMENT)
    async def on_show_document(params: lsp.ShowDocumentParams) -> lsp.ShowDocumentResult:
        ed.shown_documents.append(params)
        if params.external and ed.follow_auth_urls and params.uri.startswith("http://127.0.0.1"):
            from agent_ls.mcp.oauth.redirect import headless_opener

            await headless_opener("editor", params.uri)
        return lsp.ShowDocumentResult(success=True)

    @client.feature(lsp.WORKSPACE_APPLY_EDIT)
    def on_apply(params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        ed.applied_edits.append(params)
        if ed.apply_answer is not None:
            return ed.apply_answer(params)
        return lsp.ApplyWorkspaceEditResult(applied=True)

    ed.init_result = await client.initialize_session(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(
            window=lsp.WindowClientCapabilities(
                work_done_progress=True, show_document=lsp.ShowDocumentClientCapabilities(support=True)),
            text_document=lsp.TextDocumentClientCapabilities(code_action=lsp.CodeActionClientCapabilities(
                code_action_literal_support=lsp.ClientCodeActionLiteralOptions(
                    code_action_kind=lsp.ClientCodeActionKindOptions(value_set=list(lsp.CodeActionKind))))),
            workspace=lsp.WorkspaceClientCapabilities(
                workspace_folders=True, apply_edit=ed.apply_edit_capable, workspace_edit=ed.workspace_edit,
                did_change_watched_files=lsp.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)),
            experimental=ed.experimental,
        ),
        workspace_folders=[lsp.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in (folders or [setup.ws])],
        initialization_options=ed.initialization_options,
    ))
    return ed


async def close_editor(ed: Editor) -> None:
    """``shutdown`` + ``exit``. A server still running 30 s later is killed and the test fails
    with that reason (rather than the teardown waiting for it until the test's timeout)."""
    process = getattr(ed.client, "_server", None)  # pygls' handle on the server process
    try:
        await asyncio.wait_for(ed.client.shutdown_session(), 30)
    except TimeoutError:
        if process is not None and process.returncode is None:
            process.kill()
        pytest.fail("the language server was still running 30 s after shutdown + exit")
    finally:
        await ed.client.stop()


@pytest.fixture
async def editor(setup: Setup) -> AsyncIterator[Editor]:
    ed = await open_editor(setup)
    yield ed
    await close_editor(ed)


def pid_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")
