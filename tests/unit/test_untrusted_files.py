"""A repository can put a named pipe (FIFO), a device or a directory where agent-ls expects a
settings or instructions file. Opening a FIFO waits for a writer for ever: each test runs the
read in a thread with a deadline, so a regression fails here instead of hanging the suite."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_ls.agent.prompt import project_instructions
from agent_ls.config.settings import MAX_SETTINGS_BYTES
from agent_ls.core.files import NotRegularFile, read_regular_file
from tests.unit.settings_helpers import agent_ls_file, errors, load, ws

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")

DEADLINE = 10.0


def bounded(fn: Callable[[], Any]) -> Any:
    """``fn()``, failing the test if it has not returned within :data:`DEADLINE` seconds."""
    out: list[Any] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            out.append(fn())
        except BaseException as e:  # noqa: BLE001 - re-raised in the test's thread
            failure.append(e)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(DEADLINE)
    assert not worker.is_alive(), f"still blocked after {DEADLINE} s (reading a FIFO?)"
    if failure:
        raise failure[0]
    return out[0]


def test_read_regular_file_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFile) as info:
        bounded(lambda: read_regular_file(fifo, 100))
    assert info.value.strerror == "a named pipe (FIFO)" and info.value.filename == str(fifo)
    with pytest.raises(NotRegularFile, match="a directory"):
        read_regular_file(tmp_path, 100)
    with pytest.raises(NotRegularFile, match="a device"):
        read_regular_file("/dev/zero", 100)  # would never end without the limit either
    with pytest.raises(FileNotFoundError):
        read_regular_file(tmp_path / "absent", 100)


def test_read_regular_file_reads_at_most_one_byte_past_the_limit(tmp_path: Path) -> None:
    f = tmp_path / "big"
    f.write_bytes(b"x" * 1000)
    assert read_regular_file(f, 1000) == b"x" * 1000
    assert read_regular_file(f, 10) == b"x" * 11  # the caller sees it is too large


def test_a_fifo_settings_file_is_reported_and_the_other_files_still_load(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    os.mkfifo(folder / ".mcp.json")
    (folder / ".vscode").mkdir()
    os.mkfifo(folder / ".vscode" / "mcp.json")
    agent_ls_file(folder, {"kept": {"command": "echo"}})
    loaded = bounded(lambda: load(tmp_path, [folder]))
    assert set(loaded.servers) == {"kept"}
    problems = {d.file: d.message for d in errors(loaded)}
    assert set(problems) == {folder / ".mcp.json", folder / ".vscode" / "mcp.json"}
    assert problems[folder / ".mcp.json"] == (
        "cannot read the file: it is a named pipe (FIFO), not a regular file; it is ignored")


def test_a_settings_file_over_the_limit_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    (folder / ".mcp.json").write_bytes(b" " * (MAX_SETTINGS_BYTES + 1))
    loaded = load(tmp_path, [folder])
    assert [d.message.split(";")[0] for d in errors(loaded)] == [
        f"the file is larger than {MAX_SETTINGS_BYTES // 1024} KiB, the limit for a settings file"]


def test_a_fifo_instructions_file_is_skipped_for_the_next_one(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "AGENTS.md")
    (tmp_path / "CLAUDE.md").write_text("from CLAUDE.md")
    assert bounded(lambda: project_instructions([tmp_path])) == "# Project instructions (CLAUDE.md)\nfrom CLAUDE.md"


def test_a_huge_instructions_file_is_cut_without_reading_it_all(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_bytes(b"y" * 5_000_000)
    text = project_instructions([tmp_path])
    assert text.endswith("\n[... the rest of the file cut]") and len(text) < 20_100


def test_mcp_status_on_a_folder_with_fifo_settings_ends(tmp_path: Path) -> None:
    """The command line: before the fix, ``agent-ls mcp status`` waited on the FIFO for ever."""
    folder = ws(tmp_path)
    os.mkfifo(folder / ".mcp.json")
    env = {**os.environ, "AGENT_LS_CONFIG_DIR": str(tmp_path / "config"), "AGENT_LS_DATA_DIR": str(tmp_path / "data")}
    out = subprocess.run([sys.executable, "-m", "agent_ls", "mcp", "status", "-w", str(folder)], env=env,
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert "No MCP servers are configured." in out.stdout
    assert f"{folder / '.mcp.json'}: error: (root): cannot read the file: it is a named pipe (FIFO)" in out.stderr


def test_an_instructions_symlink_out_of_the_folder_is_not_followed(tmp_path: Path) -> None:
    """A repository must not put a file of yours (``~/.aws/credentials``) into the conversation;
    a symlink that stays inside the folder keeps working (CLAUDE.md -> AGENTS.md is common)."""
    secret = tmp_path / "credentials"
    secret.write_text("aws_secret_access_key = hunter2")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "instructions.md").write_text("aws_secret_access_key = hunter2")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "AGENTS.md").symlink_to(secret)
    (repo / ".agent-ls").symlink_to(outside, target_is_directory=True)
    assert project_instructions([repo]) == ""
    (repo / "docs").mkdir()
    (repo / "docs" / "agents.md").write_text("Use tabs.")
    (repo / "CLAUDE.md").symlink_to(repo / "docs" / "agents.md")
    assert project_instructions([repo]) == "# Project instructions (CLAUDE.md)\nUse tabs."
