"""Variable expansion in server entries."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_ls.config.expand import ExpansionContext, ExpansionError, expand, variables_in

WS = Path("/work/projects/my-app")
HOME = Path("/home/alice")
ENV = {"TOKEN": "s3cr3t", "EMPTY": "", "HOST": "example.com", "PORT": "8080", "_UNDER": "u", "A1": "a1"}


@pytest.fixture
def ctx() -> ExpansionContext:
    return ExpansionContext(environ=ENV, workspace_folder=WS, user_home=HOME)


def x(value: str, ctx: ExpansionContext, field: str = "mcpServers.s.args[0]") -> str:
    return expand(value, ctx, field)


def fail(value: str, ctx: ExpansionContext, field: str = "mcpServers.s.args[0]") -> ExpansionError:
    with pytest.raises(ExpansionError) as exc:
        expand(value, ctx, field)
    return exc.value


# plain environment variables ----------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("${TOKEN}", "s3cr3t"),
        ("Bearer ${TOKEN}", "Bearer s3cr3t"),
        ("https://${HOST}:${PORT}/mcp", "https://example.com:8080/mcp"),
        ("${HOST}${PORT}", "example.com8080"),
        ("${_UNDER}", "u"),
        ("${A1}", "a1"),
        ("${env:TOKEN}", "s3cr3t"),
        ("x=${env:HOST}", "x=example.com"),
    ],
)
def test_environment_variables(value: str, expected: str, ctx: ExpansionContext) -> None:
    assert x(value, ctx) == expected


@pytest.mark.parametrize(
    "value",
    ["", "plain", "no $ vars", "$TOKEN", "$ {TOKEN}", "{TOKEN}", "price: $5", "$", "${", "${TOKEN", "a}b"],
)
def test_text_without_variables_is_unchanged(value: str, ctx: ExpansionContext) -> None:
    assert x(value, ctx) == value


def test_set_but_empty_variable_expands_to_empty(ctx: ExpansionContext) -> None:
    assert x("[${EMPTY}]", ctx) == "[]"
    assert x("[${env:EMPTY}]", ctx) == "[]"


def test_values_are_not_expanded_again(ctx: ExpansionContext) -> None:
    c = ExpansionContext(environ={"A": "${B}", "B": "nope"}, user_home=HOME)
    assert x("${A}", c) == "${B}"


def test_names_are_case_sensitive(ctx: ExpansionContext) -> None:
    e = fail("${token}", ctx)
    assert e.variable == "token"


# defaults --------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("${MISSING:-fallback}", "fallback"),
        ("${TOKEN:-fallback}", "s3cr3t"),
        ("${EMPTY:-fallback}", "fallback"),  # empty counts as unset with :- (POSIX, Claude Code)
        ("${MISSING:-}", ""),
        ("[${MISSING:-}]", "[]"),
        ("${MISSING:-a b c}", "a b c"),
        ("${MISSING:-http://localhost:3000/x?y=1}", "http://localhost:3000/x?y=1"),
        ("${MISSING:-a:-b}", "a:-b"),
        ("${MISSING:-$HOME}", "$HOME"),
        ("${env:MISSING:-d}", "d"),
        ("${env:TOKEN:-d}", "s3cr3t"),
        ("${env:EMPTY:-d}", "d"),
        ("${env:MISSING:-}", ""),
        ("${A:-1}-${B:-2}", "1-2"),
    ],
)
def test_defaults(value: str, expected: str, ctx: ExpansionContext) -> None:
    assert x(value, ctx) == expected


# editor variables ------------------------------------------------------


def test_workspace_folder(ctx: ExpansionContext) -> None:
    assert x("${workspaceFolder}", ctx) == str(WS)
    assert x("${workspaceFolder}/src/server.py", ctx) == f"{WS}/src/server.py"
    assert x("--root=${workspaceFolder}", ctx) == f"--root={WS}"


def test_workspace_folder_basename(ctx: ExpansionContext) -> None:
    assert x("${workspaceFolderBasename}", ctx) == "my-app"
    assert x("db-${workspaceFolderBasename}.sqlite", ctx) == "db-my-app.sqlite"


def test_user_home(ctx: ExpansionContext) -> None:
    assert x("${userHome}", ctx) == str(HOME)
    assert x("${userHome}/.config/x", ctx) == f"{HOME}/.config/x"


def test_user_home_defaults_to_the_real_home() -> None:
    c = ExpansionContext(environ={})
    assert x("${userHome}", c) == str(Path.home())


def test_editor_variables_win_over_environment_variables_of_the_same_name() -> None:
    c = ExpansionContext(environ={"workspaceFolder": "/env", "userHome": "/env"}, workspace_folder=WS,
                         user_home=HOME)
    assert x("${workspaceFolder}|${userHome}", c) == f"{WS}|{HOME}"
    # the env: prefix reaches the environment explicitly
    assert x("${env:workspaceFolder}", c) == "/env"


def test_workspace_folder_without_a_workspace_is_an_error() -> None:
    c = ExpansionContext(environ={}, workspace_folder=None, user_home=HOME)
    e = fail("${workspaceFolder}/x", c, "mcpServers.fs.cwd")
    assert e.variable == "workspaceFolder"
    assert e.field == "mcpServers.fs.cwd"
    assert "workspace folder" in e.reason
    e = fail("${workspaceFolderBasename}", c)
    assert e.variable == "workspaceFolderBasename"


def test_workspace_folder_default_without_a_workspace() -> None:
    c = ExpansionContext(environ={}, workspace_folder=None, user_home=HOME)
    assert x("${workspaceFolder:-/tmp}", c) == "/tmp"
    assert x("${workspaceFolderBasename:-none}", c) == "none"
    # with a workspace the default is not used
    c = ExpansionContext(environ={}, workspace_folder=WS, user_home=HOME)
    assert x("${workspaceFolder:-/tmp}", c) == str(WS)


def test_mixed(ctx: ExpansionContext) -> None:
    value = "${userHome}|${workspaceFolder}|${workspaceFolderBasename}|${TOKEN}|${env:HOST}|${NOPE:-d}|$${x}"
    assert x(value, ctx) == f"{HOME}|{WS}|my-app|s3cr3t|example.com|d|${{x}}"


# escapes ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("$${TOKEN}", "${TOKEN}"),
        ("$${MISSING}", "${MISSING}"),  # escaped: no error for the missing variable
        ("$${input:x}", "${input:x}"),
        ("a $${b} ${TOKEN}", "a ${b} s3cr3t"),
        ("$${", "${"),
        ("$$${TOKEN}", "$${TOKEN}"),
        ("$$", "$$"),
        ("$$TOKEN", "$$TOKEN"),
    ],
)
def test_dollar_dollar_brace_is_a_literal(value: str, expected: str, ctx: ExpansionContext) -> None:
    assert x(value, ctx) == expected


# errors ----------------------------------------------------------------


def test_missing_variable_names_the_variable_and_the_field(ctx: ExpansionContext) -> None:
    e = fail("Bearer ${GITHUB_TOKEN}", ctx, "mcpServers.gh.env.TOKEN")
    assert e.variable == "GITHUB_TOKEN"
    assert e.field == "mcpServers.gh.env.TOKEN"
    assert "GITHUB_TOKEN" in str(e)
    assert "mcpServers.gh.env.TOKEN" in str(e)
    assert "not set" in str(e)
    assert str(e) == (
        "environment variable GITHUB_TOKEN is not set (variable ${GITHUB_TOKEN} in mcpServers.gh.env.TOKEN)"
    )


def test_missing_env_prefixed_variable(ctx: ExpansionContext) -> None:
    e = fail("${env:NOPE}", ctx, "mcpServers.x.url")
    assert e.variable == "env:NOPE"
    assert "NOPE" in e.reason
    assert "mcpServers.x.url" in str(e)


def test_first_missing_variable_is_reported(ctx: ExpansionContext) -> None:
    e = fail("${TOKEN}${FIRST}${SECOND}", ctx)
    assert e.variable == "FIRST"


def test_expansion_error_is_a_value_error(ctx: ExpansionContext) -> None:
    with pytest.raises(ValueError):
        x("${NOPE}", ctx)


@pytest.mark.parametrize(
    ("value", "variable", "kind"),
    [
        ("${input:token}", "input:token", "input"),
        ("${command:pickFile}", "command:pickFile", "command"),
        ("${config:editor.fontSize}", "config:editor.fontSize", "config"),
        ("x-${input:a}-y", "input:a", "input"),
    ],
)
def test_unsupported_variable_kinds(value: str, variable: str, kind: str, ctx: ExpansionContext) -> None:
    e = fail(value, ctx, "servers.s.env.K")
    assert e.variable == variable
    assert f"${{{kind}:...}}" in e.reason
    assert "not supported" in e.reason
    assert "servers.s.env.K" in str(e)


def test_unsupported_kind_fails_even_with_a_default(ctx: ExpansionContext) -> None:
    e = fail("${input:x:-d}", ctx)
    assert "not supported" in e.reason


@pytest.mark.parametrize(
    "value",
    ["${}", "${1ABC}", "${A-B}", "${A B}", "${ TOKEN}", "${TOKEN }", "${a.b}", "${env:}", "${env:1X}", "${é}",
     "${:-default}"],
)
def test_invalid_names(value: str, ctx: ExpansionContext) -> None:
    e = fail(value, ctx)
    assert "invalid variable name" in e.reason


def test_unclosed_brace_is_left_alone(ctx: ExpansionContext) -> None:
    # no closing brace: not a variable at all (the text is passed through)
    assert x("${TOKEN", ctx) == "${TOKEN"


# variables_in ----------------------------------------------------------


def test_variables_in() -> None:
    assert variables_in("") == []
    assert variables_in("plain") == []
    assert variables_in("${A} ${env:B:-x} $${C} ${workspaceFolder}") == ["A", "env:B:-x", "workspaceFolder"]
