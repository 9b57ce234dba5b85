"""ask() (agent_ls/server/ask.py): one server -> client request with a typed answer.

The real server's request sending, with the JSON-RPC side replaced by a recorder: what goes
out, what comes back, and the ``$/cancelRequest`` that withdraws a request.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInternalError, JsonRpcMethodNotFound

from agent_ls.server.ask import AskFailed, ask
from agent_ls.server.client import EditorClient
from agent_ls.server.protocol.codec import RawResponse
from agent_ls.server.protocol.methods import APPROVE
from agent_ls.server.protocol.questions import ApproveParams, ApproveResult
from agent_ls.server.server import AgentLanguageServer

PARAMS = ApproveParams(call_id="c1", tool="mcp__s__t", arguments={"x": 1}, reason="writes")
DENY = ApproveResult("deny")


class RecordingProtocol:
    """The two calls ``EditorClient.request`` makes on pygls' protocol."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, Any, str]] = []
        self.futures: dict[str, asyncio.Future[Any]] = {}
        self.notifications: list[tuple[str, Any]] = []

    def send_request_async(self, method: str, params: Any, msg_id: str) -> asyncio.Future[Any]:
        self.requests.append((method, params, msg_id))
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.futures[msg_id] = future
        return future

    def notify(self, method: str, params: Any) -> None:
        self.notifications.append((method, params))

    def answer(self, result: Any = None, error: Exception | None = None) -> None:
        (future,) = self.futures.values()
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(RawResponse(id="x", jsonrpc="2.0", result=result))

    def cancelled_ids(self) -> list[Any]:
        return [p.id for m, p in self.notifications if m == lsp.CANCEL_REQUEST]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> tuple[EditorClient, RecordingProtocol]:
    ls = AgentLanguageServer()
    recorder = RecordingProtocol()
    monkeypatch.setattr(ls, "protocol", recorder)
    return ls.client, recorder


async def _sent(recorder: RecordingProtocol) -> None:
    for _ in range(20):
        if recorder.requests:
            return
        await asyncio.sleep(0)
    raise AssertionError("no request was sent")


async def test_the_answer_is_structured_into_the_result_type(server: Any) -> None:
    ls, recorder = server
    task = asyncio.ensure_future(ask(ls, APPROVE, PARAMS, ApproveResult, fallback=DENY))
    await _sent(recorder)
    method, params, _ = recorder.requests[0]
    assert method == APPROVE
    assert params["callId"] == "c1" and params["arguments"] == {"x": 1}  # camelCase on the wire
    recorder.answer({"answer": "allow_once"})
    assert await task == ApproveResult("allow_once")
    assert recorder.notifications == []


async def test_a_client_without_the_capability_is_not_asked(server: Any) -> None:
    ls, recorder = server
    assert await ask(ls, APPROVE, PARAMS, ApproveResult, fallback=DENY, supported=False) is DENY
    assert recorder.requests == [] and recorder.notifications == []


async def test_a_timeout_withdraws_the_request_and_answers_the_fallback(server: Any) -> None:
    ls, recorder = server
    answer = await ask(ls, APPROVE, PARAMS, ApproveResult, fallback=DENY, timeout=0.05)
    assert answer is DENY
    (_, _, msg_id), = recorder.requests
    assert recorder.cancelled_ids() == [msg_id]


async def test_the_cancel_event_withdraws_the_request(server: Any) -> None:
    ls, recorder = server
    stop = asyncio.Event()
    task = asyncio.ensure_future(ask(ls, APPROVE, PARAMS, ApproveResult, fallback=DENY, cancel=stop, timeout=30))
    await _sent(recorder)
    stop.set()
    assert await asyncio.wait_for(task, 5) is DENY
    assert recorder.cancelled_ids() == [recorder.requests[0][2]]


async def test_cancelling_the_caller_withdraws_the_request_and_propagates(server: Any) -> None:
    """A stopped turn: the task waiting for the approval is cancelled."""
    ls, recorder = server
    task = asyncio.ensure_future(ask(ls, APPROVE, PARAMS, ApproveResult, fallback=DENY))
    await _sent(recorder)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(20):  # the request's own task sends $/cancelRequest on its next step
        if recorder.notifications:
            break
        await asyncio.sleep(0)
    assert recorder.cancelled_ids() == [recorder.requests[0][2]]


async def test_method_not_found_is_reported_as_such(server: Any) -> None:
    ls, recorder = server
    task = asyncio.ensure_future(ask(ls, APPROVE, PARAMS, ApproveResult, fallback=DENY))
    await _sent(recorder)
    recorder.answer(error=JsonRpcMethodNotFound("agent/approve"))
    with pytest.raises(AskFailed) as info:
        await task
    assert info.value.method_not_found and not info.value.malformed
    assert str(info.value) == str(JsonRpcMethodNotFound("agent/approve"))


async def test_an_error_response_is_ask_failed(server: Any) -> None:
    ls, recorder = server
    task = asyncio.ensure_future(ask(ls, APPROVE, PARAMS, ApproveResult, fallback=DENY))
    await _sent(recorder)
    recorder.answer(error=JsonRpcInternalError("boom"))
    with pytest.raises(AskFailed) as info:
        await task
    assert not info.value.method_not_found and not info.value.malformed
    assert info.value.code == JsonRpcInternalError.CODE


async def test_a_malformed_answer_is_ask_failed_and_says_why(server: Any) -> None:
    ls, recorder = server
    task = asyncio.ensure_future(ask(ls, APPROVE, PARAMS, ApproveResult, fallback=DENY))
    await _sent(recorder)
    recorder.answer({"answer": 3})
    with pytest.raises(AskFailed) as info:
        await task
    assert info.value.malformed
    assert "answer" in str(info.value) and "string" in str(info.value)
