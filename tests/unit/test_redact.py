"""Secrets out of logs: registered values and secret-looking query parameters, at every level,
from any logger whose records reach a handler with :class:`RedactingFilter`."""

from __future__ import annotations

import io
import json
import logging
import uuid
from collections.abc import Iterator
from urllib.parse import quote, quote_plus

import pytest

from agent_ls.core.redact import (
    MASK,
    RedactingFilter,
    add_secrets,
    install_log_redaction,
    redact_for_log,
    redact_query_params,
    secret_looking_name,
)


def fresh_secret() -> str:
    return f"sec-{uuid.uuid4().hex}"


@pytest.fixture
def capture() -> Iterator[tuple[io.StringIO, logging.Handler]]:
    """A handler with the filter, writing to a buffer, as the CLI and the server set it up."""
    buf = io.StringIO()
    handler = logging.StreamHandler(buf)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter())
    yield buf, handler


def logger_for(name: str, handler: logging.Handler) -> Iterator[logging.Logger]:
    lg = logging.getLogger(name)
    old = (lg.level, lg.propagate)
    lg.setLevel(logging.DEBUG)
    lg.propagate = False
    lg.addHandler(handler)
    try:
        yield lg
    finally:
        lg.removeHandler(handler)
        lg.setLevel(old[0])
        lg.propagate = old[1]


@pytest.mark.parametrize("name", ["httpx", "mcp.client.streamable_http", "some.other.library", "agent_ls.x"])
def test_registered_value_is_masked_at_debug_and_info_on_any_logger(capture, name: str) -> None:
    buf, handler = capture
    secret = fresh_secret()
    add_secrets(secret)
    url = f"http://127.0.0.1:18912/mcp?t={secret}&page=2"
    for lg in logger_for(name, handler):
        lg.debug("Connecting to StreamableHTTP endpoint: %s", url)
        lg.info('HTTP Request: POST %s "HTTP/1.1 200 OK"', url)
        lg.warning("plain %s", secret)
    out = buf.getvalue()
    assert secret not in out
    assert out.count(f"?t={MASK}&page=2") == 2 and f"plain {MASK}" in out
    assert out.splitlines()[0].startswith(f"DEBUG {name}:") and out.splitlines()[1].startswith(f"INFO {name}:")


def test_encoded_forms_of_a_registered_value_are_masked(capture) -> None:
    buf, handler = capture
    secret = "p@ss w/rd+" + uuid.uuid4().hex[:8] + '"\\'
    add_secrets(secret)
    forms = [secret, quote(secret, safe=""), quote(secret), quote_plus(secret), quote(secret, safe="!$&'()*+,;=:@/?")]
    for lg in logger_for("httpx", handler):
        for form in forms:
            lg.info("HTTP Request: GET http://h/mcp?t=%s", form)
        lg.debug("payload %s", json.dumps({"auth": secret}))
    out = buf.getvalue()
    for form in forms:
        assert form not in out, form
    assert out.count(MASK) == len(forms) + 1


def test_secret_looking_query_parameters_are_masked_without_registration(capture) -> None:
    buf, handler = capture
    for lg in logger_for("httpx", handler):
        lg.info("HTTP Request: GET https://api.example.com/v1/items?access_token=abc123&page=2")
    logged = buf.getvalue()
    # (once litellm is imported in the process, its own filter on httpx may mask the pair first)
    assert "abc123" not in logged and logged.strip().endswith("&page=2")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://h/x?access_token=abc123&page=2", f"https://h/x?access_token={MASK}&page=2"),
        ("https://h/x?page=2&api_key=k-1", f"https://h/x?page=2&api_key={MASK}"),
        ("https://h/cb?code=4/0Adeu&state=xyz", f"https://h/cb?code={MASK}&state=xyz"),
        ("GET /s3?X-Amz-Credential=AK%2F1&X-Amz-Signature=deadbeef&X-Amz-Expires=60",
         f"GET /s3?X-Amz-Credential={MASK}&X-Amz-Signature={MASK}&X-Amz-Expires=60"),
        ("u?sig=abc#frag", f"u?sig={MASK}#frag"),
        ("u?password=hunter2 and more", f"u?password={MASK} and more"),
        ('{"url": "http://h/?key=v1"}', f'{{"url": "http://h/?key={MASK}"}}'),
        ("u?authToken=x&clientSecret=y&refresh_token=z",
         f"u?authToken={MASK}&clientSecret={MASK}&refresh_token={MASK}"),
        ("u?page=2&sort=name&q=token", "u?page=2&sort=name&q=token"),  # names decide, not values
        ("u?author=alice&keyword=x&design=1", "u?author=alice&keyword=x&design=1"),
        ("a=b token=c", "a=b token=c"),  # not a query parameter
        (f"u?token={MASK}", f"u?token={MASK}"),
    ],
)
def test_redact_query_params(text: str, expected: str) -> None:
    assert redact_query_params(text) == expected


def test_secret_looking_names() -> None:
    for name in ["access_token", "token", "apikey", "api-key", "X-Api-Key", "key", "client_secret", "password",
                 "passwd", "sig", "signature", "code", "auth", "Authorization", "sessionId", "access%5Ftoken"]:
        assert secret_looking_name(name), name
    for name in ["page", "limit", "q", "sort", "author", "keyword", "design", "state", "redirect_uri", "t"]:
        assert not secret_looking_name(name), name


def test_exception_text_and_stack_are_masked(capture) -> None:
    buf, handler = capture
    secret = fresh_secret()
    add_secrets(secret)
    for lg in logger_for("mcp.client.sse", handler):
        try:
            raise ConnectionError(f"refused http://h/mcp?t={secret} and http://h/?access_token=zzz999")
        except ConnectionError:
            lg.debug("failed", exc_info=True, stack_info=True)
    out = buf.getvalue()
    assert "Traceback" in out and "ConnectionError" in out
    assert secret not in out and "zzz999" not in out
    assert f"?t={MASK}" in out and f"?access_token={MASK}" in out


def test_records_without_secrets_are_left_alone() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "value %d at %s", (3, "http://h/?page=2"), None)
    assert RedactingFilter().filter(record)
    assert record.args == (3, "http://h/?page=2") and record.getMessage() == "value 3 at http://h/?page=2"


def test_short_values_are_not_registered() -> None:
    add_secrets(None, "", "abc")
    assert redact_for_log("abc and a") == "abc and a"


def test_install_log_redaction_covers_the_root_handlers_and_last_resort() -> None:
    buf = io.StringIO()
    handler = logging.StreamHandler(buf)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        install_log_redaction()
        install_log_redaction()  # idempotent
        assert sum(isinstance(f, RedactingFilter) for f in handler.filters) == 1
        assert logging.lastResort is not None
        assert any(isinstance(f, RedactingFilter) for f in logging.lastResort.filters)
        secret = fresh_secret()
        add_secrets(secret)
        lg = logging.getLogger("unlisted.library.for.test")
        old = lg.level
        lg.setLevel(logging.DEBUG)
        try:
            lg.debug("GET http://h/?x=%s", secret)
        finally:
            lg.setLevel(old)
        assert secret not in buf.getvalue() and f"?x={MASK}" in buf.getvalue()
    finally:
        root.removeHandler(handler)
