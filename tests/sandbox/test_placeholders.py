"""The placeholders that keep missing power files read-only (issue 47, item 4 of the follow-up):
a missing ``.mcp.json`` is guarded by an empty read-only folder, so ``git add -A`` in a repository
without one works inside the sandbox (a ``/dev/null`` placeholder made it fail: "can only add
regular files"), while creating the file still fails; the settings loader takes such an empty
folder for an absent file (no diagnostic flickers), and a settings watcher's event for a
placeholder coming or going is known as such (no reload per command)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agent_ls.config.settings import load_settings
from agent_ls.core.sandbox import Mechanism, NetworkPolicy, Sandbox, SandboxPolicy, detect, placeholder_event
from agent_ls.core.sandbox.runner import sweep_placeholders
from tests.sandbox.conftest import Place, run_wrapped

pytestmark = pytest.mark.skipif(detect().mechanism is not Mechanism.BUBBLEWRAP, reason="bubblewrap does not work here")


def _sandbox(place: Place) -> Sandbox:
    return Sandbox(SandboxPolicy.build([str(place.ws)], temp_dir=str(place.tmp), network=NetworkPolicy.off()))


async def test_git_add_all_works_in_a_repository_without_mcp_json_and_the_file_stays_uncreatable(place: Place) -> None:
    subprocess.run(["git", "init", "-q", str(place.ws)], check=True)
    (place.ws / "app.py").write_text("x = 1\n")
    code, out = await run_wrapped(_sandbox(place), (
        "git add -A; echo \"add:$?\"; git status --short; "
        "echo '{\"mcpServers\":{}}' > .mcp.json; echo \"mcp:$?\"; mkdir .mcp.json/x; echo \"inside:$?\""), place)
    assert "add:0" in out and "A  app.py" in out, out
    assert not [line for line in out.splitlines() if line[3:] == ".mcp.json"]  # the placeholder: not staged, not listed
    assert "mcp:0" not in out and "inside:0" not in out
    assert (place.ws / ".mcp.json").is_dir() and not list((place.ws / ".mcp.json").iterdir())
    assert placeholder_event(str(place.ws / ".mcp.json"))  # a watcher's "created" event is the placeholder's
    sweep_placeholders()
    assert not (place.ws / ".mcp.json").exists()
    assert placeholder_event(str(place.ws / ".mcp.json"))  # and so is its "deleted" event
    (place.ws / ".mcp.json").write_text('{"mcpServers": {}}')
    assert not placeholder_event(str(place.ws / ".mcp.json"))  # the user's own file is a change


def test_the_loader_takes_a_placeholder_for_an_absent_settings_file(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_ls.core.sandbox import runner

    ws = tmp_path / "ws"
    (ws / ".mcp.json").mkdir(parents=True)
    loaded = load_settings([ws], user_settings=tmp_path / "none.json", environ={})
    assert any("it is a directory" in d.message for d in loaded.diagnostics)  # the user's own empty folder
    monkeypatch.setitem(runner._placeholder_users, str(ws / ".mcp.json"), 1)  # a sandboxed command holds it now
    loaded = load_settings([ws], user_settings=tmp_path / "none.json", environ={})
    assert [d.message for d in loaded.diagnostics] == []
    (ws / ".mcp.json" / "x").write_text("")  # a folder with content is not a placeholder: said
    loaded = load_settings([ws], user_settings=tmp_path / "none.json", environ={})
    assert any("it is a directory" in d.message for d in loaded.diagnostics)
    assert os.path.isdir(ws / ".mcp.json")
