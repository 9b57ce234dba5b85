"""MCP sampling: an MCP server asks the host's model for a completion (``sampling/createMessage``).

The MCP host (:mod:`agent_ls.mcp`) calls a :class:`Sampler` with the server's name and the
request. The sampler

1. applies the settings (``agent.sampling``, see :class:`agent_ls.agent.config.SamplingSettings`):
   turned off or a server outside ``allowedServers`` -> declined without asking;
2. picks the model: the sampling model (else the agent's model); the server's
   ``modelPreferences.hints`` may only choose among ``allowedModels``; no model -> declined
   with a message that says what to set;
3. converts the request to litellm's message format (system prompt, text and image content;
   audio and tool use are refused clearly) and caps ``maxTokens``;
4. asks the user through an injectable async consent callback (the editor over LSP, or the
   terminal), unless the server is in ``autoApprove`` or was allowed for the session; answers
   are allow once / allow for the session (remembered per server) / deny;
5. asks the model for one answer, not streamed (:func:`agent_ls.agent.llm.complete`: litellm's
   ``acompletion``, in the model host when the process uses one) and returns a
   ``CreateMessageResult``.

Every refusal or failure becomes an ``ErrorData`` whose message the MCP server sees (and
usually shows to the model or the user), so it says why and what to change. No LSP imports.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import attrs
import mcp_types as types

from agent_ls.agent.config import AgentSettings, SamplingPolicy
from agent_ls.agent.llm import LLMConfig, LLMError, check_credentials, complete

log = logging.getLogger(__name__)

DECLINED = -1
"""The code MCP uses for a sampling request the user (or the host's policy) rejected."""
PREVIEW_CHARS = 600
"""Each message's text in the consent summary is cut to this many characters (marked)."""
PREVIEW_MESSAGES = 20
"""At most this many messages (the most recent) in the consent summary."""


class SamplingAnswer(enum.StrEnum):
    ALLOW_ONCE = "allow_once"
    ALLOW_SESSION = "allow_session"
    DENY = "deny"


@attrs.frozen
class MessagePreview:
    role: str
    text: str
    """The message's text (cut to :data:`PREVIEW_CHARS`); images as ``[image image/png, 1.2 KB]``."""


@attrs.frozen
class SamplingRequest:
    """What the user is asked to consent to."""

    server: str
    messages: tuple[MessagePreview, ...]
    system_prompt: str | None
    max_tokens: int
    """After the cap from the settings."""
    model: str
    """The litellm model string the request would use."""
    requested_max_tokens: int
    """What the server asked for."""
    omitted_messages: int = 0
    """Earlier messages left out of ``messages`` (only the most recent are previewed)."""
    endpoint: str | None = None
    """The API base the request goes to (None: the provider's default endpoint)."""


ConsentCallback = Callable[[SamplingRequest], Awaitable[SamplingAnswer | str]]
"""``await consent(request)`` -> allow once / allow for the session / deny (anything else: deny)."""


class SamplingRefused(Exception):
    """A request that cannot be served, with the code and message the MCP server gets."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# conversion -----------------------------------------------------------------------------

def _contents(message: types.SamplingMessage) -> list[Any]:
    content = message.content
    return list(content) if isinstance(content, list) else [content]


def _size(data: str) -> str:
    n = len(data) * 3 // 4
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB"


def to_litellm_messages(params: types.CreateMessageRequestParams) -> list[dict[str, Any]]:
    """The request as chat messages: the system prompt first, then each message with text
    (joined) and images (``image_url`` data URLs, user messages only). Raises
    :class:`SamplingRefused` for content the host cannot pass on (audio, tool use)."""
    out: list[dict[str, Any]] = []
    if params.system_prompt:
        out.append({"role": "system", "content": params.system_prompt})
    for i, message in enumerate(params.messages):
        parts: list[dict[str, Any]] = []
        for c in _contents(message):
            if isinstance(c, types.TextContent):
                parts.append({"type": "text", "text": c.text})
            elif isinstance(c, types.ImageContent):
                if message.role != "user":
                    raise SamplingRefused(types.INVALID_PARAMS, f"agent-ls: message {i} is an assistant message with "
                                          "an image; only user messages may carry images")
                parts.append({"type": "image_url", "image_url": {"url": f"data:{c.mime_type};base64,{c.data}"}})
            elif isinstance(c, types.AudioContent):
                raise SamplingRefused(types.INVALID_PARAMS, f"agent-ls: message {i} has audio content "
                                      f"({c.mime_type}); sampling supports text and images only")
            else:
                kind = getattr(c, "type", type(c).__name__)
                raise SamplingRefused(types.INVALID_PARAMS, f"agent-ls: message {i} has {kind!r} content; "
                                      "sampling with tools is not supported (text and images only)")
        if all(p["type"] == "text" for p in parts):
            out.append({"role": message.role, "content": "\n".join(p["text"] for p in parts)})
        else:
            out.append({"role": message.role, "content": parts})
    if not params.messages:
        raise SamplingRefused(types.INVALID_PARAMS, "agent-ls: the sampling request has no messages")
    return out


def _cut(text: str, limit: int = PREVIEW_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"… [{len(text) - limit} more characters]"


def preview_messages(params: types.CreateMessageRequestParams) -> tuple[tuple[MessagePreview, ...], int]:
    """The messages as the user sees them in the consent prompt, and how many were left out."""
    shown = params.messages[-PREVIEW_MESSAGES:]
    out: list[MessagePreview] = []
    for message in shown:
        texts: list[str] = []
        for c in _contents(message):
            if isinstance(c, types.TextContent):
                texts.append(c.text)
            elif isinstance(c, (types.ImageContent, types.AudioContent)):
                texts.append(f"[{c.type} {c.mime_type}, {_size(c.data)}]")
            else:
                texts.append(f"[{getattr(c, 'type', 'content')}]")
        out.append(MessagePreview(role=message.role, text=_cut("\n".join(texts))))
    return tuple(out), len(params.messages) - len(shown)


def choose_model(policy: SamplingPolicy, preferences: types.ModelPreferences | None) -> str | None:
    """The server's hints pick the first allowed model containing a hint (in hint order, case
    insensitive); otherwise the policy's model. Hints never reach a model outside the list."""
    hints = [h.name for h in (preferences.hints or [])] if preferences is not None else []
    for hint in hints:
        if not hint:
            continue
        for model in policy.allowed_models:
            if hint.lower() in model.lower():
                return model
    return policy.model


_STOP_REASONS = {"stop": "endTurn", "length": "maxTokens", "tool_calls": "toolUse", "function_call": "toolUse",
                 "content_filter": "contentFilter"}


def stop_reason(finish_reason: str | None, text: str, stop_sequences: Sequence[str] | None) -> str | None:
    """litellm's finish reason as MCP's ``stopReason``."""
    if finish_reason is None:
        return None
    if finish_reason == "stop_sequence" or (finish_reason == "stop" and stop_sequences and any(
            text.endswith(s) for s in stop_sequences)):
        return "stopSequence"
    return _STOP_REASONS.get(finish_reason, finish_reason)


# the handler --------------------------------------------------------------------------------

class Sampler:
    """The host's sampling handler (``create_manager(..., sampling_handler=Sampler(...))``).

    ``settings`` is called for every request, so settings changes apply at once. ``consent``
    is the user's say (None: nobody can be asked, so only ``autoApprove`` servers get through).
    "Allow for the session" lasts as long as this object.
    """

    def __init__(self, settings: Callable[[], AgentSettings], consent: ConsentCallback | None = None,
                 *, timeout: float = 300.0) -> None:
        self._settings = settings
        self.consent = consent
        self.timeout = timeout
        self._session_allowed: set[str] = set()
        self._locks: dict[str, asyncio.Lock] = {}

    def forget(self, server: str | None = None) -> None:
        """Forget "allow for the session" answers (one server's, or all)."""
        if server is None:
            self._session_allowed.clear()
        else:
            self._session_allowed.discard(server)

    async def __call__(self, server: str, params: types.CreateMessageRequestParams
                       ) -> types.CreateMessageResult | types.ErrorData:
        try:
            return await self._sample(server, params)
        except SamplingRefused as e:
            log.info("sampling request from %s refused: %s", server, e.message)
            return types.ErrorData(code=e.code, message=e.message)

    async def _sample(self, server: str, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        agent = self._settings()
        policy = agent.sampling.policy(server, agent.model, agent.api_base)
        if not policy.allowed:
            raise SamplingRefused(DECLINED, f"agent-ls declined the sampling request: {policy.reason}")
        if params.tools:
            raise SamplingRefused(types.INVALID_PARAMS, "agent-ls: sampling with tools is not supported "
                                  "(the client does not advertise the sampling.tools capability)")
        model = choose_model(policy, params.model_preferences)
        if model is None:
            raise SamplingRefused(DECLINED, (
                "agent-ls cannot sample: no model is configured. Set \"model\" (or \"agent\": {\"sampling\": "
                "{\"model\": ...}}) in the agent-ls settings, or the AGENT_LS_MODEL environment variable"))
        messages = to_litellm_messages(params)
        if params.max_tokens < 1:
            raise SamplingRefused(types.INVALID_PARAMS, f"agent-ls: maxTokens must be at least 1, got "
                                  f"{params.max_tokens}")
        max_tokens = min(params.max_tokens, policy.max_tokens)
        previews, omitted = preview_messages(params)
        request = SamplingRequest(server=server, messages=previews, system_prompt=params.system_prompt,
                                  max_tokens=max_tokens, model=model, requested_max_tokens=params.max_tokens,
                                  omitted_messages=omitted, endpoint=policy.api_base)
        if not policy.auto_approve:
            await self._ask(request)
        config = LLMConfig(model=model, api_base=policy.api_base, max_retries=agent.max_retries,
                           timeout=self.timeout)
        text, finish = await self._complete(config, messages, max_tokens, params)
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text=text),
                                         model=model, stop_reason=stop_reason(finish, text, params.stop_sequences))

    async def _ask(self, request: SamplingRequest) -> None:
        server = request.server
        # One question per server at a time: an "allow for the session" answers the ones queued.
        lock = self._locks.setdefault(server, asyncio.Lock())
        async with lock:
            if server in self._session_allowed:
                return
            if self.consent is None:
                raise SamplingRefused(DECLINED, (
                    f"agent-ls declined the sampling request: nobody can be asked for consent here; add "
                    f"'{server}' to \"agent.sampling.autoApprove\" in the user settings file to allow it "
                    "without asking"))
            try:
                raw = await self.consent(request)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                log.warning("sampling consent for %s could not be asked: %s", server, e)
                raise SamplingRefused(DECLINED, f"agent-ls declined the sampling request: the user could not be "
                                                f"asked for consent ({e})") from None
            try:
                answer = SamplingAnswer(raw)
            except ValueError:
                log.warning("unknown sampling consent answer %r from the editor: denied", raw)
                answer = SamplingAnswer.DENY
            if answer is SamplingAnswer.DENY:
                raise SamplingRefused(DECLINED, "the user denied the sampling request (agent-ls)")
            if answer is SamplingAnswer.ALLOW_SESSION:
                self._session_allowed.add(server)

    async def _complete(self, config: LLMConfig, messages: list[dict[str, Any]], max_tokens: int,
                        params: types.CreateMessageRequestParams) -> tuple[str, str | None]:
        extra: dict[str, Any] = {}
        if params.temperature is not None:
            extra["temperature"] = params.temperature
        if params.stop_sequences:
            extra["stop"] = list(params.stop_sequences)
        config = attrs.evolve(config, max_tokens=max_tokens, extra=extra)
        try:
            await asyncio.to_thread(check_credentials, config)  # loads the model library: off the event loop
        except LLMError as e:
            raise SamplingRefused(types.INTERNAL_ERROR, f"agent-ls: the model call failed: {e.message}") from None
        try:
            answer = await complete(config, messages)
        except LLMError as e:
            raise SamplingRefused(types.INTERNAL_ERROR, f"agent-ls: the model call failed ({e.kind}): "
                                                        f"{e.message}") from None
        return answer.text, answer.finish_reason
