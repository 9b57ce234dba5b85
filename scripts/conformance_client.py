"""Conformance client: the official MCP conformance suite drives agent-ls's own host code.

    scripts/run_conformance.sh --suite all .venv/bin/python scripts/conformance_client.py

The suite appends the test server's URL as the last argument, names the scenario in
``MCP_CONFORMANCE_SCENARIO`` and, for some auth scenarios, passes credentials as JSON in
``MCP_CONFORMANCE_CONTEXT``. For every scenario the client writes a user settings file with
one HTTP server entry ``conformance`` (credentials go into the environment and the entry
refers to them as ``${VAR}``, as a user would keep secrets out of the file), loads it with
``load_settings`` and runs it through :class:`agent_ls.mcp.manager.MCPManager` exactly as
the editor does (settings -> manager -> connection -> SDK), with a private data dir for the
token store. Then:

- core scenarios: ``tools_call`` calls ``add_numbers``; the elicitation scenario calls its
  tool with a handler that accepts with no content (the host fills the schema defaults);
  ``sse-retry`` calls ``test_reconnection``;
- ``auth/*`` (authorization code): the host starts without opening anything (the server
  shows ``needs-sign-in``), then ``manager.sign_in("conformance")`` runs the sign-in with
  :func:`agent_ls.mcp.oauth.redirect.headless_opener` (GET the authorization URL, follow the test
  authorization server's 302 to the host's loopback listener), then the first tool is
  called (the step-up scenarios need the call). ``auth/basic-cimd`` sets
  ``oauth.clientMetadataUrl``; ``auth/pre-registration`` sets ``clientId``/``clientSecret``;
- ``auth/client-credentials-*``: ``grant: client_credentials`` (secret basic, or
  ``private_key_jwt`` with the PEM key from the context);
- ``auth/wif-jwt-bearer``: ``grant: jwt_bearer`` with the context's valid workload JWT as
  ``assertion``; ``auth/dpop*`` need no settings (DPoP is automatic when the authorization
  server advertises it);
- ``auth/cross-app-access-complete-flow``: ``grant: identity_assertion`` with the IdP
  settings from the context. The authorization server's issuer is configuration for this
  grant (the resource server is never asked); the harness does not pass it, so this client
  reads it from the test server's protected resource metadata, standing in for the
  administrator who would write it into the settings.

- skills (``sep-2640-*``, a server that declares ``io.modelcontextprotocol/skills``): the
  host's :class:`agent_ls.mcp.skills.SkillCatalog` lists the skills (as before each agent
  prompt; nothing is read then); in the ``-verify-*`` scenarios each skill is then loaded, as
  the agent's ``load_skill`` does, and, when it verifies, its supporting files are read.

Exit status 0 means the host did its part (a few auth scenarios expect the client to give
up, which is also exit 0 when the host reports it clearly).
"""

from __future__ import annotations

import gc

if __name__ == "__main__":  # one process per scenario: no collection during the imports (see the end)
    gc.disable()

import asyncio
import json
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import mcp_types as types  # noqa: E402

from agent_ls.config.settings import load_settings  # noqa: E402
from agent_ls.mcp.manager import MCPManager  # noqa: E402
from agent_ls.mcp.oauth.redirect import headless_opener  # noqa: E402
from agent_ls.mcp.oauth.store import OAuthStore  # noqa: E402
from agent_ls.mcp.skill_entries import SkillError, SkillVerificationError  # noqa: E402
from agent_ls.mcp.skills import SkillCatalog, offers_skills  # noqa: E402

SERVER = "conformance"
SCENARIO_TOOLS = {
    "tools_call": ("add_numbers", {"a": 2, "b": 3}),
    "elicitation-sep1034-client-defaults": ("test_client_elicitation_defaults", {}),
    "sse-retry": ("test_reconnection", {}),
}
# Auth scenarios in which the right behaviour is to refuse or give up.
MAY_FAIL = {"auth/resource-mismatch", "auth/scope-retry-limit"}
CIMD_URL = "https://conformance-test.local/client-metadata.json"

log = logging.getLogger("conformance")


async def accept_with_defaults(server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
    # A user who submits the form without touching it: the host must apply the defaults.
    return types.ElicitResult(action="accept", content={})


def context() -> dict[str, Any]:
    raw = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


async def issuer_from_resource_metadata(url: str) -> str:
    """The first authorization server named by the resource's protected resource metadata."""
    from mcp.client.auth.utils import build_protected_resource_metadata_discovery_urls
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with create_mcp_http_client() as http:
        for candidate in build_protected_resource_metadata_discovery_urls(None, url):
            resp = await http.get(candidate)
            if resp.status_code == 200:
                servers = resp.json().get("authorization_servers") or []
                if servers:
                    return str(servers[0])
    raise RuntimeError("no protected resource metadata names an authorization server")


async def server_entry(url: str, scenario: str, env: dict[str, str]) -> dict[str, Any]:
    """The settings entry a user would write for this scenario (secrets as ${VAR})."""
    entry: dict[str, Any] = {"type": "http", "url": url, "connectTimeout": 20}
    if not scenario.startswith("auth/"):
        return entry
    ctx = context()
    oauth: dict[str, Any] = {"signInTimeout": 15}
    if scenario == "auth/basic-cimd":
        oauth["clientMetadataUrl"] = CIMD_URL
    if scenario in ("auth/client-credentials-basic", "auth/client-credentials-jwt"):
        oauth["grant"] = "client_credentials"
        oauth["clientId"] = ctx["client_id"]
        if "private_key_pem" in ctx:
            env["CONFORMANCE_PRIVATE_KEY"] = ctx["private_key_pem"]
            oauth["tokenEndpointAuthMethod"] = "private_key_jwt"
            oauth["privateKey"] = "${CONFORMANCE_PRIVATE_KEY}"
            oauth["signingAlgorithm"] = ctx.get("signing_algorithm", "RS256")
        else:
            env["CONFORMANCE_CLIENT_SECRET"] = ctx["client_secret"]
            oauth["clientSecret"] = "${CONFORMANCE_CLIENT_SECRET}"
            oauth["tokenEndpointAuthMethod"] = "client_secret_basic"
    elif scenario in ("auth/cross-app-access-complete-flow", "auth/enterprise-managed-authorization"):
        env["CONFORMANCE_CLIENT_SECRET"] = ctx["client_secret"]
        env["CONFORMANCE_IDP_ID_TOKEN"] = ctx["idp_id_token"]
        oauth.update({
            "grant": "identity_assertion",
            "issuer": await issuer_from_resource_metadata(url),
            "clientId": ctx["client_id"],
            "clientSecret": "${CONFORMANCE_CLIENT_SECRET}",
            "tokenEndpointAuthMethod": "client_secret_basic",
            "idp": {"tokenEndpoint": ctx["idp_token_endpoint"], "clientId": ctx.get("idp_client_id", ""),
                    "idToken": "${CONFORMANCE_IDP_ID_TOKEN}"},
        })
        if not oauth["idp"]["clientId"]:
            del oauth["idp"]["clientId"]
    elif scenario == "auth/wif-jwt-bearer":  # the workload's JWT, from the environment
        env["CONFORMANCE_WORKLOAD_JWT"] = ctx["valid_jwt"]
        oauth.update({"grant": "jwt_bearer", "clientId": ctx["client_id"],
                      "assertion": "${CONFORMANCE_WORKLOAD_JWT}"})
    elif ctx.get("client_id"):
        oauth["clientId"] = ctx["client_id"]
        if ctx.get("client_secret"):
            env["CONFORMANCE_CLIENT_SECRET"] = ctx["client_secret"]
            oauth["clientSecret"] = "${CONFORMANCE_CLIENT_SECRET}"
    entry["oauth"] = oauth
    return entry


def example_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments that satisfy a tool's required top-level properties (for a call that only has
    to reach the server)."""
    samples = {"string": "x", "integer": 1, "number": 1, "boolean": True, "array": [], "object": {}}
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    out: dict[str, Any] = {}
    for name in schema.get("required") or []:
        prop = props.get(name) if isinstance(props.get(name), dict) else {}
        kind = prop.get("type") if isinstance(prop.get("type"), str) else "string"
        out[name] = prop["enum"][0] if isinstance(prop.get("enum"), list) and prop["enum"] else samples.get(kind, "x")
    return out


def scripted_calls(scenario: str, manager: MCPManager) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls a scenario asks for: its context's ``toolCalls``, or what its checks need."""
    if scenario == "sep-2322-client-request-state":  # every multi-round-trip shape
        return [(n, {}) for n in ("test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated",
                                  "test_mrtr_no_result_type")]
    if scenario == "json-schema-2020-12-preservation":  # echo the schema exactly as the host holds it
        focal = next((t for t in manager.tools() if t.spec.display_name == "json_schema_2020_12_tool"), None)
        return [("json_schema_echo", {"schema": focal.spec.input_schema})] if focal is not None else []
    calls = context().get("toolCalls")
    if isinstance(calls, list):
        return [(str(c["name"]), dict(c.get("arguments") or {})) for c in calls
                if isinstance(c, dict) and isinstance(c.get("name"), str)]
    return []


async def use_skills(scenario: str, manager: MCPManager) -> int:
    """List the server's skills; in the verify scenarios load each one and read its files."""
    catalog = SkillCatalog(manager)
    await catalog.refresh()
    skills = catalog.skills()
    print(f"skills: {[s.ref for s in skills]} problems: {catalog.problems}", file=sys.stderr)
    if not scenario.startswith("sep-2640-client-verify"):
        return 1 if catalog.problems else 0
    failed = 0
    for skill in skills:
        try:
            loaded = await catalog.load(SERVER, skill.ref)
            for path, _size in loaded.files:
                await catalog.read_file(loaded, path)
            print(f"skill {skill.ref}: loaded and verified", file=sys.stderr)
        except SkillVerificationError as e:  # the host refused content that does not match its entry
            print(f"skill {skill.ref}: refused: {e}", file=sys.stderr)
        except SkillError as e:
            print(f"skill {skill.ref}: {e}", file=sys.stderr)
            failed = 1
    return failed


async def run(url: str, scenario: str) -> int:
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ)
        user = Path(d) / "settings.json"
        user.write_text(json.dumps({"mcpServers": {SERVER: await server_entry(url, scenario, env)}}, indent=2))
        settings = load_settings([], user_settings=user, environ=env)
        for diag in settings.diagnostics:
            print(f"settings: {diag}", file=sys.stderr)
        manager = MCPManager(roots=[Path(d)], elicitation_handler=accept_with_defaults,
                             auth_opener=headless_opener, oauth_store=OAuthStore(Path(d) / "oauth"))
        await manager.apply(settings)
        await manager.wait_ready(25)
        try:
            status = manager.status()[0]
            print(f"started: {status.state} auth={status.auth} error={status.error}", file=sys.stderr)
            if status.state == "needs-sign-in" or (scenario.startswith("auth/") and status.state != "connected"):
                status = await manager.sign_in(SERVER)
                print(f"after sign-in: {status.state} auth={status.auth} error={status.error}", file=sys.stderr)
            if status.state not in ("connected", "connected-listing-failed"):
                print(f"server did not connect: {status.state} {status.error}", file=sys.stderr)
                return 0 if scenario in MAY_FAIL else 1
            names = [t.spec.display_name for t in manager.tools()]
            print(f"connected; tools: {names}", file=sys.stderr)
            conn = manager.connection(SERVER)
            if conn is not None and offers_skills(conn):
                return await use_skills(scenario, manager)
            calls = scripted_calls(scenario, manager)
            if calls:
                failed = 0
                for tool, args in calls:
                    result = await manager.call_tool(SERVER, tool, args)
                    print(f"{tool} -> error={result.is_error} {result.content[:300]}", file=sys.stderr)
                    failed |= int(result.is_error)
                return failed
            todo = SCENARIO_TOOLS.get(scenario)
            if todo is None and names and scenario not in ("initialize",):
                first = manager.tools()[0]  # the host checks arguments: give the required ones
                todo = (names[0], example_arguments(first.spec.input_schema))
            if todo is not None:
                tool, args = todo
                result = await manager.call_tool(SERVER, tool, args)
                print(f"{tool} -> error={result.is_error} {result.content[:500]}", file=sys.stderr)
                if result.is_error and scenario in SCENARIO_TOOLS:
                    return 1
                if result.is_error and scenario.startswith("auth/") and scenario not in MAY_FAIL:
                    return 1
            print(f"final: auth={manager.status()[0].auth}", file=sys.stderr)
            return 0
        finally:
            await manager.close()


def main() -> int:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    if len(sys.argv) < 2:
        print("usage: conformance_client.py SERVER_URL", file=sys.stderr)
        return 2
    return asyncio.run(run(sys.argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", "")))


if __name__ == "__main__":
    gc.freeze()  # the imports' long-lived objects: never walked again, by a collection nor at exit
    gc.enable()
    sys.exit(main())
