"""The fixture catalogue of the tool_search tests: tool definitions shaped like those of real MCP
servers (GitHub, filesystem, SQLite and others), as ToolSpecs in SPECS. Also imported by a
subprocess in test_tool_search.py (the hash-seed check)."""

from __future__ import annotations

from typing import Any

from agent_ls.core.tools import ToolSpec


def obj(**props: str) -> dict[str, Any]:
    return {"type": "object", "properties": {k: {"type": v} for k, v in props.items()}}


def mcp(server: str, name: str, description: str, schema: dict[str, Any] | None = None) -> ToolSpec:
    return ToolSpec(
        name=f"mcp__{server}__{name}",
        description=description,
        input_schema=schema or obj(),
        source="mcp",
        server=server,
        display_name=name,
    )


GITHUB = [
    ("create_issue", "Create a new issue in a GitHub repository.",
     obj(owner="string", repo="string", title="string", body="string", labels="array")),
    ("get_issue", "Get details of a specific issue in a GitHub repository.",
     obj(owner="string", repo="string", issue_number="number")),
    ("list_issues", "List issues in a GitHub repository with filtering options.",
     obj(owner="string", repo="string", state="string")),
    ("update_issue", "Update an existing issue in a GitHub repository.",
     obj(owner="string", repo="string", issue_number="number", state="string")),
    ("add_issue_comment", "Add a comment to an existing issue.",
     obj(owner="string", repo="string", issue_number="number", body="string")),
    ("search_repositories", "Search for GitHub repositories.", obj(query="string", page="number")),
    ("search_code", "Search for code across GitHub repositories.", obj(q="string")),
    ("search_users", "Search for users on GitHub.", obj(q="string")),
    ("create_repository", "Create a new GitHub repository in your account.",
     obj(name="string", private="boolean")),
    ("fork_repository", "Fork a GitHub repository to your account or specified organization.",
     obj(owner="string", repo="string", organization="string")),
    ("get_file_contents", "Get the contents of a file or directory from a GitHub repository.",
     obj(owner="string", repo="string", path="string", branch="string")),
    ("create_or_update_file", "Create or update a single file in a GitHub repository.",
     obj(owner="string", repo="string", path="string", content="string", message="string", branch="string")),
    ("push_files", "Push multiple files to a GitHub repository in a single commit.",
     obj(owner="string", repo="string", branch="string", files="array", message="string")),
    ("create_branch", "Create a new branch in a GitHub repository.",
     obj(owner="string", repo="string", branch="string", from_branch="string")),
    ("list_commits", "Get list of commits of a branch in a GitHub repository.",
     obj(owner="string", repo="string", sha="string")),
    ("create_pull_request", "Create a new pull request in a GitHub repository.",
     obj(owner="string", repo="string", title="string", head="string", base="string")),
    ("list_pull_requests", "List and filter repository pull requests.",
     obj(owner="string", repo="string", state="string")),
    ("merge_pull_request", "Merge a pull request.",
     obj(owner="string", repo="string", pull_number="number", merge_method="string")),
    ("get_pull_request_files", "Get the list of files changed in a pull request.",
     obj(owner="string", repo="string", pull_number="number")),
]
FILESYSTEM = [
    ("read_text_file", "Read the complete contents of a file from the file system as text.",
     obj(path="string", head="number", tail="number")),
    ("read_multiple_files", "Read the contents of multiple files simultaneously.", obj(paths="array")),
    ("write_file", "Create a new file or completely overwrite an existing file with new content.",
     obj(path="string", content="string")),
    ("edit_file", "Make line-based edits to a text file. Returns a git-style diff.",
     obj(path="string", edits="array", dryRun="boolean")),
    ("create_directory", "Create a new directory or ensure a directory exists.", obj(path="string")),
    ("list_directory", "Get a detailed listing of all files and directories in a specified path.",
     obj(path="string")),
    ("directory_tree", "Get a recursive tree view of files and directories as a JSON structure.",
     obj(path="string")),
    ("move_file", "Move or rename files and directories.", obj(source="string", destination="string")),
    ("search_files", "Recursively search for files and directories matching a pattern.",
     obj(path="string", pattern="string", excludePatterns="array")),
    ("get_file_info",
     "Retrieve detailed metadata about a file or directory: size, creation time, permissions.",
     obj(path="string")),
    ("list_allowed_directories", "Returns the list of directories that this server is allowed to access.",
     obj()),
]
SQLITE = [
    ("read_query", "Execute a SELECT query on the SQLite database.", obj(query="string")),
    ("write_query", "Execute an INSERT, UPDATE, or DELETE query on the SQLite database.",
     obj(query="string")),
    ("create_table", "Create a new table in the SQLite database.", obj(query="string")),
    ("list_tables", "List all tables in the SQLite database.", obj()),
    ("describe_table", "Get the schema information for a specific table.", obj(table_name="string")),
    ("append_insight", "Add a business insight to the memo.", obj(insight="string")),
]
OTHERS = [
    ("time", "get_current_time", "Get current time in a specific timezone.", obj(timezone="string")),
    ("time", "convert_time", "Convert time between timezones.",
     obj(source_timezone="string", time="string", target_timezone="string")),
    ("fetch", "fetch", "Fetches a URL from the internet and optionally extracts its contents as markdown.",
     obj(url="string", max_length="integer", raw="boolean")),
    ("slack", "slack_post_message", "Post a new message to a Slack channel.",
     obj(channel_id="string", text="string")),
    ("slack", "slack_list_channels", "List public channels in the workspace with pagination.",
     obj(limit="number", cursor="string")),
    ("memory", "create_entities", "Create multiple new entities in the knowledge graph.",
     obj(entities="array")),
    ("memory", "delete_entities",
     "Delete multiple entities and their associated relations from the knowledge graph.",
     obj(entityNames="array")),
    ("memory", "search_nodes", "Search for nodes in the knowledge graph based on a query.",
     obj(query="string")),
]

SPECS = (
    [mcp("github", n, d, s) for n, d, s in GITHUB]
    + [mcp("filesystem", n, d, s) for n, d, s in FILESYSTEM]
    + [mcp("sqlite", n, d, s) for n, d, s in SQLITE]
    + [mcp(srv, n, d, s) for srv, n, d, s in OTHERS]
)
