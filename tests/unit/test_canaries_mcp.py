"""Canaries for the private hooks agent-ls keeps into the mcp SDK: the stdio server process, private
modules and helpers, the OAuth providers' overridden methods and state, and a result without
resultType. See test_canaries.py for what a canary is and docs/architecture-hooks.md for the
hooks."""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import importlib.metadata
import inspect
import os
import sys

import pytest

from tests.unit.canary_helpers import code_names, expect_signature, fail

# --- mcp: the stdio server process (agent_ls/mcp/connection/transports.py) -----------------------------------

STDIO_WHERE = "agent_ls/mcp/connection/transports.py (_process_of)"


def test_stdio_client_keeps_the_process_in_a_local_named_process() -> None:
    from mcp.client.stdio import stdio_client

    hook = "the stdio server process read from stdio_client's generator frame"
    expect_signature(hook, STDIO_WHERE, stdio_client, ["server", "errlog"])
    inner = getattr(stdio_client, "__wrapped__", None)
    if inner is None or not inspect.isasyncgenfunction(inner):
        fail(hook, STDIO_WHERE, "stdio_client is no longer an @asynccontextmanager over an async generator")
    code = inner.__code__
    if "process" not in code.co_varnames + code.co_cellvars:
        fail(hook, STDIO_WHERE, "stdio_client's generator has no local variable named 'process' any more")


async def test_process_of_finds_the_live_stdio_process() -> None:
    """The hook itself, end to end: spawn a process through the SDK and read it back."""
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from agent_ls.mcp.connection.transports import _process_of

    hook = "the stdio server process read from stdio_client's generator frame"
    params_ = StdioServerParameters(command=sys.executable, args=["-c", "import sys; sys.stdin.read()"])
    with open(os.devnull, "w") as errlog:
        cm = stdio_client(params_, errlog=errlog)
        await cm.__aenter__()
        try:
            proc = _process_of(cm)
            if proc is None:
                fail(hook, STDIO_WHERE, "_process_of(stdio_client(...)) found no process (frame layout changed)")
            for attr in ("pid", "returncode"):
                if not hasattr(proc, attr):
                    fail(hook, STDIO_WHERE, f"the process object has no '{attr}' (transports.py reads it)")
            assert isinstance(proc.pid, int) and proc.returncode is None
        finally:
            with contextlib.suppress(Exception):
                await cm.__aexit__(None, None, None)


# --- mcp: private modules and helpers --------------------------------------------------------------

def test_private_http_client_factory() -> None:
    hook = "mcp.shared._httpx_utils.create_mcp_http_client"
    where = ("agent_ls/mcp/connection/transports.py (http_transport), agent_ls/mcp/oauth/session.py, agent_ls/mcp/oauth/redirect.py, "
             "agent_ls/mcp/oauth/providers.py")
    try:
        module = importlib.import_module("mcp.shared._httpx_utils")
    except ImportError as e:
        fail(hook, where, f"the private module is gone ({e})")
        return
    expect_signature(hook, where, getattr(module, "create_mcp_http_client", None), ["headers", "timeout", "auth"])


def test_auth_utils_helpers() -> None:
    from mcp.client.auth import utils

    where = "agent_ls/mcp/oauth/session.py, agent_ls/mcp/oauth/providers.py, agent_ls/mcp/oauth/wif.py"
    expect_signature("mcp.client.auth.utils.extract_field_from_www_auth", where,
                     getattr(utils, "extract_field_from_www_auth", None), ["response", "field_name"])
    expect_signature("mcp.client.auth.utils.extract_scope_from_www_auth", where,
                     getattr(utils, "extract_scope_from_www_auth", None), ["response"])
    expect_signature("mcp.client.auth.utils.issuers_match", where, getattr(utils, "issuers_match", None), ["a", "b"])


def test_dropped_tool_log_line() -> None:
    """listing.py's _LeftOutTools filter reads the SDK's log line about a dropped tool."""
    import mcp.client.session as session

    hook = "the 'dropping tool' log line of the 'client' logger"
    where = "agent_ls/mcp/connection/listing.py (_LeftOutTools)"
    logger = getattr(session, "logger", None)
    if logger is None or logger.name != "client":
        fail(hook, where, f"mcp.client.session logs to {getattr(logger, 'name', None)!r}, not 'client'")
    if 'logger.warning("dropping tool ' not in inspect.getsource(session):
        fail(hook, where, "mcp.client.session no longer logs 'dropping tool ...' for a tool it leaves out")


def test_client_session_discover_result() -> None:
    from mcp.client.session import ClientSession

    hook = "ClientSession.discover_result"
    where = "agent_ls/mcp/connection/eras.py (remember_era)"
    if not isinstance(inspect.getattr_static(ClientSession, "discover_result", None), property):
        fail(hook, where, "ClientSession.discover_result is no longer a property")


# --- mcp: the OAuth providers (agent_ls/mcp/oauth/providers.py, oauth_wif.py) ----------------------

OAUTH_WHERE = "agent_ls/mcp/oauth/providers.py (_HostFlow, _StoredState)"


def test_redirect_aware_auth_drives_auth_flow() -> None:
    from mcp.shared._httpx_utils import RedirectAwareAuth

    hook = "_HostFlow._auth_flow overrides the SDK's _auth_flow"
    expect_signature(hook, OAUTH_WHERE, getattr(RedirectAwareAuth, "_auth_flow", None), ["self", "request"])
    expect_signature(hook, OAUTH_WHERE, getattr(RedirectAwareAuth, "async_auth_flow", None), ["self", "request"],
                     kind="asyncgen")
    if "_auth_flow" not in code_names(RedirectAwareAuth.async_auth_flow):
        fail(hook, OAUTH_WHERE, "RedirectAwareAuth.async_auth_flow no longer drives self._auth_flow")


def _oauth_providers() -> list[type]:
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.auth.extensions.client_credentials import (
        ClientCredentialsOAuthProvider,
        PrivateKeyJWTOAuthProvider,
    )

    return [OAuthClientProvider, ClientCredentialsOAuthProvider, PrivateKeyJWTOAuthProvider]


# The SDK methods _StoredState and _HostFlow override (and call through super()).
STORED_STATE_OVERRIDES = {
    "_auth_flow": (["self", "request"], "asyncgen"),
    "_initialize": (["self"], "coroutine"),
    "_refresh_token": (["self"], "coroutine"),
    "_handle_refresh_response": (["self", "response"], "coroutine"),
    "_handle_token_response": (["self", "response"], "coroutine"),
}


@pytest.mark.parametrize("method", sorted(STORED_STATE_OVERRIDES))
def test_oauth_provider_overridden_methods(method: str) -> None:
    expected, kind = STORED_STATE_OVERRIDES[method]
    for cls in _oauth_providers():
        expect_signature(f"override of {cls.__name__}.{method}", OAUTH_WHERE, getattr(cls, method, None),
                         expected, kind=kind)


def test_oauth_provider_state_attributes() -> None:
    from mcp.client.auth import OAuthClientProvider

    hook = "provider.context / provider._initialized"
    names = code_names(OAuthClientProvider.__init__)
    for attr in ("context", "_initialized"):
        if attr not in names:
            fail(hook, OAUTH_WHERE, f"OAuthClientProvider.__init__ no longer sets self.{attr}")


def test_oauth_context_fields_and_methods() -> None:
    from mcp.client.auth.oauth2 import OAuthContext

    hook = "OAuthContext fields read and written by the token store"
    where = ("agent_ls/mcp/oauth/record.py (TokenRecord.restore_context, adopt_newer, ...), "
             "agent_ls/mcp/oauth/providers.py (_HostFlow._refresh_first), agent_ls/mcp/oauth/wif.py")
    fields = {f.name for f in dataclasses.fields(OAuthContext)} if dataclasses.is_dataclass(OAuthContext) else set()
    wanted = {"server_url", "client_metadata", "storage", "protected_resource_metadata", "oauth_metadata",
              "auth_server_url", "protocol_version", "client_info", "current_tokens", "token_expiry_time"}
    if missing := sorted(wanted - fields):
        fail(hook, where, f"OAuthContext has no field(s) {missing}")
    for name, expected in (("is_token_valid", ["self"]), ("clear_tokens", ["self"]),
                           ("prepare_token_auth", ["self", "data", "headers"]),
                           ("should_include_resource_param", ["self", "protocol_version"]),
                           ("get_resource_url", ["self"])):
        expect_signature(f"OAuthContext.{name}", where, getattr(OAuthContext, name, None), expected)


def test_sdk_provider_constructors() -> None:
    """oauth_providers.py builds the SDK providers with these arguments (oauth_wif.py calls the base
    constructor positionally)."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.auth.extensions.client_credentials import (
        ClientCredentialsOAuthProvider,
        PrivateKeyJWTOAuthProvider,
    )
    from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider

    where = ("agent_ls/mcp/oauth/providers.py (authorization_code_provider, machine_provider), "
             "agent_ls/mcp/oauth/wif.py")
    expected = {
        OAuthClientProvider: ["self", "server_url", "client_metadata", "storage", "redirect_handler",
                              "callback_handler", "client_metadata_url", "validate_resource_url"],
        ClientCredentialsOAuthProvider: ["self", "server_url", "storage", "client_id", "client_secret",
                                         "token_endpoint_auth_method", "scope", "issuer"],
        PrivateKeyJWTOAuthProvider: ["self", "server_url", "storage", "client_id", "assertion_provider", "scope",
                                     "issuer"],
        IdentityAssertionOAuthProvider: ["self", "server_url", "storage", "client_id", "client_secret", "issuer",
                                         "assertion_provider", "scope", "token_endpoint_auth_method"],
    }
    for cls, names in expected.items():
        expect_signature(f"{cls.__name__}.__init__", where, cls.__init__, names)


def test_identity_assertion_flow() -> None:
    from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider

    expect_signature("override of IdentityAssertionOAuthProvider._auth_flow", OAUTH_WHERE,
                     getattr(IdentityAssertionOAuthProvider, "_auth_flow", None), ["self", "request"], kind="asyncgen")


def test_jwt_bearer_provider_hooks() -> None:
    from mcp.client.auth import OAuthClientProvider

    where = "agent_ls/mcp/oauth/wif.py (JWTBearerOAuthProvider)"
    for name, expected, kind in (("_initialize", ["self"], "coroutine"),
                                 ("_perform_authorization", ["self"], "coroutine"),
                                 ("_select_authorization_server", ["self", "advertised"], "function"),
                                 ("_get_token_endpoint", ["self"], "function")):
        expect_signature(f"OAuthClientProvider.{name}", where, getattr(OAuthClientProvider, name, None), expected,
                         kind=kind)
    # _select_authorization_server is only a hook while the flow still calls it.
    if "_select_authorization_server" not in inspect.getsource(OAuthClientProvider):
        fail("OAuthClientProvider._select_authorization_server", where, "the flow no longer calls it")


# --- mcp: a result without resultType (agent_ls/mcp/result_kind.py) -------------------------------

def test_the_sdk_still_rejects_a_result_without_result_type() -> None:
    """agent_ls/mcp/result_kind.py fills in ``resultType: complete`` because the SDK requires the
    field of a 2026-07-28 result although the spec reads its absence as complete. When this
    canary fails, the SDK accepts such a result itself: remove result_kind.py and this canary."""
    from mcp_types import methods
    from pydantic import ValidationError

    try:
        methods.validate_server_result("tools/call", "2026-07-28", {"content": []})
    except ValidationError:
        return
    fail("result_kind (results_read_as_complete)", "agent_ls/mcp/result_kind.py",
         "the SDK now accepts a 2026-07-28 result without resultType: the workaround is no longer needed")


# --- mcp: a 2025-11-25 CreateTaskResult of tools/call (agent_ls/mcp/legacy_tasks.py) -----------------

def test_the_sdk_still_rejects_a_legacy_create_task_result() -> None:
    """agent_ls/mcp/legacy_tasks.py gives a legacy ``CreateTaskResult`` (``{"task": {...}}``) an
    empty ``content`` because the SDK validates every 2025-11-25 ``tools/call`` result as a
    ``CallToolResult``. When this canary fails, the SDK accepts the task shape itself: remove
    ``legacy_task_results`` (and read the task as the SDK gives it) and this canary."""
    from mcp_types import methods
    from pydantic import ValidationError

    task = {"taskId": "t", "status": "working", "createdAt": "2025-11-25T00:00:00Z",
            "lastUpdatedAt": "2025-11-25T00:00:00Z", "ttl": None}
    try:
        methods.validate_server_result("tools/call", "2025-11-25", {"task": task})
    except ValidationError:
        return
    fail("legacy_task_results (with_task_content)", "agent_ls/mcp/legacy_tasks.py",
         "the SDK now accepts a 2025-11-25 CreateTaskResult of tools/call: the workaround is no longer needed")
