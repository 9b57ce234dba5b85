"""The person in the loop of a sign-in: how the authorization page reaches the user (the
openers) and the loopback listener on 127.0.0.1 that receives the redirect back.

The port is random on the first sign-in; later sign-ins reuse the registered port when it is
free (:meth:`agent_ls.mcp.oauth.session.OAuthSession.httpx_auth`). The listener answers the browser
with a small page and hands ``code``/``state`` (or the error) to the waiting flow.

Any local page (or process) can send a request to the listener. So the ``state`` of the
authorization request is checked first, before any other parameter is looked at: a redirect
without it, or with another, is answered 400 and ignored (the sign-in keeps waiting); an
``?error=`` without the right state cannot abort a sign-in (issue 25).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import html
import logging
import socket
import webbrowser
from typing import Protocol
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import AuthorizationCodeResult

from agent_ls.core.redact import add_secrets
from agent_ls.mcp.oauth.state import SignInDenied, SignInError, SignInTimeout

log = logging.getLogger(__name__)

CALLBACK_PATH = "/callback"
LOOPBACK_HOST = "127.0.0.1"


class AuthOpener(Protocol):
    async def __call__(self, server: str, url: str) -> None:
        """Show ``url`` (the authorization page for ``server``) to the user."""
        ...


# Openers -------------------------------------------------------------------------------------

def open_in_gui_browser(url: str) -> bool:
    """Open ``url`` in a graphical browser; never in a console browser, which would take
    over the terminal (or the language server's stdio). Returns whether one was started."""
    try:
        browser = webbrowser.get()
    except webbrowser.Error:
        return False
    if isinstance(browser, webbrowser.GenericBrowser) and not isinstance(browser, webbrowser.BackgroundBrowser):
        return False  # www-browser, lynx, w3m...: foreground console browsers
    if isinstance(browser, webbrowser.UnixBrowser) and not getattr(browser, "background", True):
        return False
    try:
        return bool(browser.open(url))
    except Exception:
        return False


async def default_opener(server: str, url: str) -> None:
    """Used when the host has no opener: log the URL and try a graphical browser."""
    log.warning("MCP server %s: open this URL to sign in: %s", server, url)
    await asyncio.to_thread(open_in_gui_browser, url)


async def headless_opener(server: str, url: str) -> None:
    """Complete an authorization without a person: GET the authorization URL, and follow the
    authorization server's redirect to the loopback listener (GET it). Works with servers that
    approve without a login page (the conformance suite's, the tests'); anything else fails
    with the page's status."""
    async with create_mcp_http_client(timeout=httpx2.Timeout(15.0)) as http:
        resp = await http.get(url, follow_redirects=False)
        location = resp.headers.get("location")
        if resp.status_code not in (301, 302, 303, 307, 308) or not location:
            body = resp.text[:300].strip()
            raise SignInError(
                f"the authorization page answered HTTP {resp.status_code} instead of redirecting back"
                + (f": {body}" if body else "")
            )
        target = urlsplit(location)
        if target.hostname not in (LOOPBACK_HOST, "localhost", "::1"):
            raise SignInError(f"the authorization server redirected to {target.scheme}://{target.netloc}, "
                              "not to the loopback listener")
        await http.get(location, follow_redirects=False)


# Loopback redirect listener ------------------------------------------------------------------

def free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK_HOST, 0))
        return int(s.getsockname()[1])


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((LOOPBACK_HOST, port))
        except OSError:
            return False
    return True


def state_of(authorization_url: str) -> str:
    """The ``state`` parameter of an authorization request URL ("" when it has none: then no
    redirect is accepted)."""
    values = parse_qs(urlsplit(authorization_url).query).get("state")
    return values[0] if values else ""


def redirect_uri_for(port: int) -> str:
    return f"http://{LOOPBACK_HOST}:{port}{CALLBACK_PATH}"


def _page(title: str, text: str) -> bytes:
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>agent-ls</title></head>"
        f"<body style='font-family:sans-serif;margin:3em'><h2>{html.escape(title)}</h2>"
        f"<p>{html.escape(text)}</p></body></html>"
    ).encode()


class LoopbackListener:
    """A one-shot HTTP listener on 127.0.0.1 for the authorization redirect.

    ``state`` is the ``state`` parameter of the authorization request (see
    :func:`state_of`): only a redirect carrying it is looked at.
    """

    def __init__(self, server: str, port: int, state: str) -> None:
        self.server_name = server
        self.port = port
        self.state = state
        self._server: asyncio.AbstractServer | None = None
        self._result: asyncio.Future[AuthorizationCodeResult] | None = None

    @property
    def redirect_uri(self) -> str:
        return redirect_uri_for(self.port)

    async def start(self) -> None:
        self._result = asyncio.get_running_loop().create_future()
        try:
            self._server = await asyncio.start_server(self._handle, LOOPBACK_HOST, self.port, reuse_address=True)
        except OSError as e:
            raise SignInError(
                f"cannot listen on {LOOPBACK_HOST}:{self.port} for the sign-in redirect: {e.strerror or e}"
            ) from e

    async def wait(self, timeout: float) -> AuthorizationCodeResult:
        assert self._result is not None
        try:
            return await asyncio.wait_for(asyncio.shield(self._result), timeout)
        except TimeoutError:
            raise SignInTimeout(
                f"sign-in to '{self.server_name}' was not completed within {timeout:g}s "
                "(oauth.signInTimeout); sign in again to retry"
            ) from None

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
            self._server = None
        if self._result is not None and not self._result.done():
            self._result.cancel()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        status, body = "404 Not Found", _page("Not found", "This is agent-ls's sign-in listener.")
        try:
            line = await asyncio.wait_for(reader.readline(), 10)
            for _ in range(200):  # headers: ignored, but read so the client sees an answer
                h = await asyncio.wait_for(reader.readline(), 10)
                if h in (b"\r\n", b"\n", b""):
                    break
            parts = line.decode("latin-1").split(" ")
            if len(parts) >= 2 and parts[0] in ("GET", "POST"):
                target = urlsplit(parts[1])
                if target.path == CALLBACK_PATH:
                    status, body = self._callback(parse_qs(target.query))
        except (TimeoutError, ConnectionError, UnicodeError):
            return
        try:
            head = (f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
                    f"Content-Length: {len(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n")
            writer.write(head.encode() + body)
            await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def _callback(self, params: dict[str, list[str]]) -> tuple[str, bytes]:
        def one(key: str) -> str | None:
            values = params.get(key)
            return values[0] if values else None

        fut = self._result
        if fut is None or fut.done():
            return "409 Conflict", _page("Already done", "This sign-in has already finished; close this tab.")
        # First the state, before any other parameter is used: a redirect that is not the answer
        # to this sign-in's request (any local page can send one) changes nothing.
        got = one("state")
        if not self.state or got is None or not hmac.compare_digest(got.encode(), self.state.encode()):
            log.warning("MCP server %s: ignored a sign-in redirect whose state does not match", self.server_name)
            return "400 Bad Request", _page(
                "Not this sign-in", "This redirect does not carry the state of the sign-in in progress; it was ignored.")
        error = one("error")
        if error:
            desc = one("error_description") or ""
            fut.set_exception(SignInDenied(
                f"the authorization server answered {error}" + (f": {desc}" if desc else "")))
            return "200 OK", _page("Sign-in failed", f"{error}: {desc}".strip(": ") + ". You can close this tab.")
        code = one("code")
        if not code:
            return "400 Bad Request", _page("Sign-in failed", "The redirect carried no authorization code.")
        add_secrets(code)
        fut.set_result(AuthorizationCodeResult(code=code, state=one("state"), iss=one("iss")))
        return "200 OK", _page(f"Signed in to {self.server_name}",
                               "agent-ls has the authorization. You can close this tab.")

