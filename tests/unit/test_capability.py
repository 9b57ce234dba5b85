"""Capability inference for MCP tools: annotations first, then keywords."""

from __future__ import annotations

import mcp_types as types
import pytest

from agent_ls.core.tools import Capability
from agent_ls.mcp.capability import infer_capability, words_capability

R, W, N, U = Capability.READ, Capability.WRITE, Capability.NETWORK, Capability.UNKNOWN


# annotations ----------------------------------------------------------


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        ({"destructiveHint": True}, W),
        ({"destructiveHint": True, "readOnlyHint": True}, U),  # the server contradicts itself: ask
        ({"destructiveHint": True, "openWorldHint": True}, W),
        ({"destructiveHint": True, "readOnlyHint": True, "openWorldHint": True}, U),
        # MCP's default for a missing openWorldHint is true (issue 25, finding 4): asks
        ({"readOnlyHint": True}, N),
        ({"readOnlyHint": True, "openWorldHint": False}, R),
        ({"readOnlyHint": True, "openWorldHint": True}, N),
        ({"readOnlyHint": True, "destructiveHint": False}, N),
        ({"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}, R),
        ({"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False}, R),
        ({"openWorldHint": True}, N),
        ({"openWorldHint": True, "readOnlyHint": False}, W),  # both ask; "not read-only" is what it says first
        ({"openWorldHint": True, "destructiveHint": False}, N),
        ({"readOnlyHint": False}, W),
        ({"readOnlyHint": False, "destructiveHint": False}, W),
        ({"readOnlyHint": False, "openWorldHint": False}, W),
        ({"readOnlyHint": False, "idempotentHint": True}, W),
        ({"destructiveHint": False}, N),  # annotated, openWorldHint missing: open world
        ({"idempotentHint": True}, N),
        ({"openWorldHint": False}, U),  # closed world, nothing else known
    ],
)
def test_annotations(annotations: dict, expected: Capability) -> None:
    # a neutral name, so that only the annotations decide
    assert infer_capability("frobnicate", None, annotations) is expected


@pytest.mark.parametrize(
    ("name", "annotations", "expected"),
    [
        # annotations that say "riskier" beat read keywords
        ("read_file", {"destructiveHint": True}, W),
        ("read_file", {"readOnlyHint": False}, W),
        ("write_file", {"openWorldHint": True}, N),
        ("get_time", {"readOnlyHint": True, "openWorldHint": True}, N),
        ("fetch_url", {"readOnlyHint": True}, N),
        ("lookup_docs", {"readOnlyHint": True}, N),  # finding 4: sent a secret unasked
        # read-only and closed-world, but the words say data leaves: conflicting evidence asks
        ("fetch_url", {"readOnlyHint": True, "openWorldHint": False}, U),
        ("send_email", {"readOnlyHint": True, "openWorldHint": False}, U),
        # ... while write words do not outweigh the explicit statement (a calculator's "add")
        ("add", {"readOnlyHint": True, "openWorldHint": False}, R),
        ("delete_everything", {"readOnlyHint": True, "openWorldHint": False}, R),
        ("read_file", {"readOnlyHint": True, "openWorldHint": False}, R),
        ("fetch_url", {"openWorldHint": False}, U),
        ("write_file", {"openWorldHint": False}, W),
        ("read_file", {"openWorldHint": False}, R),
    ],
)
def test_annotations_beat_keywords(name: str, annotations: dict, expected: Capability) -> None:
    assert infer_capability(name, None, annotations) is expected


@pytest.mark.parametrize(
    "annotations",
    [
        None,
        {},
        {"title": "Delete stuff"},
        {"destructiveHint": None, "readOnlyHint": None},
        {"readOnlyHint": "true"},  # only real booleans count
        {"destructiveHint": 1},
    ],
)
def test_annotations_without_a_hint_fall_back_to_keywords(annotations) -> None:
    # no real hint: open world by MCP's defaults, so read words alone ask (network)
    assert infer_capability("read_file", None, annotations) is N
    assert infer_capability("write_file", None, annotations) is W
    assert infer_capability("frobnicate", None, annotations) is U


def test_annotations_as_the_adapter_passes_them() -> None:
    ann = types.ToolAnnotations(readOnlyHint=True, openWorldHint=False)
    dumped = ann.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert infer_capability("anything", None, dumped) is R
    ann = types.ToolAnnotations(destructiveHint=True)
    dumped = ann.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert infer_capability("get_thing", None, dumped) is W
    ann = types.ToolAnnotations(readOnlyHint=True)
    dumped = ann.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert infer_capability("anything", None, dumped) is N


# keywords in the name --------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "get_current_time", "list_directory", "search_files", "read_file", "read_text_file",
        "list_allowed_directories", "get_file_info", "directory_tree", "find_symbol", "query_docs",
        "describe_table", "show_logs", "view_issue", "lookup_user", "count_rows", "git_status", "git_diff",
        "git_log", "convert_time", "resolve-library-id", "ping", "echo", "grep", "glob", "ls", "get",
        "list_issues", "search_repositories", "get_me", "calculate",
    ],
)
def test_read_names(name: str) -> None:
    assert words_capability(name, None) is R


@pytest.mark.parametrize(
    "name",
    [
        "write_file", "delete_item", "create_issue", "move_file", "edit_file", "create_directory",
        "remove_user", "update_record", "insert_rows", "drop_table", "rename_branch", "add_comment",
        "append_line", "git_commit", "git_push", "merge_pull_request", "deploy_app", "execute_sql", "run_query",
        "kill_process", "install_package", "save_note", "upsert_row", "truncate_table", "reset_state",
        "close_issue", "archive_project", "replace_text", "apply_patch", "start_service", "restart_server",
        "mkdir", "rm", "chmod", "assign_issue", "approve_pr", "trigger_workflow", "set_config",
        "create_or_update_file", "push_files", "git_add", "git_reset",
    ],
)
def test_write_names(name: str) -> None:
    assert words_capability(name, None) is W


@pytest.mark.parametrize(
    "name",
    [
        "fetch_url", "send_email", "web_search", "fetch", "http_get", "https_request", "browse_page",
        "browser_navigate", "download_file", "upload_file", "post_to_slack", "slack_post_message",
        "publish_package", "send_message", "crawl_site", "scrape_page", "curl", "tweet", "call_webhook",
        "search_web", "get_url",
    ],
)
def test_network_names(name: str) -> None:
    assert words_capability(name, None) is N


@pytest.mark.parametrize("name", ["frobnicate", "do_it", "x", "", "___", "123", "foo-bar", "magic8ball"])
def test_unknown_names(name: str) -> None:
    assert words_capability(name, None) is U


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("createIssue", W),
        ("CreateIssue", W),
        ("deleteItem", W),
        ("getCurrentTime", R),
        ("listDirectory", R),
        ("readFile", R),
        ("fetchUrl", N),
        ("sendEmail", N),
        ("webSearch", N),
        ("getURL", N),
        ("searchFiles", R),
        ("moveFile", W),
    ],
)
def test_camel_case_names(name: str, expected: Capability) -> None:
    assert words_capability(name, None) is expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("READ_FILE", R),
        ("Write-File", W),
        ("fetch.url", N),
        ("fs/read", R),
        ("db:query", R),
        ("tool2write", W),
        ("s3_upload", N),
    ],
)
def test_separators_case_and_digits(name: str, expected: Capability) -> None:
    assert words_capability(name, None) is expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # network is checked before write, write before read: the riskier reading wins
        ("search_and_send", N),
        ("read_and_delete", W),
        ("get_or_create", W),
        ("fetch_and_write", N),
        ("list_then_upload", N),
    ],
)
def test_riskier_keyword_wins(name: str, expected: Capability) -> None:
    assert words_capability(name, None) is expected


def test_keywords_are_whole_words() -> None:
    # "settings" is not "set", "address" is not "add", "reader" is not "read"
    assert words_capability("settings", None) is U
    assert words_capability("address_book", None) is U
    assert words_capability("reader", None) is U


# description fallback -------------------------------------------------


@pytest.mark.parametrize(
    ("description", "expected"),
    [
        ("Delete the given record.", W),
        ("Create a new widget in the store.", W),
        ("Get the weather for a city.", R),
        ("List all widgets.", R),
        ("Fetch a web page and return it as markdown.", N),
        ("Send a message to a channel", N),
        ("Does something mysterious.", U),
        ("", U),
    ],
)
def test_description_is_the_fallback(description: str, expected: Capability) -> None:
    assert words_capability("frobnicate", description) is expected


def test_write_or_network_words_in_the_description_win_over_a_read_name() -> None:
    # issue 25, finding 4: "query" read as a read tool and ran DROP TABLE unasked
    assert words_capability("query", "Run a SQL statement") is W
    assert words_capability("query", "Run a SQL statement against the database. Returns rows.") is W
    assert words_capability("lookup_docs", "Send the query to the docs service.") is N
    assert words_capability("read_file", "Delete things. Also send emails.") is W
    assert words_capability("delete_file", "Read the file first.") is W
    assert words_capability("read_file", "Read a file from the workspace.") is R


def test_only_the_first_sentence_of_the_description_counts() -> None:
    desc = "Frobnicate the widget. It is advisable not to delete or send anything afterwards."
    assert words_capability("frobnicate", desc) is U
    assert words_capability("frobnicate", "Return the widget! Then delete it.") is U
    assert words_capability("frobnicate", "List widgets? Then delete them.") is R
    assert words_capability("frobnicate", "  Get the widget.\nDelete nothing.") is R


def test_annotations_and_description_in_conflict_ask() -> None:
    assert infer_capability("frobnicate", "Delete all records.", {"readOnlyHint": True}) is N
    assert infer_capability("frobnicate", "Upload all records.", {"readOnlyHint": True, "openWorldHint": False}) is U
    assert infer_capability("add", "Add two numbers.", {"readOnlyHint": True, "openWorldHint": False}) is R
    assert infer_capability("frobnicate", "Get the record.", {"readOnlyHint": True, "openWorldHint": False}) is R


def test_returns_a_capability() -> None:
    result = words_capability("read_file", None)
    assert isinstance(result, Capability)
    assert result == "read"


@pytest.mark.parametrize("name", ["get_current_time", "lookup_docs", "read_file", "query"])
def test_read_words_without_any_hint_are_open_world_and_ask(name: str) -> None:
    # MCP's defaults: a tool that gives no hint is open world; read words alone never run unasked
    assert infer_capability(name, None, None) is N
    assert infer_capability(name, "Look things up.", {}) is N


def test_write_and_unknown_words_without_any_hint_keep_their_class() -> None:
    assert infer_capability("delete_item", None, None) is W
    assert infer_capability("frobnicate", None, None) is U
