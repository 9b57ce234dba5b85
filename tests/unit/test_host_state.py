"""host-state.json (agent_ls/config/state.py): decisions of several processes on one file are
never lost, another process's decision is seen without a restart, a corrupt file is set aside
and reported (never replaced by something that trusts more)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from agent_ls.config.state import HostState

REPO_ROOT = Path(__file__).resolve().parents[2]

WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from agent_ls.config.state import HostState

    path, who, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    ws = Path(sys.argv[4])
    state = HostState(path)
    sys.stdout.write("ready\\n"); sys.stdout.flush()
    sys.stdin.readline()  # start together
    for i in range(rounds):
        kind = i % 3
        if kind == 0:
            state.set_trust(ws, f"{who}-key-{i}", True, name=f"{who}-{i}", entry={"command": who})
        elif kind == 1:
            state.set_enabled(ws, f"{who}-server-{i}", i % 2 == 0)
        else:
            state.set_workspace_decision(ws / f"{who}-{i}", f"digest-{i}", True, [])
""")


def test_two_processes_recording_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "data" / "host-state.json"
    ws = tmp_path / "ws"
    ws.mkdir()
    rounds = 150
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), who, str(rounds), str(ws)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
             for who in ("a", "b")]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline() == "ready\n"
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:
        assert p.wait(timeout=120) == 0
    state = HostState(path)
    for who in ("a", "b"):
        for i in range(rounds):
            kind = i % 3
            if kind == 0:
                assert state.trust(ws, f"{who}-key-{i}") is True, (who, i)
            elif kind == 1:
                assert state.enabled_override(ws, f"{who}-server-{i}") is (i % 2 == 0), (who, i)
            else:
                decision = state.workspace_decision(ws / f"{who}-{i}")
                assert decision is not None and decision["digest"] == f"digest-{i}", (who, i)
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)


def test_a_decision_from_another_process_is_seen_without_restarting(tmp_path: Path) -> None:
    path = tmp_path / "host-state.json"
    mine, theirs = HostState(path), HostState(path)
    assert mine.trust(tmp_path, "k") is None
    theirs.set_trust(tmp_path, "k", True, name="srv", entry={"command": "x"})
    assert mine.trust(tmp_path, "k") is True
    assert mine.last_trusted_entry(tmp_path, "srv") == {"command": "x"}
    mine.set_enabled(tmp_path, "srv", False)
    assert theirs.enabled_override(tmp_path, "srv") is False and theirs.trust(tmp_path, "k") is True


def test_the_old_format_of_entry_decisions_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "host-state.json"
    path.write_text(json.dumps({"trust": {str(tmp_path.resolve()): {"k1": True, "k2": False}}}))
    state = HostState(path)
    assert state.trust(tmp_path, "k1") is True and state.trust(tmp_path, "k2") is False
    assert state.last_trusted_entry(tmp_path, "anything") is None


def test_a_corrupt_file_is_set_aside_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "host-state.json"
    path.write_text('{"trust": {"/ws": {"k": tru')  # a torn write by some other tool
    state = HostState(path)
    assert state.trust(Path("/ws"), "k") is None  # nothing trusted, never more
    assert state.problem is not None and "could not be read" in state.problem
    aside = list(tmp_path.glob("host-state.json.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_text().startswith('{"trust"')
    assert not path.exists()
    state.set_trust(Path("/ws"), "k2", True)
    assert json.loads(path.read_text())["trust"][str(Path("/ws").resolve())]["k2"]["trusted"] is True
    for bad in ("[1, 2]", "\xff\xfe"):
        path.write_bytes(bad.encode("latin-1"))
        fresh = HostState(path)
        assert fresh.trust(Path("/ws"), "k2") is None and fresh.problem is not None
