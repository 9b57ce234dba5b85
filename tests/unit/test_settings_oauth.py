"""The ``oauth`` setting of an HTTP server entry: defaults, parsing, expansion, errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_ls.config.settings import LoadedSettings
from tests.unit.settings_helpers import (
    agent_ls_file,
    errors,
    load,
    locate,
    mcp_json,
    single_server,
    start,
    warnings,
    ws,
)

# oauth -----------------------------------------------------------------

URL = "https://mcp.example.com/mcp"


def oauth_entry(tmp_path: Path, oauth: Any, **extra: Any) -> LoadedSettings:
    """The server ``s`` in the user's settings (credentials are for the user's own settings only)."""
    entry: dict[str, Any] = {"type": "http", "url": URL, **extra}
    if oauth is not ...:
        entry["oauth"] = oauth
    return load(tmp_path, [], user={"mcpServers": {"s": entry}})


def test_oauth_is_automatic_for_http_servers(tmp_path: Path) -> None:
    cfg = oauth_entry(tmp_path, ...).servers["s"]
    assert cfg.oauth is not None and not cfg.oauth.explicit and cfg.oauth.grant == "authorization_code"
    assert cfg.oauth.sign_in_timeout == 300 and cfg.oauth.max_step_ups == 2


def test_oauth_off_for_false_an_authorization_header_and_stdio(tmp_path: Path) -> None:
    assert oauth_entry(tmp_path, False).servers["s"].oauth is None
    assert oauth_entry(tmp_path / "h", ..., headers={"authorization": "Bearer x"}).servers["s"].oauth is None
    assert single_server(tmp_path / "stdio", {"command": "x"}).servers["s"].oauth is None


def test_oauth_fields_are_parsed_and_expanded(tmp_path: Path) -> None:
    loaded = oauth_entry(tmp_path, {
        "clientId": "my-client", "clientSecret": "${API_KEY}", "tokenEndpointAuthMethod": "client_secret_post",
        "clientMetadataUrl": "https://agent.example.com/client.json", "clientName": "Agent",
        "scopes": ["repo", "read:org"], "redirectPort": 33418, "signInTimeout": 60, "maxStepUps": 0,
    })
    assert not errors(loaded), loaded.diagnostics
    o = loaded.servers["s"].oauth
    assert o is not None and o.explicit
    assert (o.client_id, o.client_secret, o.token_endpoint_auth_method) == (
        "my-client", "key-9876543210", "client_secret_post")
    assert o.client_metadata_url == "https://agent.example.com/client.json" and o.client_name == "Agent"
    assert (o.scopes, o.redirect_port, o.sign_in_timeout, o.max_step_ups) == ("repo read:org", 33418, 60.0, 0)
    # The client secret is a secret whatever its variable is called, and never in repr.
    assert "key-9876543210" in loaded.servers["s"].secrets
    assert "key-9876543210" not in repr(loaded.servers["s"])


def test_oauth_secret_fields_are_secrets_even_without_a_secret_looking_variable(tmp_path: Path) -> None:
    cfg = oauth_entry(tmp_path, {"grant": "client_credentials", "clientId": "c", "clientSecret": "${HOME}"}).servers["s"]
    assert "/home/alice" in cfg.secrets


def test_oauth_change_changes_the_fingerprint(tmp_path: Path) -> None:
    a = oauth_entry(tmp_path / "a", {"clientId": "one"}).servers["s"]
    b = oauth_entry(tmp_path / "b", {"clientId": "two"}).servers["s"]
    assert a.fingerprint() != b.fingerprint()


def test_client_credentials_and_identity_assertion(tmp_path: Path) -> None:
    cc = oauth_entry(tmp_path / "cc", {"grant": "client_credentials", "clientId": "svc",
                                        "tokenEndpointAuthMethod": "private_key_jwt", "privateKeyFile": "~/k.pem",
                                        "signingAlgorithm": "ES256", "issuer": "https://auth.example.com"})
    o = cc.servers["s"].oauth
    assert o is not None and not o.interactive and o.private_key_file == "~/k.pem" and o.signing_algorithm == "ES256"
    ia = oauth_entry(tmp_path / "ia", {"grant": "identity_assertion", "clientId": "c", "clientSecret": "x-secret",
                                        "issuer": "https://auth.example.com",
                                        "idp": {"tokenEndpoint": "https://idp.example.com/token",
                                                "idToken": "${GH_TOKEN}"}})
    o2 = ia.servers["s"].oauth
    assert o2 is not None and o2.idp_token_endpoint == "https://idp.example.com/token"
    assert "ghp_abcdef123456" in ia.servers["s"].secrets


@pytest.mark.parametrize(("oauth", "message"), [
    ("yes", '"oauth" must be true, false or an object'),
    ({"grant": "password"}, '"grant" must be one of'),
    ({"tokenEndpointAuthMethod": "magic"}, '"tokenEndpointAuthMethod" must be one of'),
    ({"clientMetadataUrl": "http://x.example.com/c.json"}, "must be an https URL with a path"),
    ({"clientMetadataUrl": "https://x.example.com/"}, "must be an https URL with a path"),
    ({"redirectPort": 70000}, '"redirectPort" must be a port number'),
    ({"signInTimeout": 0}, '"signInTimeout" must be a positive number'),
    ({"maxStepUps": -1}, '"maxStepUps" must be a whole number'),
    ({"scopes": 5}, '"scopes" must be a string or an array'),
    ({"clientSecret": "${NOT_SET_ANYWHERE}"}, "NOT_SET_ANYWHERE"),
    ({"grant": "client_credentials"}, 'client_credentials needs "clientId"'),
    ({"grant": "client_credentials", "clientId": "c"}, 'needs "clientSecret"'),
    ({"grant": "identity_assertion", "clientId": "c", "clientSecret": "s"}, 'identity_assertion needs "issuer"'),
    ({"issuer": "auth.example.com"}, '"issuer" must be'),
])
def test_oauth_errors_fail_that_server_with_a_located_message(tmp_path: Path, oauth: Any, message: str) -> None:
    loaded = oauth_entry(tmp_path, oauth)
    assert "s" in loaded.failed and "s" not in loaded.servers
    errs = errors(loaded)
    assert any(message in d.message for d in errs), errs
    assert all(d.json_path[:3] == ("mcpServers", "s", "oauth") for d in errs)


def test_oauth_unknown_keys_and_header_conflict_are_warnings(tmp_path: Path) -> None:
    loaded = oauth_entry(tmp_path, {"clientID": "typo"}, headers={"Authorization": "Bearer x"})
    assert "s" in loaded.servers
    texts = [d.message for d in warnings(loaded)]
    assert any("unknown OAuth setting 'clientID'" in t for t in texts)
    assert any("Authorization header is set" in t for t in texts)


# credentials from a workspace file (issue 25, finding 1) ----------------------------------------

@pytest.mark.parametrize(("oauth", "key"), [
    ({"grant": "jwt_bearer", "clientId": "agent", "assertionFile": "~/.ssh/id_rsa"}, "assertionFile"),
    ({"grant": "client_credentials", "clientId": "c", "privateKeyFile": "/etc/shadow"}, "privateKeyFile"),
    ({"grant": "client_credentials", "clientId": "c", "clientSecret": "${env:API_KEY}"}, "clientSecret"),
    ({"grant": "client_credentials", "clientId": "c", "privateKey": "${API_KEY}"}, "privateKey"),
    ({"grant": "client_credentials", "clientId": "c", "clientAssertion": "x"}, "clientAssertion"),
    ({"grant": "jwt_bearer", "clientId": "agent", "assertion": "${GH_TOKEN}"}, "assertion"),
    ({"grant": "identity_assertion", "idp": {"idToken": "${GH_TOKEN}"}}, "idToken"),
    ({"idp": {"clientSecret": "${GH_TOKEN}"}}, "clientSecret"),
])
def test_a_workspace_file_may_not_name_a_credential_file_or_carry_a_credential(
        tmp_path: Path, oauth: dict[str, Any], key: str) -> None:
    """Refused at its key, whether the folder is trusted or not: the server fails, so nothing
    reads the file or sends anything; only the refusal is reported (not what the grant lacks)."""
    folder = ws(tmp_path)
    mcp_json(folder, {"s": {"type": "http", "url": URL, "oauth": oauth}})
    loaded = load(tmp_path, [folder])
    assert "s" in loaded.failed and "s" not in loaded.servers
    errs = errors(loaded)
    assert len(errs) == 1, errs
    assert "is refused in a workspace file" in errs[0].message and "user settings" in errs[0].message
    assert errs[0].json_path[-1] == key
    text = (folder / ".mcp.json").read_text()
    assert start(errs[0]) == locate(text, f'"{key}"')  # at the key


def test_the_same_entry_in_the_users_settings_is_accepted(tmp_path: Path) -> None:
    loaded = oauth_entry(tmp_path, {"grant": "jwt_bearer", "clientId": "agent", "assertionFile": "~/token"})
    assert not errors(loaded) and loaded.servers["s"].oauth is not None
    assert loaded.servers["s"].oauth.assertion_file == "~/token"


def test_other_oauth_settings_stay_allowed_in_a_workspace_file(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    agent_ls_file(folder, {"s": {"type": "http", "url": URL, "oauth": {
        "clientId": "c", "scopes": ["a"], "issuer": "https://auth.example.com", "dpop": True}}})
    loaded = load(tmp_path, [folder])
    assert not errors(loaded) and "s" in loaded.servers
