"""Keep secrets (env values, header values, tokens) out of logs, status and errors."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping

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


# Secrets learned at run time (OAuth access/refresh tokens, authorization codes, client
# secrets from registrations) ---------------------------------------------------------------

_live_secrets: set[str] = set()


def add_secrets(*values: str | None) -> None:
    """Remember values that must be masked in every log record and error from now on."""
    for v in values:
        if v and len(v) >= 4:
            _live_secrets.add(v)


def live_secrets() -> tuple[str, ...]:
    return tuple(_live_secrets)


def redact_live(text: str, extra: Iterable[str] = ()) -> str:
    """``redact`` with the run-time secrets (tokens) plus ``extra``."""
    return redact(text, [*_live_secrets, *extra])


class RedactingFilter(logging.Filter):
    """A logging filter that masks run-time secrets (tokens) in the message and traceback.

    Attach it to a handler (it then sees every record) or to the loggers that may carry
    tokens (``install_log_redaction`` does the latter for the OAuth and HTTP loggers).
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if not _live_secrets:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a broken record: leave it to the handler's own error path
            return True
        masked = redact_live(message)
        if masked != message:
            record.msg = masked
            record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact_live(record.exc_text)
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
    "agent_ls.mcp.oauth",
    "agent_ls.mcp.oauth_store",
    "agent_ls.mcp.connection",
    "agent_ls.mcp.manager",
)
_FILTER = RedactingFilter()


def install_log_redaction() -> RedactingFilter:
    """Attach the redacting filter to every logger in ``REDACTED_LOGGERS`` (idempotent)."""
    for name in REDACTED_LOGGERS:
        lg = logging.getLogger(name)
        if _FILTER not in lg.filters:
            lg.addFilter(_FILTER)
    return _FILTER
