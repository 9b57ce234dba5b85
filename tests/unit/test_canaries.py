"""Canaries for the private hooks agent-ls keeps into its dependencies.

Each test checks that what one hook reaches into (an SDK's private method, attribute, module or
frame layout) is still there with the shape the hook was written against. When a dependency
upgrade changes it, the canary fails with a message that names the hook and the file that uses
it, before any behaviour test fails in a puzzling way. The hooks are listed in
docs/architecture-hooks.md; the dependency minors they were written against are pinned in
pyproject.toml (mcp, pygls, litellm).

To move a pin: upgrade, run these tests, fix (or drop) each hook whose canary fails, then
update the expected shapes here and the table in the doc.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import importlib.metadata
import inspect
import os
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
DOC = "docs/architecture-hooks.md"


def fail(hook: str, where: str, what: str) -> None:
    pytest.fail(
        f"canary for the hook '{hook}' (used in {where}): {what}. A dependency changed under a "
        f"private hook: fix the hook, then update this canary and {DOC}.",
        pytrace=False,
    )


def params(fn: Callable[..., Any]) -> list[str]:
    return list(inspect.signature(fn).parameters)


def expect_signature(hook: str, where: str, fn: Any, expected: list[str], *, kind: str = "") -> None:
    """``fn`` exists with exactly these parameter names (and, with ``kind``, is that kind of
    callable: ``coroutine``, ``asyncgen`` or ``function``)."""
    if fn is None:
        fail(hook, where, "the target no longer exists")
    try:
        got = params(fn)
    except (TypeError, ValueError) as e:
        fail(hook, where, f"the target has no readable signature ({e})")
        return
    if got != expected:
        fail(hook, where, f"{getattr(fn, '__qualname__', fn)} now takes {got}, the hook expects {expected}")
    checks = {"coroutine": inspect.iscoroutinefunction, "asyncgen": inspect.isasyncgenfunction,
              "function": lambda f: callable(f) and not inspect.iscoroutinefunction(f)}
    if kind and not checks[kind](fn):
        fail(hook, where, f"{getattr(fn, '__qualname__', fn)} is no longer a {kind} function")


def code_names(fn: Any) -> set[str]:
    """Names a function's own code touches (attributes it reads or stores, globals it calls)."""
    code = getattr(fn, "__code__", None)
    return set(code.co_names) if code is not None else set()


def test_a_changed_target_fails_naming_the_hook_and_the_file() -> None:
    def moved(self: Any, msg_id: Any, payload: Any) -> None: ...

    with pytest.raises(pytest.fail.Exception) as info:
        expect_signature("LanguageServerProtocol._handle_response", "agent_ls/server/server.py", moved,
                         ["self", "msg_id", "result", "error"])
    text = str(info.value)
    assert "LanguageServerProtocol._handle_response" in text and "agent_ls/server/server.py" in text
    assert "['self', 'msg_id', 'payload']" in text and DOC in text
    with pytest.raises(pytest.fail.Exception, match="no longer exists"):
        expect_signature("gone", "somewhere.py", None, [])


# --- the pins -------------------------------------------------------------------------------------

PINNED = ("mcp", "pygls", "litellm")


@pytest.mark.parametrize("dist", PINNED)
def test_installed_version_is_the_pinned_minor(dist: str) -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    reqs = {Requirement(r).name: Requirement(r) for r in data["project"]["dependencies"]}
    req = reqs[dist]
    bounds = {s.operator: Version(s.version) for s in req.specifier}
    assert ">=" in bounds and "<" in bounds, f"pyproject.toml: {dist} must be pinned to one minor (>=X.Y,<X.Y+1)"
    low, high = bounds[">="], bounds["<"]
    assert (high.major, high.minor) == (low.major, low.minor + 1), (
        f"pyproject.toml pins {dist} to {req.specifier}: the private hooks were written against one minor "
        f"({low.major}.{low.minor}); widen the pin only after the canaries pass on the new minor ({DOC})")
    installed = importlib.metadata.version(dist)
    assert Version(installed) in req.specifier, (
        f"{dist} {installed} is installed but pyproject.toml pins {req.specifier}: "
        f"reinstall (pip install -e '.[dev]') or move the pin as {DOC} describes")


# --- mcp: the stdio server process (agent_ls/mcp/transports.py) -----------------------------------

STDIO_WHERE = "agent_ls/mcp/transports.py (_process_of)"


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

    from agent_ls.mcp.transports import _process_of

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
    where = ("agent_ls/mcp/transports.py (http_transport), agent_ls/mcp/oauth.py, agent_ls/mcp/oauth_redirect.py, "
             "agent_ls/mcp/oauth_providers.py")
    try:
        module = importlib.import_module("mcp.shared._httpx_utils")
    except ImportError as e:
        fail(hook, where, f"the private module is gone ({e})")
        return
    expect_signature(hook, where, getattr(module, "create_mcp_http_client", None), ["headers", "timeout", "auth"])


def test_auth_utils_helpers() -> None:
    from mcp.client.auth import utils

    where = "agent_ls/mcp/oauth.py, agent_ls/mcp/oauth_providers.py, agent_ls/mcp/oauth_wif.py"
    expect_signature("mcp.client.auth.utils.extract_field_from_www_auth", where,
                     getattr(utils, "extract_field_from_www_auth", None), ["response", "field_name"])
    expect_signature("mcp.client.auth.utils.extract_scope_from_www_auth", where,
                     getattr(utils, "extract_scope_from_www_auth", None), ["response"])
    expect_signature("mcp.client.auth.utils.issuers_match", where, getattr(utils, "issuers_match", None), ["a", "b"])


def test_dropped_tool_log_line() -> None:
    """listing.py's _LeftOutTools filter reads the SDK's log line about a dropped tool."""
    import mcp.client.session as session

    hook = "the 'dropping tool' log line of the 'client' logger"
    where = "agent_ls/mcp/listing.py (_LeftOutTools)"
    logger = getattr(session, "logger", None)
    if logger is None or logger.name != "client":
        fail(hook, where, f"mcp.client.session logs to {getattr(logger, 'name', None)!r}, not 'client'")
    if 'logger.warning("dropping tool ' not in inspect.getsource(session):
        fail(hook, where, "mcp.client.session no longer logs 'dropping tool ...' for a tool it leaves out")


def test_client_session_discover_result() -> None:
    from mcp.client.session import ClientSession

    hook = "ClientSession.discover_result"
    where = "agent_ls/mcp/eras.py (remember_era)"
    if not isinstance(inspect.getattr_static(ClientSession, "discover_result", None), property):
        fail(hook, where, "ClientSession.discover_result is no longer a property")


# --- mcp: the OAuth providers (agent_ls/mcp/oauth_providers.py, oauth_wif.py) ----------------------

OAUTH_WHERE = "agent_ls/mcp/oauth_providers.py (_HostFlow, _StoredState)"


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
    where = ("agent_ls/mcp/oauth_record.py (TokenRecord.restore_context, adopt_newer, ...), "
             "agent_ls/mcp/oauth_providers.py (_HostFlow._refresh_first), agent_ls/mcp/oauth_wif.py")
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

    where = ("agent_ls/mcp/oauth_providers.py (authorization_code_provider, machine_provider), "
             "agent_ls/mcp/oauth_wif.py")
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

    where = "agent_ls/mcp/oauth_wif.py (JWTBearerOAuthProvider)"
    for name, expected, kind in (("_initialize", ["self"], "coroutine"),
                                 ("_perform_authorization", ["self"], "coroutine"),
                                 ("_select_authorization_server", ["self", "advertised"], "function"),
                                 ("_get_token_endpoint", ["self"], "function")):
        expect_signature(f"OAuthClientProvider.{name}", where, getattr(OAuthClientProvider, name, None), expected,
                         kind=kind)
    # _select_authorization_server is only a hook while the flow still calls it.
    if "_select_authorization_server" not in inspect.getsource(OAuthClientProvider):
        fail("OAuthClientProvider._select_authorization_server", where, "the flow no longer calls it")


# --- pygls: the protocol overrides (agent_ls/server/server.py) -------------------------------------

PYGLS_WHERE = "agent_ls/server/server.py (AgentLsProtocol)"


def test_pygls_protocol_overrides() -> None:
    from pygls.protocol import JsonRPCProtocol, LanguageServerProtocol

    for name, expected in (("_handle_response", ["self", "msg_id", "result", "error"]),
                           ("_send_response", ["self", "msg_id", "result", "error"]),
                           ("structure_message", ["self", "data"]),
                           ("handle_message", ["self", "message"]),
                           ("get_message_type", ["self", "method"]),
                           ("get_result_type", ["self", "method"])):
        expect_signature(f"LanguageServerProtocol.{name}", PYGLS_WHERE, getattr(LanguageServerProtocol, name, None),
                         expected, kind="function")
    if "_request_futures" not in code_names(JsonRPCProtocol.__init__):
        fail("self._request_futures", PYGLS_WHERE, "JsonRPCProtocol.__init__ no longer sets _request_futures")
    if "_handle_response" not in code_names(JsonRPCProtocol.handle_message):
        fail("LanguageServerProtocol._handle_response", PYGLS_WHERE,
             "handle_message no longer routes client answers through _handle_response")


def test_pygls_structure_message_raises_invalid_params_with_the_cause() -> None:
    """AgentLsProtocol.structure_message turns pygls' JsonRpcInvalidParams (its __cause__ is the
    cattrs error) into an error response; pygls alone would answer nothing."""
    from lsprotocol import types as lsp
    from pygls.exceptions import JsonRpcException

    from agent_ls.server.server import AgentLanguageServer, _Malformed

    hook = "AgentLsProtocol.structure_message"
    server = AgentLanguageServer()
    bad = {"jsonrpc": "2.0", "id": 7, "method": lsp.TEXT_DOCUMENT_HOVER, "params": {"textDocument": 3}}
    try:
        out = server.protocol.structure_message(bad)
    except JsonRpcException as e:
        fail(hook, PYGLS_WHERE, f"a malformed request raised {type(e).__name__} instead of becoming _Malformed")
        return
    if not isinstance(out, _Malformed):
        fail(hook, PYGLS_WHERE, f"a malformed request structured to {type(out).__name__}, not _Malformed")
    assert "invalid params for textDocument/hover" in out.error.message


# --- litellm (agent_ls/agent/llm.py, agent_ls/agent/sampling.py) ---------------------------------

LLM_WHERE = "agent_ls/agent/llm.py"


@pytest.fixture(scope="module")
def litellm() -> Any:
    from agent_ls.agent.llm import get_litellm

    return get_litellm()


def test_litellm_offline_cost_map_switch(litellm: Any) -> None:
    # through the fixture: importing any litellm module first without the switch would fetch
    hook = "LITELLM_LOCAL_MODEL_COST_MAP (import never reaches the network)"
    module = importlib.import_module("litellm.litellm_core_utils.get_model_cost_map")
    if "LITELLM_LOCAL_MODEL_COST_MAP" not in inspect.getsource(module):
        fail(hook, f"{LLM_WHERE} (get_litellm)", "litellm no longer reads LITELLM_LOCAL_MODEL_COST_MAP")


def test_litellm_module_switches(litellm: Any) -> None:
    for name in ("suppress_debug_info", "drop_params"):
        if not hasattr(litellm, name):
            fail(f"litellm.{name}", f"{LLM_WHERE} (get_litellm)", "the module attribute is gone")


def test_litellm_validate_environment(litellm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    hook = "litellm.validate_environment"
    where = f"{LLM_WHERE} (check_credentials)"
    expect_signature(hook, where, litellm.validate_environment, ["model", "api_key", "api_base", "api_version"])
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    env = litellm.validate_environment(model="openai/gpt-4.1")
    if not isinstance(env, dict) or env.get("keys_in_environment") is not False \
            or "OPENAI_API_KEY" not in (env.get("missing_keys") or []):
        fail(hook, where, f"the answer no longer has keys_in_environment/missing_keys as expected: {env!r}")


def test_litellm_error_classes(litellm: Any) -> None:
    where = f"{LLM_WHERE} (map_error)"
    for name in ("AuthenticationError", "RateLimitError", "ContextWindowExceededError", "APIConnectionError",
                 "BadRequestError", "InternalServerError", "ServiceUnavailableError", "APIError", "Timeout"):
        cls = getattr(litellm, name, None)
        if not (isinstance(cls, type) and issubclass(cls, Exception)):
            fail(f"litellm.{name}", where, "the exception class is gone")


def test_litellm_entry_points(litellm: Any) -> None:
    for name in ("acompletion", "stream_chunk_builder"):
        if not callable(getattr(litellm, name, None)):
            fail(f"litellm.{name}", f"{LLM_WHERE}, agent_ls/agent/sampling.py", "the function is gone")
    if not inspect.iscoroutinefunction(litellm.acompletion):
        fail("litellm.acompletion", LLM_WHERE, "acompletion is no longer a coroutine function")


def test_litellm_usage_fields(litellm: Any) -> None:
    """_usage_of reads these (prompt caching: cache reads and writes)."""
    from litellm.types.utils import Usage

    usage = Usage(prompt_tokens=10, completion_tokens=2, total_tokens=12, cache_creation_input_tokens=3,
                  cache_read_input_tokens=4)
    from agent_ls.agent.llm import _usage_of

    report = _usage_of(usage)
    if (report.cache_read_tokens, report.cache_write_tokens) != (4, 3):
        fail("usage.cache_read_input_tokens / cache_creation_input_tokens", f"{LLM_WHERE} (_usage_of)",
             f"litellm's Usage no longer carries the cache token counts ({report!r})")


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


# --- the doc ---------------------------------------------------------------------------------------

def test_every_canary_is_in_the_hooks_table_and_back() -> None:
    import re

    doc = (ROOT / DOC).read_text(encoding="utf-8")
    named = set(re.findall(r"`(test_\w+)", doc))
    here = {name for name, fn in globals().items() if name.startswith("test_") and callable(fn)}
    here.discard("test_every_canary_is_in_the_hooks_table_and_back")
    assert named - here == set(), f"{DOC} names canaries that do not exist"
    assert here - named == set(), f"canaries missing from the table in {DOC}"
