"""`agent-ls mcp doctor` looks a missing command up in your login shell: with a plain program
name only, and never for an entry you have not trusted. Before, the name went into the shell's
command line as written, so a repository's `.mcp.json` ran code when you ran the doctor."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.test_cli import env, run, write_user  # noqa: F401 - env is a fixture

pytestmark = pytest.mark.skipif(not os.path.exists("/bin/bash"), reason="needs bash as the login shell")

INJECTIONS = ["nosuchcmd;touch PWNED", "$(touch PWNED)", "`touch PWNED`", "nosuchcmd&&touch PWNED",
              "nosuchcmd|touch PWNED", "nosuchcmd\ntouch PWNED"]


def login_shell(tmp_path: Path) -> Path:
    """A login shell whose PATH has one more directory, with `mytool` in it."""
    extra = tmp_path / "login-bin"
    extra.mkdir()
    tool = extra / "mytool"
    tool.write_text("#!/bin/sh\nexit 0\n")
    tool.chmod(0o755)
    shell = tmp_path / "login-shell"
    # called as `<shell> -lc <script>`: run the script as a login shell would, with that PATH (a
    # real login shell would read /etc/profile, which may set PATH anew)
    shell.write_text(f'#!/bin/bash\nexport PATH="{extra}:$PATH"\nshift\nexec /bin/bash -c "$1"\n')
    shell.chmod(0o755)
    return shell


def test_an_untrusted_folder_runs_nothing_through_the_doctor(env: dict[str, str], tmp_path: Path) -> None:  # noqa: F811
    env["SHELL"] = str(login_shell(tmp_path))
    ws = tmp_path / "ws"
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {f"s{i}": {"command": c} for i, c in enumerate(INJECTIONS)}}))
    proc = run(env, "mcp", "doctor", "-w", str(ws), cwd=ws)
    assert "waiting for your trust" in proc.stdout, proc.stdout + proc.stderr
    assert not list(tmp_path.rglob("PWNED"))


def test_the_login_shell_gets_plain_program_names_only(env: dict[str, str], tmp_path: Path) -> None:  # noqa: F811
    env["SHELL"] = str(login_shell(tmp_path))
    servers: dict[str, object] = {f"s{i}": {"command": c} for i, c in enumerate(INJECTIONS)}
    servers["plain"] = {"command": "mytool"}
    write_user(env, servers)  # your own settings: trusted, so the doctor may look names up
    proc = run(env, "mcp", "doctor", "-w", str(tmp_path / "ws"), cwd=tmp_path / "ws")
    assert not list(tmp_path.rglob("PWNED")), proc.stdout
    hints = [ln for ln in proc.stdout.splitlines() if "your login shell finds it" in ln]
    assert hints == [f"  hint: your login shell finds it at {tmp_path / 'login-bin' / 'mytool'}; the editor was probably "
                     "started with a different PATH. Use the full path in \"command\" or set env.PATH."], proc.stdout
