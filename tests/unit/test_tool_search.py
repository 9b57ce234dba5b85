"""Ranking for deferred MCP tools (tool_search)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agent_ls.agent.tools.tool_search import SearchResult, ToolIndex, normalize, synonym_group, tokenize
from agent_ls.core.tools import ToolSpec
from tests.unit.tool_search_catalogue import SPECS, mcp, obj

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def index() -> ToolIndex:
    assert len(SPECS) >= 30
    return ToolIndex(SPECS)


def test_tokenize():
    assert tokenize("mcp__github__create_issue") == ["github", "create", "issue"]
    assert tokenize("getFileContents") == ["get", "file", "content", "getfilecontent"]
    assert tokenize("HTTPServer-list") == ["http", "server", "httpserver", "list"]
    assert tokenize("SQLite") == ["sq", "lite", "sqlite"]
    assert tokenize("Delete the branches, remove entries") == ["delete", "branch", "remove", "entry"]
    assert [normalize(w) for w in ("Repos", "status", "classes", "boxes")] == [
        "repo",
        "status",
        "class",
        "box",
    ]
    assert synonym_group("remove") == synonym_group("delete") == "~delete"
    assert synonym_group("repo") == "~repository"
    assert synonym_group("issue") == "~issue" and synonym_group("zebra") is None


def test_select_exact_in_order(index: ToolIndex):
    result = index.search("select:mcp__sqlite__list_tables,mcp__github__create_issue")
    assert isinstance(result, SearchResult) and result.select
    assert result.names == ["mcp__sqlite__list_tables", "mcp__github__create_issue"]
    assert result.missing == ()
    assert (
        list(result) == list(result.found)
        and len(result) == 2
        and result[0].name == "mcp__sqlite__list_tables"
    )


def test_select_missing_and_tolerance(index: ToolIndex):
    result = index.search(
        " SELECT: mcp__github__nope , mcp__fetch__fetch,, mcp__fetch__fetch, MCP__TIME__CONVERT_TIME"
    )
    assert result.names == ["mcp__fetch__fetch", "mcp__time__convert_time"]
    assert result.missing == ("mcp__github__nope",)
    # the server's own tool name, when unique, is accepted
    assert index.search("select:directory_tree").names == ["mcp__filesystem__directory_tree"]
    # select ignores the limit
    names = ",".join(s.name for s in SPECS[:8])
    assert len(index.search(f"select:{names}", limit=2)) == 8
    assert index.search("select:").found == ()


def test_select_ambiguous_is_missing():
    a = mcp("one", "search", "Search one.")
    b = mcp("two", "search", "Search two.")
    result = ToolIndex([a, b]).search("select:search,mcp__two__search")
    assert result.missing == ("search",)
    assert result.names == ["mcp__two__search"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("create issue", "mcp__github__create_issue"),
        ("open a new ticket", "mcp__github__create_issue"),
        ("createIssue", "mcp__github__create_issue"),
        ("comment on an issue", "mcp__github__add_issue_comment"),
        ("merge pr", "mcp__github__merge_pull_request"),
        ("open pull requests list", "mcp__github__list_pull_requests"),
        ("new branch", "mcp__github__create_branch"),
        ("commit history", "mcp__github__list_commits"),
        ("fork repo", "mcp__github__fork_repository"),
        ("search code", "mcp__github__search_code"),
        ("find users", "mcp__github__search_users"),
        ("read text file", "mcp__filesystem__read_text_file"),
        ("read several files at once", "mcp__filesystem__read_multiple_files"),
        ("rename file", "mcp__filesystem__move_file"),
        ("directory tree", "mcp__filesystem__directory_tree"),
        ("make folder", "mcp__filesystem__create_directory"),
        ("find files matching pattern", "mcp__filesystem__search_files"),
        ("file size permissions metadata", "mcp__filesystem__get_file_info"),
        ("allowed directories", "mcp__filesystem__list_allowed_directories"),
        ("sql select", "mcp__sqlite__read_query"),
        ("insert rows sql", "mcp__sqlite__write_query"),
        ("list tables", "mcp__sqlite__list_tables"),
        ("table schema", "mcp__sqlite__describe_table"),
        ("current time", "mcp__time__get_current_time"),
        ("convert timezone", "mcp__time__convert_time"),
        ("download web page url", "mcp__fetch__fetch"),
        ("send slack message", "mcp__slack__slack_post_message"),
        ("slack channels", "mcp__slack__slack_list_channels"),
        ("remove entities", "mcp__memory__delete_entities"),
        ("knowledge graph search", "mcp__memory__search_nodes"),
        ("mcp__github__get_issue", "mcp__github__get_issue"),
        ("add comment", "mcp__github__add_issue_comment"),
        ("new repo", "mcp__github__create_repository"),
        ("upload several files commit", "mcp__github__push_files"),
        ("overwrite file", "mcp__filesystem__write_file"),
        ("list files in folder", "mcp__filesystem__list_directory"),
        ("erase knowledge entities", "mcp__memory__delete_entities"),
        ("show commits", "mcp__github__list_commits"),
        ("post to channel", "mcp__slack__slack_post_message"),
        ("query database", "mcp__sqlite__read_query"),
    ],
)
def test_obvious_tool_first(index: ToolIndex, query: str, expected: str):
    result = index.search(query)
    assert not result.select and result.missing == ()
    assert result.names, query
    assert result.names[0] == expected, (query, result.names)


def test_server_name_query(index: ToolIndex):
    names = index.search("sqlite", limit=10).names
    assert len(names) == 6 and all(n.startswith("mcp__sqlite__") for n in names)


def test_required_term(index: ToolIndex):
    names = index.search("+slack list", limit=10).names
    assert names and all(n.startswith("mcp__slack__") for n in names)
    assert names[0] == "mcp__slack__slack_list_channels"
    assert index.search("+nothingmatches list").found == ()


def test_limit_and_no_match(index: ToolIndex):
    assert len(index.search("file", limit=3)) == 3
    assert len(index.search("file")) == 5
    assert index.search("file", limit=0).found == ()
    assert index.search("zzzqqq").found == ()
    assert index.search("the of and").found == ()
    assert index.search("").found == ()
    assert ToolIndex([]).search("anything").found == ()


def test_ties_sorted_by_name():
    same = {"description": "Do the same thing.", "input_schema": obj()}
    specs = [ToolSpec(name=n, **same) for n in ("zeta_thing", "alpha_thing", "mid_thing")]
    ranked = ToolIndex(specs).rank("thing")
    assert [s.name for s, _ in ranked] == ["alpha_thing", "mid_thing", "zeta_thing"]
    assert len({score for _, score in ranked}) == 1


def test_deterministic_across_hash_seeds(index: ToolIndex):
    queries = ["file", "create", "list", "search", "read", "github repository", "delete"]
    code = textwrap.dedent(
        """
        import json, sys
        sys.path.insert(0, sys.argv[1])
        from tests.unit.tool_search_catalogue import SPECS
        from agent_ls.agent.tools.tool_search import ToolIndex
        index = ToolIndex(SPECS)
        print(json.dumps([[(s.name, sc) for s, sc in index.rank(q, 10)] for q in json.loads(sys.argv[2])]))
        """
    )
    outputs = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code, str(REPO), json.dumps(queries)],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
        outputs.add(out)
    assert len(outputs) == 1
    here = [[[s.name, sc] for s, sc in index.rank(q, 10)] for q in queries]
    assert json.loads(outputs.pop()) == here
    # and the same index answers the same twice
    assert index.search("file", limit=10) == index.search("file", limit=10)


def test_builtin_names_without_server():
    specs = [
        ToolSpec("read", "Read a file in the workspace.", obj(path="string")),
        ToolSpec("bash", "Run a shell command.", obj(command="string")),
        ToolSpec("grep", "Search file contents with a regular expression.", obj(pattern="string")),
    ]
    index = ToolIndex(specs)
    assert index.search("execute shell command").names[0] == "bash"
    assert index.search("regex search").names[0] == "grep"


def test_select_accepts_the_catalogue_form(index: ToolIndex):
    # the deferred catalogue lists "github: create_issue, ..."; the model may drop the mcp__ prefix
    assert index.search("select:github__create_issue,sqlite__list_tables").names == [
        "mcp__github__create_issue", "mcp__sqlite__list_tables"]
    assert index.search("select:nope__create_issue").missing == ("nope__create_issue",)


def _snapshot_specs() -> list[ToolSpec]:
    data = json.loads((REPO / "scripts" / "data" / "real_tools.json").read_text())
    return [ToolSpec(name=t["model_name"], description=t["description"] or "", input_schema=t["input_schema"],
                     source="mcp", server=t["server"], display_name=t["name"]) for t in data["tools"]]


def test_recall_at_5_on_real_server_definitions():
    """The labelled queries of scripts/bench_agent.py over the real servers' tool definitions
    (snapshot written by `bench_agent.py --snapshot`): recall@5 must stay >= 0.95."""
    specs = _snapshot_specs()
    queries = json.loads((REPO / "scripts" / "data" / "tool_search_queries.json").read_text())["queries"]
    assert len(specs) >= 100 and len(queries) >= 40
    assert len({s.server for s in specs}) >= 8
    index = ToolIndex(specs)
    labels = {f"{s.server}/{s.display_name}" for s in specs}
    recalls = []
    for q in queries:
        assert set(q["relevant"]) <= labels, q
        top = [f"{s.server}/{s.display_name}" for s in index.search(q["query"], limit=5)]
        recalls.append(len(set(top) & set(q["relevant"])) / min(len(q["relevant"]), 5))
    recall = sum(recalls) / len(recalls)
    assert recall >= 0.95, recall
