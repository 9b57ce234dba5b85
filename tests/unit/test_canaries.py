"""Canaries for the private hooks agent-ls keeps into its dependencies.

Each test checks that what one hook reaches into (an SDK's private method, attribute, module or
frame layout) is still there with the shape the hook was written against. When a dependency
upgrade changes it, the canary fails with a message that names the hook and the file that uses
it, before any behaviour test fails in a puzzling way. The hooks are listed in
docs/architecture-hooks.md; the dependency minors they were written against are pinned in
pyproject.toml (mcp, pygls, litellm).

To move a pin: upgrade, run these tests, fix (or drop) each hook whose canary fails, then
update the expected shapes here and the table in the doc. The mcp SDK's canaries are in
test_canaries_mcp.py; what every canary uses is in canary_helpers.py.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import tomllib
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from tests.unit.canary_helpers import DOC, ROOT, code_names, expect_signature, fail


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


# --- the doc ---------------------------------------------------------------------------------------

def test_every_canary_is_in_the_hooks_table_and_back() -> None:
    import ast
    import re

    doc = (ROOT / DOC).read_text(encoding="utf-8")
    named = set(re.findall(r"`(test_\w+)", doc))
    here = {node.name for path in sorted(Path(__file__).parent.glob("test_canaries*.py"))
            for node in ast.parse(path.read_text(encoding="utf-8")).body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_")}
    assert "test_process_of_finds_the_live_stdio_process" in here  # the mcp canaries are read too
    here.discard("test_every_canary_is_in_the_hooks_table_and_back")
    assert named - here == set(), f"{DOC} names canaries that do not exist"
    assert here - named == set(), f"canaries missing from the table in {DOC}"
