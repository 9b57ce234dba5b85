"""A server result without ``resultType`` is a complete result (MCP 2026-07-28).

The 2026-07-28 revision added ``resultType`` (``"complete"`` or ``"input_required"``) to every
result and says a result without it is read as complete: servers written before the field
existed, and simple servers, omit it. mcp 2.3's ``ClientSession.send_request`` validates each
result against the revision's schema, where the field is required, and raises instead. This
wraps the transport's receive stream (the streams a transport hands to ``mcp.Client`` are the
SDK's public extension point for transports) and fills in ``"complete"`` where a response's
result has no ``resultType``. A legacy session is unaffected: its result models ignore unknown
keys and the SDK drops later-revision fields before parsing.

Remove when the SDK reads an absent ``resultType`` as complete:
``tests/unit/test_canaries.py::test_the_sdk_still_rejects_a_result_without_result_type`` fails then.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any, TypeVar

import anyio.abc
from mcp.shared.message import SessionMessage
from mcp_types.jsonrpc import JSONRPCResponse

T = TypeVar("T")

COMPLETE = "complete"


def with_result_kind(message: T) -> T:
    """``message`` with ``resultType: "complete"`` added to a response result that lacks one;
    anything else (requests, notifications, errors, exceptions, results with the field) as is."""
    if not isinstance(message, SessionMessage):
        return message
    inner = message.message
    if not isinstance(inner, JSONRPCResponse) or not isinstance(inner.result, dict):
        return message
    if "resultType" in inner.result:
        return message
    fixed = inner.model_copy(update={"result": {**inner.result, "resultType": COMPLETE}})
    return SessionMessage(message=fixed, metadata=message.metadata)  # type: ignore[return-value]


class _ResultKindStream(anyio.abc.ObjectReceiveStream[Any]):
    def __init__(self, inner: anyio.abc.ObjectReceiveStream[Any]) -> None:
        self._inner = inner

    async def receive(self) -> Any:
        return with_result_kind(await self._inner.receive())

    async def aclose(self) -> None:
        await self._inner.aclose()

    @property
    def last_context(self) -> Any:
        """The sender's contextvars of the last message, when the transport keeps them (the
        SDK's dispatcher reads this duck-typed attribute)."""
        return getattr(self._inner, "last_context", None)


@contextlib.asynccontextmanager
async def results_read_as_complete(transport: contextlib.AbstractAsyncContextManager[Any]) -> AsyncIterator[Any]:
    """``transport`` (an async context manager yielding ``(read_stream, write_stream, ...)``)
    with its read stream wrapped by :func:`with_result_kind`."""
    async with transport as streams:
        read, *rest = streams
        yield (_ResultKindStream(read), *rest)
