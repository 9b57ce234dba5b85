"""The ``secrets`` of a server entry, and :mod:`agent_ls.core.redact`, which protects them."""

from __future__ import annotations

from pathlib import Path

from agent_ls.core.redact import MASK, redact, redact_mapping
from tests.unit.settings_helpers import agent_ls_file, load, ws

# secrets and redaction -------------------------------------------------------


def test_secrets_contains_env_and_header_values(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    agent_ls_file(folder, {
        "s": {"command": "x", "env": {"TOKEN": "${GH_TOKEN}", "LITERAL": "plain-secret-value", "N": "1"}},
        "h": {"url": "https://h", "headers": {"Authorization": "Bearer ${API_KEY}", "X-Other": "abcdef"}},
    })
    loaded = load(tmp_path, [folder])
    s, h = loaded.servers["s"], loaded.servers["h"]
    assert "ghp_abcdef123456" in s.secrets
    assert "plain-secret-value" in s.secrets
    assert "1" not in s.secrets  # too short to redact without mangling every message
    assert "Bearer key-9876543210" in h.secrets
    assert "abcdef" in h.secrets
    # longest first, so that a secret containing another is masked as a whole
    assert list(h.secrets) == sorted(h.secrets, key=len, reverse=True)


def test_secrets_include_variables_expanded_into_args_and_url(tmp_path: Path) -> None:
    # a token passed as an argument (common in Claude Code setups) must not show up in status or doctor
    folder = ws(tmp_path)
    agent_ls_file(folder, {
        "s": {"command": "npx", "args": ["--api-key", "${API_KEY}", "--home=${HOME}"]},
        "h": {"url": "https://h/mcp?token=${GH_TOKEN}", "headers": {"Authorization": "Bearer ${API_KEY}"}},
    })
    loaded = load(tmp_path, [folder])
    s, h = loaded.servers["s"], loaded.servers["h"]
    assert "key-9876543210" in s.secrets
    assert "/home/alice" not in s.secrets  # not a secret-looking variable name
    assert "ghp_abcdef123456" in h.secrets
    assert "key-9876543210" in h.secrets  # the token alone, not only "Bearer <token>"
    assert redact(" ".join(s.args), s.secrets) == f"--api-key {MASK} --home=/home/alice"
    assert redact(h.url or "", h.secrets) == f"https://h/mcp?token={MASK}"


def test_secrets_are_not_part_of_identity_or_repr(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    agent_ls_file(folder, {"s": {"command": "x", "args": ["${API_KEY}"]}})
    a = load(tmp_path, [folder]).servers["s"]
    b = load(tmp_path, [folder]).servers["s"]
    assert a == b
    assert a.fingerprint() == b.fingerprint()
    assert "expanded_secrets" not in repr(a)


def test_redact_replaces_every_occurrence() -> None:
    assert redact("token=abcd1234 and again abcd1234", ["abcd1234"]) == f"token={MASK} and again {MASK}"


def test_redact_longest_first() -> None:
    assert redact("Bearer abcd1234", ["abcd", "Bearer abcd1234"]) == MASK
    assert redact("x abcd1234 y", ["abcd", "abcd1234"]) == f"x {MASK} y"


def test_redact_ignores_short_and_empty_secrets() -> None:
    assert redact("a b c 123", ["", "a", "123"]) == "a b c 123"
    assert redact("nothing", []) == "nothing"


def test_redact_is_literal_not_regex() -> None:
    assert redact("p.a+s*s(1)", ["a+s*s("]) == f"p.{MASK}1)"


def test_redact_mapping() -> None:
    values = {"TOKEN": "t0k3n", "PATH": "/usr/bin", "EMPTY": "", "API_KEY": "k", "Authorization": "Bearer x"}
    assert redact_mapping(values) == {"TOKEN": MASK, "PATH": MASK, "EMPTY": "", "API_KEY": MASK,
                                      "Authorization": MASK}
    assert redact_mapping(values, all_values=False) == {
        "TOKEN": MASK, "PATH": "/usr/bin", "EMPTY": "", "API_KEY": MASK, "Authorization": MASK,
    }
    for key in ("x-api-key", "GITHUB_PERSONAL_ACCESS_TOKEN", "DB_PASSWORD", "client_secret", "Cookie",
                "SESSION_ID", "aws_credentials"):
        assert redact_mapping({key: "v"}, all_values=False) == {key: MASK}
    assert redact_mapping({"NODE_ENV": "production"}, all_values=False) == {"NODE_ENV": "production"}


def test_redact_mapping_does_not_modify_its_input() -> None:
    values = {"TOKEN": "abc"}
    redact_mapping(values)
    assert values == {"TOKEN": "abc"}


def test_live_secrets_are_masked_in_log_records_and_tracebacks() -> None:
    import logging

    from agent_ls.core.redact import RedactingFilter, add_secrets, redact_live

    token = "at-live-token-" + "x" * 12
    add_secrets(token, None, "abc")  # None and too-short values are ignored
    assert redact_live(f"Bearer {token}") == f"Bearer {MASK}"
    assert redact_live("abc") == "abc"
    record = logging.LogRecord("httpx2", logging.INFO, __file__, 1, "sent %s", (token,), None)
    try:
        raise ValueError(f"refused {token}")
    except ValueError:
        import sys

        record.exc_info = sys.exc_info()
    assert RedactingFilter().filter(record)
    assert record.getMessage() == f"sent {MASK}"
    assert token not in (record.exc_text or "") and MASK in (record.exc_text or "")
