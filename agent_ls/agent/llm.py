"""The LLM adapter: every call goes through litellm, streaming, with clear errors.

litellm is imported lazily (it takes seconds) and only after ``LITELLM_LOCAL_MODEL_COST_MAP``
is set, so importing it never reaches the network; its banner is turned off because stdout
is the LSP channel.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import re
import threading
import warnings
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import attrs

from agent_ls.agent import model_host
from agent_ls.agent.events import UsageReport
from agent_ls.agent.token_count import Counted, CountFirst, count_tokens, counted
from agent_ls.core.imports import collector_paused
from agent_ls.core.process_secrets import credential_env_name, environment, process_secrets

log = logging.getLogger(__name__)

_litellm: Any = None
_loading = threading.Lock()
_host: Any = None
"""The model host this process attached to (:mod:`agent_ls.agent.model_host`), else None."""
_host_tried = False


request_sent: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar("request_sent", default=None)
"""Called (when set in the caller's context) as each streamed model request (:func:`stream_completion`)
is handed over: to the model host (what is left in this process is the request's encoding and one
local write; with a :class:`CountFirst`, once the host's first delta says it counted and sends the
request), or sent by litellm (its response has begun). Not called for a request that is not sent
(its count passed ``count.most``). The conversation service starts the work it held so as not to
compete with the request (the turn's checkpoint, the MCP SDK's import)."""


def _sent() -> None:
    told = request_sent.get()
    if told is not None:
        try:
            told()
        except Exception:  # a broken listener must not break the request
            log.exception("request_sent listener failed")


def share_model_host(wanted: bool = True) -> None:
    """Make this process's model requests in the user's model host (started when needed) rather
    than import litellm itself: every front end (issue 46). Takes effect at the next
    :func:`load_library`; ``AGENT_LS_MODEL_HOST=0`` keeps everything in-process."""
    model_host.share(wanted)


def load_library() -> None:
    """The model library ready: attached to the model host when one is wanted (started and
    waited for when none runs; litellm imported here when it cannot be), else litellm imported.
    Seconds on first use: call it in a worker thread."""
    global _host, _host_tried
    if _host is not None:
        return
    if model_host.shared() and _litellm is None:
        with _loading:
            if not _host_tried:
                _host_tried = True
                try:
                    _host = model_host.attach(environment())
                    log.debug("model host: attached (pid %d)", _host.pid)
                except model_host.HostUnavailable as e:
                    log.warning("model host unavailable, loading the model library in this process: %s", e)
        if _host is not None:
            return
    get_litellm()


def library_state() -> tuple[str, int | None]:
    """Where this process's model requests go: ``("host", pid)`` (the model host), ``("process",
    None)`` (litellm imported here) or ``("none", None)`` (not loaded yet)."""
    host = _host
    if host is not None:
        return "host", host.pid
    return ("process", None) if _litellm is not None else ("none", None)


def library_loaded() -> bool:
    """The model library is ready (litellm imported, or a model host attached)."""
    return _litellm is not None or _host is not None


class _HostLibrary:
    """litellm's functions the session calls outside a model request, answered by the model host."""

    def __init__(self, host: Any) -> None:
        self._host = host

    def token_counter(self, **kwargs: Any) -> Any:
        return self._host.call("token_counter", **kwargs)

    def get_model_info(self, model: str) -> Any:
        return self._host.call("get_model_info", model=model)

    def validate_environment(self, **kwargs: Any) -> Any:
        return self._host.call("validate_environment", **kwargs)


def token_counts(model: str, items: list[dict[str, Any]]) -> list[int | None]:
    """:func:`count_tokens` of ``items`` (``messages=`` or ``text=``) in one call: one round trip
    when this process uses the model host (a host gone is started again, once), else litellm here."""
    load_library()
    host = _host
    if host is None:
        return count_tokens(_litellm, model, items)
    try:
        return list(host.count(model, items))
    except OSError as e:
        log.warning("the model host (pid %d) is gone (%s): starting another", host.pid, e)
        return list(_reattach(host).count(model, items))


def library() -> Any:
    """litellm's token counter, model information and credential check: in the model host when
    this process uses one (:func:`share_model_host`), else litellm itself."""
    load_library()
    return _HostLibrary(_host) if _host is not None else _litellm


def get_litellm() -> Any:
    """litellm, imported on first use (seconds: call it in a worker thread). Threads that ask
    while it loads wait for that load (the warm-up and a first prompt never do it twice)."""
    global _litellm
    if _litellm is None:
        with _loading:
            if _litellm is None:
                _litellm = _import_litellm()
    return _litellm


def _import_litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

    warnings.filterwarnings("ignore", message=r".*ReadOnly.*", category=UserWarning)
    # litellm loads a .env (found from its install folder upwards, or the cwd) into
    # os.environ at import unless LITELLM_MODE says it is not a development run: a venv
    # inside a cloned repository would otherwise take that repository's OPENAI_BASE_URL.
    # LITELLM_LOG: its handler (stdout for records below WARNING) lets only warnings through while
    # the import runs (it logs as it builds its HTTP clients); afterwards its records go to ours
    # (_route_litellm_logs).
    saved = {k: os.environ.get(k) for k in ("LITELLM_MODE", "LITELLM_LOG")}
    os.environ["LITELLM_MODE"] = "PRODUCTION"
    os.environ["LITELLM_LOG"] = "WARNING"
    try:
        with collector_paused():  # a third of its import time otherwise (agent_ls.core.imports)
            import litellm
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    litellm.suppress_debug_info = True
    litellm.drop_params = True
    _route_litellm_logs()
    # The default tokenizer (tiktoken's cl100k_base, 0.2-0.6 s to load): the session counts
    # every request with it before sending it, the first prompt too (issue 30 item 2).
    with contextlib.suppress(Exception):
        litellm.token_counter(text="")
    return litellm


LITELLM_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")


def _route_litellm_logs() -> None:
    """litellm's own handler writes its records below WARNING to stdout: the protocol's channel
    of the language server and ``agent-ls acp``, the answer of ``agent-ls chat -p``. Its loggers
    lose that handler and their own level: their records reach this process's handlers (stderr or
    the editor's log, secrets masked) at the level the user chose (``--log-level``)."""
    for name in LITELLM_LOGGERS:
        logger = logging.getLogger(name)
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
        logger.setLevel(logging.NOTSET)
        logger.propagate = True


@attrs.frozen
class LLMConfig:
    model: str
    """Any litellm model string, e.g. ``anthropic/claude-sonnet-4-5``, ``openai/gpt-4.1``, ``ollama/qwen3``."""
    api_base: str | None = None
    api_key: str | None = None
    max_retries: int = 2
    timeout: float = 600.0
    max_tokens: int | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)

    @property
    def supports_cache_control(self) -> bool:
        """Providers that take explicit ``cache_control`` breakpoints (Anthropic, via litellm)."""
        m = self.model.lower()
        return m.startswith(("anthropic/", "claude", "bedrock/anthropic", "vertex_ai/claude")) or (
            "/" not in m and "claude" in m
        )


class LLMError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def check_credentials(config: LLMConfig) -> None:
    """Fail early, naming the variable to set, when the provider needs a key that is missing."""
    if config.api_key or config.api_base:
        return
    litellm = library()
    taken = process_secrets()
    try:
        env = litellm.validate_environment(model=config.model, api_key=provider_credentials(config).get("api_key"))
    except Exception:
        return
    missing = [name for name in env.get("missing_keys") or [] if name not in taken]
    if not env.get("keys_in_environment", True) and missing:
        names = ", ".join(missing)
        raise LLMError("missing_key", f"model {config.model!r} needs an API key: set {names} in the environment "
                                      "(or configure \"apiBase\" for a local server such as Ollama)")


_CREDENTIAL_KWARGS = {"AWS_ACCESS_KEY_ID": "aws_access_key_id", "AWS_SECRET_ACCESS_KEY": "aws_secret_access_key",
                      "AWS_SESSION_TOKEN": "aws_session_token", "AZURE_AD_TOKEN": "azure_ad_token"}
"""litellm's argument for a credential variable that is not the provider's ``api_key``."""
_MORE_CREDENTIALS = {"AWS_": ("AWS_SESSION_TOKEN",), "AZURE_": ("AZURE_AD_TOKEN",)}
"""Variables litellm reads for a provider but ``validate_environment`` does not list."""


def provider_credentials(config: LLMConfig) -> dict[str, str]:
    """The provider's credentials for a call to ``config.model``, as litellm arguments
    (``api_key``, ``aws_secret_access_key``, ...), from the secrets the process took out of its
    environment at start-up (:mod:`agent_ls.core.process_secrets`): litellm would otherwise look
    for them in ``os.environ``, where they no longer are. Which variables: the ones litellm's
    ``validate_environment`` finds missing for the model (``OPENAI_API_KEY`` for ``openai/...``,
    ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY`` for ``gemini/...``, the AWS pair for bedrock).
    Empty when nothing was taken (litellm then reads the environment itself, as before)."""
    taken = process_secrets()
    if not taken:
        return {}
    try:
        names = list(library().validate_environment(model=config.model).get("missing_keys") or [])
    except Exception:
        return {}
    for prefix, more in _MORE_CREDENTIALS.items():
        if any(name.startswith(prefix) for name in names):
            names.extend(more)
    out: dict[str, str] = {}
    for name in names:
        value = taken.get(name)
        if value is not None and credential_env_name(name):
            out.setdefault(_CREDENTIAL_KWARGS.get(name, "api_key"), value)
    return out


_SECRET_NAME = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|_KEY)$", re.IGNORECASE)


def redact_secrets(text: str, config: LLMConfig, environ: Mapping[str, str] | None = None) -> str:
    """``text`` with the configured API key and the values of secret-looking environment
    variables (``*_API_KEY``, ``*_TOKEN``, ...) replaced by ``***`` (providers echo keys back)."""
    env = environment() if environ is None else environ
    secrets = {config.api_key or ""} | {v for k, v in env.items() if _SECRET_NAME.search(k)}
    for secret in sorted((x for x in secrets if len(x) >= 6), key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


_CONNECTION_ERRORS = frozenset({"APIConnectionError", "ConnectError", "ConnectTimeout", "ClientConnectorError",
                                "ServerDisconnectedError", "RemoteProtocolError"})


def _connection_failure(exc: BaseException) -> str | None:
    """What failed, when the exception chain shows the provider could not be reached at all.

    litellm reports a refused connection as ``InternalServerError("Connection error.")``; the
    cause chain (openai ``APIConnectionError`` -> httpx/aiohttp -> ``ConnectionRefusedError``)
    tells the truth.
    """
    seen: set[int] = set()
    found = False
    detail: str | None = None
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        names = {c.__name__ for c in type(cur).__mro__}
        if names & _CONNECTION_ERRORS or isinstance(cur, ConnectionError):
            found = True
        if isinstance(cur, OSError) and (cur.strerror or str(cur)):
            detail = str(cur)
        cur = cur.__cause__ or cur.__context__
    if not found:
        return None
    return detail or "connection failed"


def map_error(exc: BaseException, config: LLMConfig) -> LLMError:
    """litellm exceptions -> a user-facing error with a kind (secrets removed)."""
    litellm = get_litellm()
    provider = config.model.split("/", 1)[0]
    text = redact_secrets(str(getattr(exc, "message", "") or exc), config)
    if len(text) > 500:
        text = text[:500] + "..."
    if isinstance(exc, litellm.AuthenticationError):
        return LLMError("auth", f"the {provider} provider rejected the API key ({text}); check the key variable "
                                "for this provider")
    if isinstance(exc, litellm.RateLimitError):
        return LLMError("rate_limit", f"the {provider} provider is rate limiting requests; try again shortly ({text})")
    if isinstance(exc, litellm.ContextWindowExceededError):
        return LLMError("context_window", f"the request is too long for {config.model} even after compacting the "
                                          f"conversation; remove attachments or start a new session ({text})")
    unreachable = _connection_failure(exc)
    if isinstance(exc, litellm.APIConnectionError) or unreachable is not None:
        where = f" at {config.api_base}" if config.api_base else ""
        detail = redact_secrets(unreachable, config) if unreachable else text
        return LLMError("connection", f"cannot reach the model provider for {config.model}{where} ({detail})")
    if isinstance(exc, litellm.BadRequestError):
        return LLMError("bad_request", f"the provider refused the request ({text})")
    if isinstance(exc, (litellm.InternalServerError, litellm.ServiceUnavailableError, litellm.APIError)):
        return LLMError("provider", f"the model provider failed ({text})")
    return LLMError("internal", f"{type(exc).__name__}: {text}")


@attrs.define
class ToolCallAcc:
    id: str = ""
    name: str = ""
    arguments: str = ""


@attrs.frozen
class StreamDelta:
    text: str = ""
    reasoning: str = ""
    """The model's thinking, when the provider streams it (litellm's ``reasoning_content``)."""
    tool_index: int | None = None
    tool_id: str | None = None
    tool_name: str | None = None
    tool_args: str = ""
    usage: UsageReport | None = None
    finish_reason: str | None = None
    counted: Counted | None = None
    """The count a request asked for (:class:`CountFirst`): its first delta, before the model's."""


def _usage_of(u: Any) -> UsageReport:
    def get(obj: Any, name: str) -> int:
        v = getattr(obj, name, None)
        if v is None and isinstance(obj, dict):
            v = obj.get(name)
        return int(v or 0)

    cache_read = get(u, "cache_read_input_tokens")
    details = getattr(u, "prompt_tokens_details", None)
    if not cache_read and details is not None:
        cache_read = get(details, "cached_tokens")
    return UsageReport(
        input_tokens=get(u, "prompt_tokens"),
        output_tokens=get(u, "completion_tokens"),
        cache_read_tokens=cache_read,
        cache_write_tokens=get(u, "cache_creation_input_tokens"),
    )


WARM_UP_REPLY = "ok"


def warm_up(config: LLMConfig) -> None:
    """Run litellm's request path once for ``config`` without reaching the provider.

    litellm's first ``acompletion`` imports and builds much of what the provider needs (the
    provider's handler, the tokenizer, the streaming wrapper): about half a second, paid by the
    user's first prompt unless done before. ``mock_response`` (litellm's own switch for this)
    answers without any network call. Blocking, with an event loop of its own: call it in a
    background thread, so the caller's loop keeps serving meanwhile. Never raises: a warm-up is
    only an optimisation.
    """
    if _host is not None:  # the host rehearses it (once per model)
        try:
            _host.warm(attrs.asdict(config))
        except Exception as e:
            log.debug("LLM warm-up in the model host for %s failed: %s", config.model, type(e).__name__)
        return
    litellm = get_litellm()
    kwargs: dict[str, Any] = {
        "model": config.model,
        "messages": [{"role": "user", "content": "warm-up"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "mock_response": WARM_UP_REPLY,
        **({"api_base": config.api_base} if config.api_base else {}),
    }

    async def run() -> None:
        response = await litellm.acompletion(**kwargs)
        async for _chunk in response:
            pass

    try:
        asyncio.run(run())
    except Exception as e:  # an unknown model, a provider quirk: the real call will say so
        log.debug("LLM warm-up for %s failed: %s", config.model, type(e).__name__)


async def stream_completion(
    config: LLMConfig, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
    count: CountFirst | None = None,
) -> AsyncIterator[StreamDelta]:
    """Stream one model response as :class:`StreamDelta` items; errors become :class:`LLMError`.

    ``count``: tokens to count first, in the same call (one round trip to the model host): the
    first delta carries them (:attr:`StreamDelta.counted`), and when their total passes
    ``count.most`` the request is not sent and nothing follows."""
    if _host is not None:
        if count is None:
            _sent()  # (what is left here: the request's encoding and one local write)
        async for delta in _host_stream(config, messages, tools, count):
            if delta.counted is not None and delta.counted.sent:
                _sent()  # the host counted what rides with the request, and sends it now
            yield delta
        return
    litellm = get_litellm()
    if count is not None:
        first = counted(litellm, count)
        yield StreamDelta(counted=first)
        if not first.sent:
            return
    kwargs: dict[str, Any] = {
        "model": config.model,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_retries": config.max_retries,
        "timeout": config.timeout,
        **config.extra,
    }
    if tools:
        kwargs["tools"] = tools
    if config.api_base:
        kwargs["api_base"] = config.api_base
    for name, value in provider_credentials(config).items():  # from memory, not os.environ
        kwargs.setdefault(name, value)
    if config.api_key:
        kwargs["api_key"] = config.api_key
    if config.max_tokens:
        kwargs["max_tokens"] = config.max_tokens
    try:
        log.debug("calling the model %s", config.model)
        response = await litellm.acompletion(**kwargs)
        _sent()
        async for chunk in response:
            usage = getattr(chunk, "usage", None)
            if usage:
                yield StreamDelta(usage=_usage_of(usage))
            for choice in getattr(chunk, "choices", None) or []:
                delta = choice.delta
                reasoning = getattr(delta, "reasoning_content", None)
                if isinstance(reasoning, str) and reasoning:
                    yield StreamDelta(reasoning=reasoning)
                content = getattr(delta, "content", None)
                if content:
                    yield StreamDelta(text=content)
                for tc in getattr(delta, "tool_calls", None) or []:
                    fn = getattr(tc, "function", None)
                    yield StreamDelta(
                        tool_index=tc.index if tc.index is not None else 0,
                        tool_id=tc.id or None,
                        tool_name=getattr(fn, "name", None) or None,
                        tool_args=getattr(fn, "arguments", None) or "",
                    )
                if choice.finish_reason:
                    yield StreamDelta(finish_reason=choice.finish_reason)
    except LLMError:
        raise
    except Exception as e:
        if type(e).__name__ == "CancelledError":
            raise
        raise map_error(e, config) from e


@attrs.frozen
class Completion:
    """One model answer, not streamed (:func:`complete`)."""

    text: str
    finish_reason: str | None = None


async def complete(config: LLMConfig, messages: list[dict[str, Any]]) -> Completion:
    """One model answer to ``messages``, not streamed (MCP sampling): ``config.max_tokens`` and
    ``config.extra`` (``temperature``, ``stop``) as given. In the model host when this process uses
    one. Loads the model library first (off the event loop); errors become :class:`LLMError`."""
    if not library_loaded():
        await asyncio.to_thread(load_library)  # seconds on first use
    if _host is not None:
        request = {"op": "complete", "config": attrs.asdict(config), "messages": messages}
        async for answer in _host_answers(request, config):
            return Completion(**answer["result"])
        raise LLMError("connection", "the model host sent no answer")
    litellm = get_litellm()
    kwargs: dict[str, Any] = {"model": config.model, "messages": messages, "max_retries": config.max_retries,
                              "timeout": config.timeout, **config.extra}
    if config.max_tokens:
        kwargs["max_tokens"] = config.max_tokens
    if config.api_base:
        kwargs["api_base"] = config.api_base
    kwargs.update(provider_credentials(config))  # from memory, not os.environ
    if config.api_key:
        kwargs["api_key"] = config.api_key
    try:
        response = await litellm.acompletion(**kwargs)
    except Exception as e:
        if type(e).__name__ == "CancelledError":
            raise
        raise map_error(e, config) from e
    return _completion_of(response)


def _completion_of(response: Any) -> Completion:
    choices = getattr(response, "choices", None) or []
    if not choices:
        return Completion("")
    choice = choices[0]
    message = getattr(choice, "message", None)
    content = getattr(message, "content", None) if message is not None else None
    if isinstance(content, list):  # some providers answer with content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return Completion(content or "", getattr(choice, "finish_reason", None))


async def _host_stream(
    config: LLMConfig, messages: list[dict[str, Any]], tools: list[dict[str, Any]], count: CountFirst | None = None,
) -> AsyncIterator[StreamDelta]:
    """:func:`stream_completion` made by the model host (the same function, in that process)."""
    request: dict[str, Any] = {"op": "stream", "config": attrs.asdict(config), "messages": messages, "tools": tools}
    if count is not None:
        request["count"] = attrs.asdict(count)
    log.debug("calling the model %s (in the model host, pid %d)", config.model, _host.pid)
    async for answer in _host_answers(request, config):
        if "delta" in answer:
            yield delta_of(answer["delta"])


def delta_of(wire: dict[str, Any]) -> StreamDelta:
    """The :class:`StreamDelta` of its JSON (:func:`agent_ls.agent.model_host_server.delta_wire`)."""
    usage = wire.pop("usage", None)
    first = wire.pop("counted", None)
    return StreamDelta(**wire, usage=UsageReport(**usage) if usage is not None else None,
                       counted=Counted(**first) if first is not None else None)


async def _host_answers(request: dict[str, Any], config: LLMConfig) -> AsyncIterator[dict[str, Any]]:
    """The model host's answer lines to ``request``, an error line raised as :class:`LLMError`. A host
    that is gone before the request reached it (killed, or ended) is started again, once."""
    host = _host
    for attempt in (0, 1):
        started = False
        try:
            async for answer in host.request(request):
                started = True
                if "error" in answer:
                    # masked again with this process's environment: the host masked it with its own
                    raise LLMError(answer["error"]["kind"], redact_secrets(answer["error"]["message"], config))
                yield answer
            return
        except OSError as e:
            if started or attempt:
                raise LLMError("connection", f"the model host (pid {host.pid}) failed: {e}") from e
            log.warning("the model host (pid %d) is gone (%s): starting another", host.pid, e)
            host = await asyncio.to_thread(_reattach, host)


def _reattach(gone: Any) -> Any:
    """The model host again after ``gone`` went away (started when none answers)."""
    global _host

    with _loading:
        if _host is gone:
            gone.close()
            try:
                _host = model_host.attach(environment())
            except model_host.HostUnavailable as e:
                raise LLMError("connection", f"the model host could not be started again: {e}") from e
    return _host
