"""Keep secrets (env values, header values, tokens) out of logs, status and errors.

Logs: :class:`RedactingFilter` on a handler masks, in every record of every logger at every
level, each value registered with :func:`add_secrets` (configured server secrets and tokens)
and the value of any URL query parameter whose name looks secret (``?access_token=...``),
registered or not.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import threading
from collections.abc import Iterable, Mapping
from urllib.parse import quote, quote_plus, unquote

MASK = "***"
_SECRET_KEY = re.compile(r"(key|token|secret|passw|auth|cookie|credential|session|bearer)", re.I)


def redact(text: str, secrets: Iterable[str]) -> str:
    """Replace every occurrence of each secret value (longest first) with ``***``."""
    for s in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        text = text.replace(s, MASK)
    return text


def redact_mapping(values: Mapping[str, str], *, all_values: bool = True) -> dict[str, str]:
    """A copy safe to show: every value masked (env, headers), or only secret-looking keys."""
    out: dict[str, str] = {}
    for k, v in values.items():
        out[k] = MASK if (all_values or _SECRET_KEY.search(k)) and v else v
    return out


# Secrets registered at run time: configured ones (the values of env, headers and variables
# expanded into args and URLs of every MCP server entry, registered by the MCP manager when it
# applies settings) and learned ones (OAuth access/refresh tokens, authorization codes, client
# secrets from registrations) ------------------------------------------------------------------

_live_secrets: set[str] = set()
_lock = threading.Lock()
_pattern: re.Pattern[str] | None = None
"""One alternation of every registered secret and its encodings, longest first."""

# The ``safe`` sets of the quoting a URL may have gone through before it is logged: none (a
# form or component), a path, and the characters httpx and RFC 3986 leave as they are.
_QUOTE_SAFE = ("", "/", "!$&'()*+,;=:@/?", "!$'()*+,;:@/?-._~")


def _encodings(value: str) -> set[str]:
    """``value`` as it may appear in a log line: as is, percent-encoded, JSON-escaped."""
    out = {value}
    for safe in _QUOTE_SAFE:
        out.add(quote(value, safe=safe))
        out.add(quote_plus(value, safe=safe))
    out.add(json.dumps(value)[1:-1])
    out.add(json.dumps(value, ensure_ascii=False)[1:-1])
    return {v for v in out if len(v) >= 4}


def add_secrets(*values: str | None) -> None:
    """Register values that must be masked in every log record and error from now on.

    Call it with a server entry's configured secrets (``add_secrets(*config.secrets)``; the MCP
    manager does so for every server when it applies settings) and with tokens as they are
    learned. ``None``, empty and values shorter than 4 characters are ignored (masking those
    would mangle every message). Percent-encoded and JSON-escaped forms are masked too.
    """
    global _pattern
    fresh = [v for v in values if v and len(v) >= 4 and v not in _live_secrets]
    if not fresh:
        return
    with _lock:
        _live_secrets.update(fresh)
        variants = set().union(*(_encodings(v) for v in _live_secrets))
        _pattern = re.compile("|".join(re.escape(v) for v in sorted(variants, key=len, reverse=True)))


def live_secrets() -> tuple[str, ...]:
    return tuple(_live_secrets)


def redact_live(text: str, extra: Iterable[str] = ()) -> str:
    """``redact`` with the run-time secrets (tokens, configured values) plus ``extra``."""
    return redact(text, [*_live_secrets, *extra])


# Query parameters whose names look secret ------------------------------------------------------

# Names containing one of these anywhere (``access_token``, ``X-Amz-Signature``, ``apikey``).
_SECRET_NAME_PARTS = re.compile(
    r"token|secret|passw|passphrase|signature|credential|apikey|api_key|api-key|session|authoriz|bearer|"
    r"cookie",
    re.IGNORECASE,
)
# Names with one of these as a whole word (``key``, ``client_key``, ``sig``, ``auth``, ``code``).
_SECRET_NAME_WORDS = frozenset(
    {"key", "keys", "auth", "sig", "sign", "code", "pass", "pwd", "pw", "jwt", "otp", "sid", "hmac", "nonce", "ticket"}
)
_WORD_SPLIT = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")
# ``?name=value`` or ``&name=value`` (also ``;``): the value runs to the next separator, space,
# quote or bracket.
_QUERY_PARAM = re.compile(r"(?P<lead>[?&;](?P<name>[^=&;#?\s\"'<>]{1,100})=)(?P<value>[^&;#\s\"'<>]+)")


def secret_looking_name(name: str) -> bool:
    """Whether a query parameter (or header, variable) name suggests its value is a secret."""
    name = unquote(name)
    if _SECRET_NAME_PARTS.search(name):
        return True
    return any(word.lower() in _SECRET_NAME_WORDS for word in _WORD_SPLIT.split(name) if word)


def secret_env_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a secret (``OPENAI_API_KEY``,
    ``GITHUB_TOKEN``, ``DB_PASSWORD``, ``AWS_SECRET_ACCESS_KEY``, ``SSH_AUTH_SOCK``, ...): the
    names whose values :func:`redact_mapping` masks, and the secret-looking names of
    :func:`secret_looking_name`."""
    return bool(_SECRET_KEY.search(name)) or secret_looking_name(name)


def redact_query_params(text: str) -> str:
    """Mask the values of URL query parameters whose names look secret (``access_token``,
    ``key``, ``sig``, ``code``, ``password``, ...), wherever a ``?name=value`` or
    ``&name=value`` appears in ``text``; other parameters are kept."""
    if "=" not in text:
        return text

    def mask(m: re.Match[str]) -> str:
        if m.group("value") == MASK or not secret_looking_name(m.group("name")):
            return m.group(0)
        return m.group("lead") + MASK

    return _QUERY_PARAM.sub(mask, text)


def redact_for_log(text: str) -> str:
    """What a log line may show: registered secrets (and their encodings) and the values of
    secret-looking query parameters masked."""
    pattern = _pattern
    if pattern is not None:
        text = pattern.sub(MASK, text)
    return redact_query_params(text)


class RedactingFilter(logging.Filter):
    """A logging filter that masks secrets in the message, the traceback and the stack.

    Masked: every value registered with :func:`add_secrets` (by value, in any encoding
    :func:`add_secrets` lists), and the values of URL query parameters with secret-looking
    names even when never registered. Attach it to a handler: it then sees the records of
    every logger that reach that handler, at every level. ``install_log_redaction`` also puts
    it on the root logger's handlers and on the loggers known to carry tokens.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken record: leave it to the handler's own error path
            return True
        masked = redact_for_log(message)
        if masked != message:
            record.msg = masked
            record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact_for_log(record.exc_text)
        if record.stack_info:
            record.stack_info = redact_for_log(record.stack_info)
        return True


# Loggers that see OAuth traffic (token requests, registrations, redirects).
REDACTED_LOGGERS = (
    "mcp.client.auth",
    "mcp.client.auth.oauth2",
    "mcp.client.auth.utils",
    "mcp.client.auth.extensions.client_credentials",
    "mcp.client.auth.extensions.identity_assertion",
    "mcp.client.streamable_http",
    "mcp.client.sse",
    "mcp.shared._httpx_utils",
    "httpx2",
    "httpx",
    "httpcore",
    "agent_ls.mcp.oauth.session",
    "agent_ls.mcp.oauth.record",
    "agent_ls.mcp.oauth.redirect",
    "agent_ls.mcp.oauth.store",
    "agent_ls.mcp.connection.connection",
    "agent_ls.mcp.connection.client_handlers",
    "agent_ls.mcp.connection.eras",
    "agent_ls.mcp.manager",
    "agent_ls.mcp.sign_in",
    "agent_ls.mcp.trust_decisions",
)
_FILTER = RedactingFilter()


def install_log_redaction() -> RedactingFilter:
    """Attach the redacting filter where records may leave the process (idempotent).

    To every handler the root logger has now and to :data:`logging.lastResort` (so records of
    any logger that propagate to the root are masked, e.g. with ``logging.basicConfig``), and
    to every logger in ``REDACTED_LOGGERS`` (for handlers attached to those loggers directly).
    Handlers added later need their own ``addFilter(RedactingFilter())``.
    """
    handlers = [*logging.getLogger().handlers]
    if logging.lastResort is not None:
        handlers.append(logging.lastResort)
    for handler in handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(_FILTER)
    for name in REDACTED_LOGGERS:
        lg = logging.getLogger(name)
        if _FILTER not in lg.filters:
            lg.addFilter(_FILTER)
    return _FILTER


def log_to_stderr(level: str) -> None:
    """Log records of ``level`` (a name: ``INFO``; unknown: ``WARNING``) and above to stderr,
    secrets masked (:func:`install_log_redaction`): every command and both language server
    entry points (stdout may be the protocol's channel)."""
    logging.basicConfig(level=getattr(logging, level.upper(), logging.WARNING), stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    install_log_redaction()
