"""Asking the editor: one typed server -> client request, the same way for every question.

Tool approval (``agent/approve``), trust (``mcp/trustServer``, ``agent/trustWorkspace``),
elicitation (``mcp/elicit``) and sampling consent (``mcp/sample``) all go through :func:`ask`:

- the params are an attrs payload (camelCase on the wire), the answer is structured into
  ``result_type`` with the protocol's cattrs converter;
- a client that does not support the question (``supported=False``) is not asked: the caller's
  ``fallback`` is the answer;
- the wait can end early, by ``timeout`` or by the ``cancel`` event: the request is withdrawn
  (``$/cancelRequest``) and the answer is ``fallback``;
- cancelling the asking task (the turn was stopped) withdraws the request too, and propagates;
- an error response, or an answer that does not fit ``result_type``, is :class:`AskFailed`:
  each caller says what that means (a deny, no decision, ...).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any, TypeVar

from pygls.exceptions import JsonRpcMethodNotFound

from agent_ls.server.protocol.codec import InvalidParams, dump, parse

if TYPE_CHECKING:
    from agent_ls.server.client import EditorClient

log = logging.getLogger("agent_ls.server")

T = TypeVar("T")
F = TypeVar("F")


class AskFailed(Exception):
    """The editor answered with an error, or with something that does not fit the result type.

    ``str()`` is the underlying error's message (callers log it and pass it on as before).
    """

    def __init__(self, method: str, error: BaseException, *, malformed: bool = False) -> None:
        super().__init__(str(error))
        self.method = method
        self.error = error
        self.malformed = malformed
        """The editor answered, but not with a ``result_type``."""
        self.code: int | None = getattr(error, "code", None)
        """The JSON-RPC error code of an error response."""

    @property
    def method_not_found(self) -> bool:
        """The editor does not know the method (it answered ``MethodNotFound``)."""
        return isinstance(self.error, JsonRpcMethodNotFound) or self.code == JsonRpcMethodNotFound.CODE


async def ask(client: EditorClient, method: str, params: Any, result_type: type[T], *, fallback: F,
              supported: bool = True, timeout: float | None = None,
              cancel: asyncio.Event | None = None) -> T | F:
    """Send ``method`` with ``params`` (an attrs payload) to the editor and wait for its answer.

    Returns the answer as ``result_type``, or ``fallback`` when the client does not support the
    question (``supported`` false: nothing is sent), when ``timeout`` seconds passed, or when
    ``cancel`` was set (both withdraw the request). Raises :class:`AskFailed` for an error
    response or a malformed answer; cancelling the caller withdraws the request and propagates.
    """
    if not supported:
        log.debug("%s: the editor does not support it, not asked", method)
        return fallback
    request = asyncio.ensure_future(client.request(method, dump(params)))
    stop = asyncio.ensure_future(cancel.wait()) if cancel is not None else None
    try:
        await asyncio.wait({request} if stop is None else {request, stop}, timeout=timeout,
                           return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        request.cancel()  # client.request withdraws it ($/cancelRequest)
        raise
    finally:
        if stop is not None:
            stop.cancel()
    if not request.done():
        request.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await request  # the $/cancelRequest is on its way
        log.info("%s: %s; not waiting for the editor's answer any more", method,
                 "timed out" if cancel is None or not cancel.is_set() else "withdrawn")
        return fallback
    try:
        raw = request.result()
    except asyncio.CancelledError:  # the request task alone was cancelled (not the caller)
        raise
    except Exception as e:
        raise AskFailed(method, e) from e
    try:
        return parse(result_type, raw)
    except InvalidParams as e:
        raise AskFailed(method, e, malformed=True) from e
