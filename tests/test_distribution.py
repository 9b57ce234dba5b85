"""agent-ls as a real distribution (issue 31 item 1): ``python -m build`` makes a wheel and an
sdist from the tracked files, ``twine check`` passes, and the wheel installs into a clean virtual
environment where ``agent-ls --version``, a demo-style smoke (``agent-ls demo`` on the repository's
demo workspace, ``agent-ls chat`` one-shot on the scripted LLM) and ``agent-ls acp`` (a prompt
answered through the ACP package's client) run from the installed command.

Nothing is downloaded: the build's isolated environment and the venv's dependencies come from the
wheelhouse that scripts/setup.sh prepares in .tools/wheelhouse (``pip --no-index --find-links``).
"""

from __future__ import annotations

import asyncio
import email
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import venv
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from acp import spawn_agent_process, text_block
from acp.schema import ClientCapabilities, FileSystemCapabilities

import agent_ls
from tests.acp.conftest import AcpSetup, RecordingClient
from tests.harness import REPO_ROOT, fresh_setup
from tests.harness import llm_server as llm_server  # the session's scripted LLM (a fixture)
from tests.llm.scripted_server import ScriptedLLM, text

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

WHEELHOUSE = REPO_ROOT / ".tools" / "wheelhouse"
VERSION = agent_ls.__version__


def offline_pip_env() -> dict[str, str]:
    """pip (also inside `python -m build`'s isolated environment) reads only the wheelhouse."""
    if not any(WHEELHOUSE.glob("setuptools-*.whl")):
        pytest.fail(f"no wheelhouse at {WHEELHOUSE}: run scripts/setup.sh (its 'wheelhouse' step)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") and k != "PYTHONPATH"}
    env.update({"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(WHEELHOUSE), "PIP_DISABLE_PIP_VERSION_CHECK": "1",
                "PIP_CONFIG_FILE": os.devnull})
    return env


def run(cmd: list[str | Path], *, env: dict[str, str], cwd: Path, timeout: float = 300) -> str:
    out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, cwd=cwd,
                         timeout=timeout)
    assert out.returncode == 0, f"{cmd} exited {out.returncode}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout


@dataclass
class Dist:
    wheel: Path
    sdist: Path


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Dist:
    """`python -m build` (sdist, then the wheel from the sdist) on a copy of the tracked files."""
    src = tmp_path_factory.mktemp("src")
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO_ROOT, capture_output=True, check=True).stdout
    for rel in filter(None, files.decode().split("\0")):
        p = REPO_ROOT / rel
        if p.is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(p, src / rel)
    out = tmp_path_factory.mktemp("dist")
    run([sys.executable, "-m", "build", "--outdir", out, src], env=offline_pip_env(), cwd=src)
    wheels, sdists = list(out.glob("*.whl")), list(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(p.name for p in out.iterdir())
    return Dist(wheels[0], sdists[0])


def test_wheel_and_sdist_metadata(dist: Dist) -> None:
    assert dist.wheel.name == f"agent_ls-{VERSION}-py3-none-any.whl"
    assert dist.sdist.name == f"agent_ls-{VERSION}.tar.gz"
    with zipfile.ZipFile(dist.wheel) as z:
        names = z.namelist()
        info = f"agent_ls-{VERSION}.dist-info"
        meta = email.message_from_string(z.read(f"{info}/METADATA").decode())
        entry_points = z.read(f"{info}/entry_points.txt").decode()
    assert meta["Name"] == "agent-ls" and meta["Version"] == VERSION
    assert meta["Requires-Python"] == ">=3.11"
    assert meta["License-Expression"] == "MIT" and meta["License-File"] == "LICENSE"
    assert meta["Description-Content-Type"] == "text/markdown"
    assert "# agent-ls" in str(meta.get_payload())  # the README is the long description
    declared = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    runtime = [r for r in meta.get_all("Requires-Dist") or [] if "extra ==" not in r]
    assert len(runtime) == len(declared), runtime
    assert "agent-ls = agent_ls.cli:main" in entry_points
    assert f"{info}/licenses/LICENSE" in names
    assert "agent_ls/__init__.py" in names and "agent_ls/cli/__init__.py" in names
    assert not [n for n in names if n.startswith(("tests/", "scripts/", "editor-extension/"))]
    with tarfile.open(dist.sdist) as t:
        members = {m.split("/", 1)[1] for m in t.getnames() if "/" in m}
    assert {"pyproject.toml", "README.md", "LICENSE", "agent_ls/__init__.py"} <= members


def test_twine_check(dist: Dist) -> None:
    out = run([sys.executable, "-m", "twine", "check", "--strict", dist.wheel, dist.sdist],
              env=offline_pip_env(), cwd=dist.wheel.parent)
    assert out.count("PASSED") == 2, out


@pytest.fixture(scope="module")
def installed(dist: Dist, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clean venv (no system site-packages, not this repository's venv) with the wheel installed."""
    env_dir = tmp_path_factory.mktemp("venv") / "env"
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    py = env_dir / "bin" / "python"
    run([py, "-m", "pip", "install", "-q", dist.wheel], env=offline_pip_env(), cwd=env_dir)
    return env_dir / "bin"


@pytest.fixture
def setup(tmp_path: Path, llm_server: ScriptedLLM) -> Iterator[AcpSetup]:
    yield from fresh_setup(AcpSetup, tmp_path, llm_server)


def installed_env(setup: AcpSetup) -> dict[str, str]:
    """The test's settings and scripted LLM, but nothing of this repository on the import path."""
    env = setup.env()
    env.pop("PYTHONPATH", None)
    return env


def test_installed_command_version_and_import_location(installed: Path, setup: AcpSetup) -> None:
    env = installed_env(setup)
    assert run([installed / "agent-ls", "--version"], env=env, cwd=setup.ws).strip() == f"agent-ls {VERSION}"
    where = run([installed / "python", "-c", "import agent_ls; print(agent_ls.__file__)"], env=env, cwd=setup.ws)
    assert str(installed.parent) in where  # the wheel's copy, not this checkout


def test_installed_demo_and_chat_smoke(installed: Path, setup: AcpSetup) -> None:
    env = installed_env(setup)
    # an installed wheel has no demo/ folder: a clear error, not a traceback
    bare = subprocess.run([installed / "agent-ls", "demo"], env=env, cwd=setup.ws, capture_output=True, text=True,
                          timeout=120)
    assert bare.returncode == 2 and "ships with the agent-ls source repository" in bare.stderr, bare
    assert "Traceback" not in bare.stderr
    out = run([installed / "agent-ls", "demo", "--workspace", REPO_ROOT / "demo"], env=env, cwd=setup.ws)
    assert "Demo finished: the host works." in out, out
    setup.llm.script(text("Hello from the installed agent"))
    out = run([installed / "agent-ls", "chat", "say hello", "--workspace", setup.ws], env=env, cwd=setup.ws)
    assert "Hello from the installed agent" in out, out


async def test_installed_acp_answers_a_prompt(installed: Path, setup: AcpSetup) -> None:
    client = RecordingClient()
    with open(setup.stderr_file, "ab") as err:
        async with spawn_agent_process(client, str(installed / "agent-ls"), "acp", env=installed_env(setup),
                                       cwd=setup.ws, transport_kwargs={"stderr": err.fileno()}) as (conn, _):
            caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=False, write_text_file=False))
            init = await asyncio.wait_for(conn.initialize(protocol_version=1, client_capabilities=caps), 60)
            assert init.agent_info.name == "agent-ls" and init.agent_info.version == VERSION
            session = await conn.new_session(cwd=str(setup.ws), mcp_servers=[])
            setup.llm.script(text("answered over ACP"))
            result = await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                                        prompt=[text_block("hi")]), 60)
            assert result.stop_reason == "end_turn", setup.stderr_text()
            assert client.text(session.session_id) == "answered over ACP"
            await conn.close()
