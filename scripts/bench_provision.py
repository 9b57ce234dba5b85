"""What the extension's first-run provisioning costs, step by step (editor-extension/src/provision.ts).

    .venv/bin/python scripts/bench_provision.py [--runs 3] [--wheel W --wheelhouse DIR]

The extension's own ``Provisioner.install`` (bundled from src/provision.ts with esbuild and run
under node, real subprocesses) installs a wheel into a new virtual environment, from a wheelhouse
(``--no-index``, no network), two ways that alternate in the same run:

- baseline: a base interpreter without pip (a ``venv --without-pip`` of this machine's python3),
  so the environment gets its own pip from ensurepip and installs with it (what every install did
  before);
- base pip: this machine's python3, whose pip (>= 22.3) installs into the environment with
  ``pip --python`` after ``venv --without-pip``.

The median of ``--runs`` of each is printed per step (the base pip probe, creating the
environment, pip install, checking the server) and in all. By default the wheel is a tiny
``agent_ls`` with no dependencies (the fixed cost of an install); ``--wheel`` and
``--wheelhouse`` (e.g. a built agent-ls wheel and ``.tools/wheelhouse``) measure a real one.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXT = REPO / "editor-extension"

DRIVER = """
const { Provisioner } = require(process.argv[2]);
const [storage, wheels, python, wheelhouse] = process.argv.slice(3);
const steps = [];
let last = Date.now();
let name = "base pip probe";
const mark = (next) => { const now = Date.now(); steps.push([name, now - last]); last = now; name = next; };
const t0 = last;
new Provisioner(storage, wheels, process.env)
  .install({ python, wheelhouse: wheelhouse || undefined, onStep: mark })
  .then(() => { mark(""); console.log(JSON.stringify({ total: Date.now() - t0, steps })); })
  .catch((e) => { console.error(String(e && e.message || e)); process.exit(1); });
"""

STEP_NAMES = {
    "base pip probe": "base pip probe",
    "Creating a virtual environment": "create the environment",
    "Checking the server": "check the server",
}


def tiny_wheel(out: Path, version: str = "1.0.0") -> Path:
    info = f"agent_ls-{version}.dist-info"
    files = {
        "agent_ls/__init__.py": f"__version__ = {version!r}\n",
        "agent_ls/__main__.py": "import agent_ls, sys\nif '--version' in sys.argv: print('agent-ls', agent_ls.__version__)\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: agent-ls\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    files[f"{info}/RECORD"] = "".join(f"{n},,\n" for n in files) + f"{info}/RECORD,,\n"
    path = out / f"agent_ls-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for n, t in files.items():
            z.writestr(n, t)
    return path


def step_label(step: str) -> str:
    return "pip install" if step.startswith("Installing agent-ls") else STEP_NAMES.get(step, step)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--wheel", type=Path, help="an agent_ls wheel (default: a tiny one)")
    ap.add_argument("--wheelhouse", type=Path, help="its dependencies' wheels (pip --no-index)")
    args = ap.parse_args()
    python3 = shutil.which("python3")
    node = shutil.which("node")
    esbuild = EXT / "node_modules" / ".bin" / "esbuild"
    if not python3 or not node or not esbuild.exists():
        sys.exit("needs python3 and node on PATH and editor-extension/node_modules (esbuild)")
    base = subprocess.run([python3, "-I", "-c", "import sys; print(sys.executable)"],
                          capture_output=True, text=True, check=True).stdout.strip()
    pip = subprocess.run([base, "-I", "-m", "pip", "--version"], capture_output=True, text=True)
    with tempfile.TemporaryDirectory(prefix="bench-provision-") as tmp_name:
        tmp = Path(tmp_name)
        bundle = tmp / "provision.cjs"
        subprocess.run([str(esbuild), str(EXT / "src" / "provision.ts"), "--bundle", "--platform=node",
                        "--format=cjs", f"--outfile={bundle}", "--log-level=warning"], check=True)
        (tmp / "driver.cjs").write_text(DRIVER)
        wheels = tmp / "wheels"
        wheels.mkdir()
        if args.wheel:
            shutil.copy(args.wheel, wheels / args.wheel.name)
        else:
            tiny_wheel(wheels)
        wheelhouse = args.wheelhouse.resolve() if args.wheelhouse else (tmp / "empty-wheelhouse")
        wheelhouse.mkdir(exist_ok=True)
        nopip = tmp / "nopip"
        subprocess.run([base, "-I", "-m", "venv", "--without-pip", str(nopip)], check=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
        env["PIP_CONFIG_FILE"] = os.devnull  # this machine's pip.conf may name other indexes
        ways = {"baseline (ensurepip)": str(nopip / "bin" / "python"), "base pip (--python)": base}
        results: dict[str, list[dict[str, float]]] = {w: [] for w in ways}
        for i in range(args.runs):
            for way, python in ways.items():
                storage = tmp / f"storage-{i}-{len(results[way])}-{way[:4]}"
                r = subprocess.run([node, str(tmp / "driver.cjs"), str(bundle), str(storage), str(wheels), python,
                                    str(wheelhouse)], capture_output=True, text=True, env=env)
                if r.returncode != 0:
                    sys.exit(f"{way}: the install failed: {r.stderr.strip()}")
                out = json.loads(r.stdout.strip().splitlines()[-1])
                figures = {step_label(s): ms / 1000 for s, ms in out["steps"]}
                figures["total"] = out["total"] / 1000
                results[way].append(figures)
                shutil.rmtree(storage, ignore_errors=True)
    print(f"python {base}; {pip.stdout.strip() or 'no pip'}; load {os.getloadavg()[0]:.2f}; "
          f"wheel {args.wheel.name if args.wheel else 'tiny agent_ls (no dependencies)'}; median of {args.runs} runs, seconds")
    rows = ["base pip probe", "create the environment", "pip install", "check the server", "total"]
    print(f"{'step':<24}" + "".join(f"{w:>22}" for w in ways) + f"{'difference':>12}")
    for row in rows:
        meds = [statistics.median(f.get(row, 0.0) for f in results[w]) for w in ways]
        print(f"{row:<24}" + "".join(f"{m:>22.2f}" for m in meds) + f"{meds[1] - meds[0]:>+12.2f}")


if __name__ == "__main__":
    main()
