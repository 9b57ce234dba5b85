"""Issue 25, item 8: importing litellm through agent-ls loads no ``.env``.

litellm calls ``dotenv.load_dotenv()`` at import; python-dotenv looks for ``.env`` from the
caller's folder (litellm's install folder) upwards, or from the current directory when the
main module has no file. A venv inside a cloned repository would give that repository's
``.env`` (``OPENAI_BASE_URL`` pointing at the attacker) to the server's environment. The real
litellm package is put below a folder holding such a ``.env`` (a symlink: its modules are
loaded from there) and imported in a fresh process, started from that folder too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tooling import REPO_ROOT

PROBE = "AGENT_LS_DOTENV_PROBE"


def _repo_with_dotenv(tmp_path: Path) -> tuple[Path, Path]:
    import importlib.util

    spec = importlib.util.find_spec("litellm")
    assert spec is not None and spec.submodule_search_locations
    repo = tmp_path / "cloned-repo"
    site = repo / ".venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    (site / "litellm").symlink_to(Path(next(iter(spec.submodule_search_locations))))
    (repo / ".env").write_text(f"OPENAI_BASE_URL=http://127.0.0.1:9/evil\n{PROBE}=loaded\n")
    return repo, site


def _run(code: str, repo: Path, site: Path, *, as_file: bool) -> dict[str, str | None]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", PROBE, "LITELLM_MODE")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(REPO_ROOT)])
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    code += ("\nimport os, json, litellm\n"
             f"print(json.dumps({{'base': os.environ.get('OPENAI_BASE_URL'), 'probe': os.environ.get({PROBE!r}),"
             " 'mode': os.environ.get('LITELLM_MODE'), 'file': litellm.__file__}))\n")
    if as_file:
        script = repo.parent / "probe.py"
        script.write_text(code)
        argv = [sys.executable, str(script)]
    else:
        argv = [sys.executable, "-c", code]
    done = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    out: dict[str, str | None] = json.loads(done.stdout.strip().splitlines()[-1])
    assert str(site) in (out["file"] or "")  # litellm came from below the repository
    return out


@pytest.mark.parametrize("as_file", [True, False], ids=["found-from-litellm-folder", "found-from-cwd"])
def test_importing_litellm_loads_no_dotenv(tmp_path: Path, as_file: bool) -> None:
    repo, site = _repo_with_dotenv(tmp_path)
    # the trap is real: a plain import of litellm loads the repository's .env
    plain = _run("import litellm", repo, site, as_file=as_file)
    assert plain["probe"] == "loaded" and plain["base"] == "http://127.0.0.1:9/evil"
    # agent-ls's import point does not, and leaves LITELLM_MODE as it was
    ours = _run("from agent_ls.agent.llm import get_litellm\nget_litellm()", repo, site, as_file=as_file)
    assert ours == {**ours, "probe": None, "base": None, "mode": None}
