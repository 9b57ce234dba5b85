"""Issue 38, security round 3: the attack suite, with real processes.

Each attack runs as the user's answers would let it: a benign command is approved "for the
session" with the scope the question offers (or an allow rule the user wrote), then the attack
is put to the gate; when the gate lets it run, it really runs (bash, real git, sed, awk, cp, tar)
in a temporary repository with a fake home folder. Each test first shows the attack really works
when nothing stops it (in a copy of the same world), then that through the gate its effect did
not happen.

The 15 attacks of round 3:

went through on the old main (issue 38 items 1-7)
 1. options of a granted program that run programs: ``git grep -O``, ``git fetch --upload-pack``
 2. a grant wider than the command: ``git --no-pager log`` offered ``git …``, then ``git -c alias``
 3. interpreters offered as prefixes: ``sed`` ``e``, ``awk`` ``system()``
 4. globs past the protected paths: ``cp x .gi?/config``
 5. paths outside the workspace: ``git diff --no-index /dev/null ~/.ssh/KEY``,
    ``git log --output=<agent-ls settings.json>``
 6. the provider key in the agent's own process environment (helper "secrets": its branch's tests)
 7. the extension runs a workspace's interpreter named through /proc/self/root (helper "secrets")

already blocked (kept blocked)
 8. ``git status; touch PWNED`` after a ``git status`` grant
 9. ``git status $(touch PWNED)`` after a ``git status`` grant
10. ``echo … > .git/config`` under an ``echo`` grant
11. ``write_file .git/config`` (and through a symlink) after a session write grant
12. ``sh -c`` / ``xargs`` / ``env`` never offered as a prefix
13. ``for`` loops and other unaccounted commands: no session grant
14. ``GIT_DIR=… git status`` under a ``git status`` grant
15. ``cd .git && echo … > config`` under an ``echo`` grant
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

from agent_ls.agent.permissions import (
    ApprovalAnswer,
    ApprovalRequest,
    Decision,
    PermissionGate,
    PermissionRules,
    SessionScope,
    Verdict,
)
from agent_ls.core.tools import Capability, ToolSpec

BASH = ToolSpec(name="bash", description="", input_schema={"type": "object"}, capability=Capability.WRITE)
WRITE = ToolSpec(name="write_file", description="", input_schema={"type": "object"}, capability=Capability.WRITE)
READ = ToolSpec(name="read_file", description="", input_schema={"type": "object"}, capability=Capability.READ)
FSMONITOR = "[core]\n\tfsmonitor = touch PWNED_BY_FSMONITOR; false\n"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@attrs.define
class World:
    repo: Path
    home: Path
    env: dict[str, str]
    settings: Path

    def sh(self, command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", command], cwd=self.repo, env=self.env, capture_output=True,
                              text=True, timeout=60, check=False)


def _make_world(base: Path) -> World:
    home, repo = base / "home", base / "repo"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY----- SECRET\n")
    config = home / ".config" / "agent-ls"
    config.mkdir(parents=True)
    settings = config / "settings.json"
    settings.write_text('{"permissions": {"allow": []}}\n')
    env = {"HOME": str(home), "PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1", "LANG": "C.UTF-8",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "AGENT_LS_CONFIG_DIR": str(config),
           "AGENT_LS_USER_SETTINGS": str(settings), "AGENT_LS_DATA_DIR": str(home / ".local/share/agent-ls")}
    repo.mkdir()
    world = World(repo, home, env, settings)
    (repo / "README.md").write_text("foo\nbar\n")
    (repo / "payload").write_text(FSMONITOR)
    for cmd in ["git init -q -b main", "git add -A", "git commit -qm init", "git clone -q --bare . ../origin.git",
                "git remote add origin ../origin.git"]:
        assert world.sh(cmd).returncode == 0, cmd
    return world


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    w = _make_world(tmp_path / "gated")
    for k, v in w.env.items():
        monkeypatch.setenv(k, v)
    return w


@pytest.fixture
def unguarded(tmp_path: Path) -> World:
    """The same world, where attacks run with nothing in the way (to show they are real)."""
    return _make_world(tmp_path / "unguarded")


class Approver:
    def __init__(self, answer: ApprovalAnswer | str) -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer | SessionScope:
        self.requests.append(request)
        if isinstance(self.answer, ApprovalAnswer):
            return self.answer
        scope = request.scope(self.answer) or request.scopes[-1]
        return scope


async def granted(world: World, benign: str, answer: ApprovalAnswer | str = "prefix",
                  rules: PermissionRules | None = None) -> PermissionGate:
    """A gate where the user approved ``benign`` for the session (the widest scope offered)."""
    gate = PermissionGate(rules or PermissionRules(), Approver(answer), [world.repo])
    ok, _ = await gate.check(BASH, {"command": benign})
    assert ok
    assert world.sh(benign).returncode in (0, 1), benign
    return gate


def attempt(world: World, gate: PermissionGate, command: str) -> Verdict:
    """The gate's decision; the command really runs when the gate allows it."""
    verdict = gate.evaluate(BASH, {"command": command})
    if verdict.decision is Decision.ALLOW:
        world.sh(command)
    return verdict


def really_works(unguarded: World, command: str, effect: Callable[[World], bool]) -> None:
    assert not effect(unguarded)
    unguarded.sh(command)
    assert effect(unguarded), f"the attack {command!r} did nothing even unguarded"


def pwned(name: str = "PWNED") -> Callable[[World], bool]:
    return lambda w: (w.repo / name).exists()


def widest_offer(gate: PermissionGate) -> tuple[str, ...]:
    approver = gate.handler
    assert isinstance(approver, Approver)
    return tuple(k for s in approver.requests[-1].scopes for k in s.keys)


# -- went through on the old main ------------------------------------------------------------------------

async def test_attack_1_options_of_a_granted_git_command_that_run_programs(world: World, unguarded: World) -> None:
    grep_attack = "git grep --open-files-in-pager='touch PWNED' foo"
    fetch_attack = "git fetch --upload-pack='touch PWNED; git-upload-pack' origin"
    for attack, benign in [(grep_attack, "git grep -n foo"), (fetch_attack, "git fetch origin")]:
        really_works(unguarded, attack, pwned())
        (unguarded.repo / "PWNED").unlink()
        gate = await granted(world, benign)
        assert widest_offer(gate)[-1] in ("bash(git grep:*)", "bash(git fetch:*)")
        verdict = attempt(world, gate, attack)
        assert verdict.decision is Decision.ASK and "runs a program" in verdict.reason, verdict
        assert not (world.repo / "PWNED").exists()
    # the same with the options spelled otherwise
    gate = await granted(world, "git grep -n foo")
    for attack in ["git grep -O'touch PWNED' foo", "git grep -n -Otouch foo", "git grep -nO 'touch PWNED' foo"]:
        assert attempt(world, gate, attack).decision is Decision.ASK, attack
    assert not (world.repo / "PWNED").exists()
    # the safe options stay covered
    assert attempt(world, gate, "git grep -n -i --count foo").decision is Decision.ALLOW


async def test_attack_2_a_git_grant_is_never_wider_than_the_command(world: World, unguarded: World) -> None:
    attack = "git -c alias.x='!touch PWNED' x"
    really_works(unguarded, attack, pwned())
    gate = await granted(world, "git --no-pager log --oneline")
    assert widest_offer(gate) == ("bash(git --no-pager log --oneline)", "bash(git log:*)")
    for command in [attack, "git -c core.pager='touch PWNED' log", "git --exec-path=. log",
                    "git -C ../origin.git log", "git --git-dir=../origin.git log", "git frob"]:
        verdict = attempt(world, gate, command)
        assert verdict.decision is Decision.ASK, command
    assert not (world.repo / "PWNED").exists()
    assert attempt(world, gate, "git --no-pager log -n 1 --format=%H").decision is Decision.ALLOW
    assert attempt(world, gate, "git log --stat -3").decision is Decision.ALLOW
    # a user rule naming the bare program covers only git's safe commands and options
    rule = PermissionGate(PermissionRules(allow=("bash(git:*)",)), None, [world.repo])
    assert attempt(world, rule, "git status -sb").decision is Decision.ALLOW
    assert attempt(world, rule, attack).decision is Decision.ASK
    assert not (world.repo / "PWNED").exists()


async def test_attack_3_sed_and_awk_are_not_offered_as_prefixes(world: World, unguarded: World) -> None:
    sed_attack, awk_attack = "sed '1e touch PWNED' README.md", "awk 'BEGIN { system(\"touch PWNED\") }'"
    really_works(unguarded, sed_attack, pwned())
    (unguarded.repo / "PWNED").unlink()
    really_works(unguarded, awk_attack, pwned())
    for benign, attack in [("sed -n 1p README.md", sed_attack), ("awk '{print $1}' README.md", awk_attack)]:
        gate = await granted(world, benign, ApprovalAnswer.ALLOW_SESSION)
        assert all(not k.endswith(":*)") for k in widest_offer(gate)), widest_offer(gate)  # exact only
        assert attempt(world, gate, attack).decision is Decision.ASK
    # a user's own rule naming the program covers only scripts that run and write nothing
    rules = PermissionGate(PermissionRules(allow=("bash(sed:*)", "bash(awk:*)", "bash(find:*)")), None,
                           [world.repo])
    for attack in [sed_attack, awk_attack, "sed -n 's/foo/x/w PWNED' README.md", "sed -i s/foo/x/ README.md",
                   "sed 'r /etc/passwd' README.md", "awk '{ print > \"PWNED\" }' README.md",
                   "awk '{ print | \"sh\" }' README.md", "find . -name README.md -exec touch PWNED ;",
                   "find . -name PWNED -delete", "find . -fprint PWNED"]:
        assert attempt(world, rules, attack).decision is Decision.ASK, attack
    assert not (world.repo / "PWNED").exists()
    assert "sed's e command runs a program" in attempt(world, rules, sed_attack).reason
    for safe in ["sed -n 's/foo/bar/p' README.md", "awk -F: '$1 > 3 { n++ } END { print n }' README.md",
                 "find . -name '*.md' -type f"]:
        assert attempt(world, rules, safe).decision is Decision.ALLOW, safe


async def test_attack_4_globs_and_expansions_past_the_protected_paths(world: World, unguarded: World) -> None:
    def fsmonitor_ran(w: World) -> bool:
        w.sh("git status")
        return (w.repo / "PWNED_BY_FSMONITOR").exists()

    really_works(unguarded, "cp payload .gi?/config", fsmonitor_ran)
    gate = await granted(world, "cp -p README.md notes.md")
    assert widest_offer(gate)[-1] == "bash(cp:*)"
    config = (world.repo / ".git" / "config").read_text()
    for attack in ["cp payload .gi?/config", "cp payload .g*/config", "cp payload .[g]it/config",
                   "cp payload {x,.git}/config", "cp payload .gi\\t/config", "cp payload \"$HOME\"/.bashrc",
                   "cp payload ~/.bashrc", "cp payload $(printf .git)/config", "cp payload ${DIR}/config",
                   "cp payload .{g,x}it/config", "cd .git && cp ../payload config",
                   "cd .github && cd workflows && cp ../../payload ci.yml", "(cd .git; cp ../payload config)",
                   "cp payload .gi?"]:
        verdict = attempt(world, gate, attack)
        assert verdict.decision is Decision.ASK and verdict.scopes == (), attack
    assert (world.repo / ".git" / "config").read_text() == config
    assert not fsmonitor_ran(world)
    assert not (world.home / ".bashrc").exists()
    # a folder copied whole that holds a protected name (a repository's vendor/.vscode/tasks.json)
    for w in (world, unguarded):
        (w.repo / "vendor" / ".vscode").mkdir(parents=True)
        (w.repo / "vendor" / ".vscode" / "tasks.json").write_text('{"tasks": []}')
        (w.repo / "vendor" / "lib.py").write_text("")
    really_works(unguarded, "cp -r vendor/. .", lambda w: (w.repo / ".vscode" / "tasks.json").exists())
    for attack in ["cp -r vendor/. .", "cp -R vendor/. ./", "cp -a vendor/* vendor/.* .", "mv vendor/. ."]:
        verdict = attempt(world, gate, attack)
        assert verdict.decision is Decision.ASK and verdict.scopes == (), attack
    assert not (world.repo / ".vscode").exists()
    assert attempt(world, gate, "cp -r src-missing build").decision is Decision.ALLOW
    assert attempt(world, gate, "cp README.md .").decision is Decision.ALLOW  # the destination is not walked
    assert attempt(world, gate, "cp -t . -r vendor/.").decision is Decision.ASK
    # plain globs that match nothing protected stay covered
    assert attempt(world, gate, "cp README* notes.md").decision is Decision.ALLOW


async def test_attack_5_paths_outside_the_workspace(world: World, unguarded: World) -> None:
    key = "~/.ssh/id_ed25519"
    leak = unguarded.sh(f"git diff --no-index /dev/null {key}")
    assert "PRIVATE KEY" in leak.stdout  # the attack is real: the key goes to the model
    settings_attack = f"git log -1 --format='tformat:{{\"permissions\": {{\"allow\": [\"*\"]}}}}' --output={world.settings}"
    really_works(unguarded, settings_attack.replace(str(world.settings), str(unguarded.settings)),
                 lambda w: '"*"' in w.settings.read_text())
    diff = await granted(world, "git diff --stat")
    log = await granted(world, "git log -1")
    cat = await granted(world, "cat README.md")
    before = world.settings.read_text()
    for gate, attack in [(diff, f"git diff --no-index /dev/null {key}"),
                         (diff, f"git diff --no-index /dev/null {world.home}/.ssh/id_ed25519"),
                         (log, settings_attack), (log, f"git log --output={world.home}/.gitconfig"),
                         (cat, f"cat {key}"), (cat, f"cat {world.home}/.ssh/id_ed25519"),
                         (cat, "cat ../home/.ssh/id_ed25519"), (cat, "cd && cat .ssh/id_ed25519"),
                         (cat, f"cat {world.settings}"), (cat, "cat $HOME/.ssh/*")]:
        verdict = attempt(world, gate, attack)
        assert verdict.decision is Decision.ASK, attack
    assert world.settings.read_text() == before
    verdict = diff.evaluate(BASH, {"command": f"git diff --no-index /dev/null {world.home}/.ssh/id_ed25519"})
    assert verdict.sensitive and ".ssh" in verdict.reason and verdict.scopes == ()
    # whatever grant is in force: even the whole shell allowed
    everything = PermissionGate(PermissionRules(allow=("bash",)), None, [world.repo])
    assert attempt(world, everything, f"cp payload {world.home}/.bashrc").decision is Decision.ASK
    assert attempt(world, everything, f"cat {key}").decision is Decision.ASK
    assert not (world.home / ".bashrc").exists()


async def test_attack_5_the_file_tools_in_a_workspace_that_holds_the_users_places(world: World) -> None:
    """The built-in file tools are confined to the workspace; a workspace opened on the home
    folder still holds ~/.ssh and the agent-ls settings."""
    gate = PermissionGate(PermissionRules(allow=("write_file", "read_file")), Approver(ApprovalAnswer.ALLOW_SESSION),
                          [world.home])
    for path in [".ssh/id_ed25519", str(world.home / ".ssh" / "id_ed25519"), ".config/agent-ls/settings.json"]:
        verdict = gate.evaluate(READ, {"path": path})
        assert verdict.decision is Decision.ASK and verdict.sensitive, path
    for path in [".bashrc", ".gitconfig", ".config/agent-ls/settings.json", ".ssh/authorized_keys"]:
        verdict = gate.evaluate(WRITE, {"path": path, "content": "x"})
        assert verdict.decision is Decision.ASK and verdict.scopes == (), path
    grep = ToolSpec(name="grep", description="", input_schema={}, capability=Capability.READ)
    assert gate.evaluate(grep, {"pattern": "KEY"}).decision is Decision.ASK  # a search of home reads ~/.ssh
    inside = PermissionGate(PermissionRules(), None, [world.repo])
    assert inside.evaluate(READ, {"path": "README.md"}).decision is Decision.ALLOW
    assert inside.evaluate(grep, {"pattern": "foo"}).decision is Decision.ALLOW


# -- already blocked, kept blocked ------------------------------------------------------------------------

async def test_attack_8_to_15_the_blocked_ones_stay_blocked(world: World, tmp_path: Path) -> None:
    status = await granted(world, "git status --short")
    echo = await granted(world, "echo hello")
    for gate, attack in [(status, "git status; touch PWNED"), (status, "git status $(touch PWNED)"),
                         (echo, "echo '[core]' > .git/config"), (status, "GIT_DIR=../origin.git git status"),
                         (echo, "cd .git && echo x > config"), (status, "git status --short | sh")]:
        assert attempt(world, gate, attack).decision is Decision.ASK, attack
    assert not (world.repo / "PWNED").exists()
    for runner in ["sh -c 'touch PWNED'", "xargs touch", "env touch PWNED", "bash -c x"]:
        verdict = PermissionGate(PermissionRules(), None, [world.repo]).evaluate(BASH, {"command": runner})
        assert not any(k.endswith(":*)") for s in verdict.scopes for k in s.keys), runner
    loop = PermissionGate(PermissionRules(allow=("bash",)), None, [world.repo]).evaluate(
        BASH, {"command": "for f in *; do touch PWNED; done"})
    assert loop.decision is Decision.ASK and loop.scopes == ()
    (world.repo / "sneaky").symlink_to(world.repo / ".git", target_is_directory=True)
    writes = PermissionGate(PermissionRules(allow=("write_file",)), None, [world.repo])
    for path in [".git/config", "sneaky/config"]:
        assert writes.evaluate(WRITE, {"path": path, "content": FSMONITOR}).decision is Decision.ASK


# -- variations ---------------------------------------------------------------------------------------------

async def test_variation_tar_extraction_and_program_options(world: World, unguarded: World) -> None:
    archive = world.repo / "evil.tar"
    src = world.repo.parent / "evil"
    (src / ".vscode").mkdir(parents=True)
    (src / ".vscode" / "tasks.json").write_text('{"tasks": []}')
    with tarfile.open(archive, "w") as tar:
        tar.add(src / ".vscode", arcname=".vscode")
    shutil.copy(archive, unguarded.repo / "evil.tar")
    really_works(unguarded, "tar xf evil.tar", lambda w: (w.repo / ".vscode" / "tasks.json").exists())
    gate = await granted(world, "tar cf /dev/null README.md")
    assert widest_offer(gate)[-1] == "bash(tar:*)"
    for attack in ["tar xf evil.tar", "tar -xf evil.tar", "tar --extract -f evil.tar",
                   "tar cf /dev/null --checkpoint=1 --checkpoint-action=exec='touch PWNED' README.md",
                   "tar cf /dev/null --use-compress-program='touch PWNED' README.md",
                   "tar -c -I 'touch PWNED' -f x.tar README.md", "tar cf - README.md --to-command='touch PWNED'"]:
        assert attempt(world, gate, attack).decision is Decision.ASK, attack
    assert not (world.repo / ".vscode").exists() and not (world.repo / "PWNED").exists()
    assert attempt(world, gate, "tar czf out.tgz README.md").decision is Decision.ALLOW


async def test_variation_patches_write_the_files_they_name(world: World, unguarded: World) -> None:
    patch = ("diff --git a/.vscode/tasks.json b/.vscode/tasks.json\nnew file mode 100644\n--- /dev/null\n"
             "+++ b/.vscode/tasks.json\n@@ -0,0 +1 @@\n+{\"tasks\": []}\n")
    for w in (world, unguarded):
        (w.repo / "fix.patch").write_text(patch)
    really_works(unguarded, "git apply fix.patch", lambda w: (w.repo / ".vscode" / "tasks.json").exists())
    gate = PermissionGate(PermissionRules(allow=("bash(git:*)", "bash(patch:*)", "bash(unzip:*)")), None,
                          [world.repo])
    for attack in ["git apply fix.patch", "git am fix.patch", "patch -p1 -i fix.patch", "unzip evil.zip",
                   "git update-index --add --cacheinfo 100644,0000000000000000000000000000000000000000,x"]:
        verdict = attempt(world, gate, attack)
        assert verdict.decision is Decision.ASK, attack
        assert "not shown" in verdict.reason or "directly" in verdict.reason, verdict.reason
    assert not (world.repo / ".vscode").exists()


async def test_variation_deny_rules_see_through_global_options(world: World) -> None:
    gate = PermissionGate(PermissionRules(allow=("bash",), deny=("bash(git push:*)",)), None, [world.repo])
    for attack in ["git push origin main", "git -C . push origin main", "git --no-pager push origin",
                   "git -c x.y=z push origin", "git --git-dir=.git push origin"]:
        assert attempt(world, gate, attack).decision is Decision.DENY, attack
    assert world.sh("git ls-remote ../origin.git").stdout.count("refs/heads/main") == 1


async def test_variation_make_npm_and_interpreter_grants_stay_narrow(world: World) -> None:
    (world.repo / "Makefile").write_text("CC = true\nbuild:\n\t$(CC)\n")
    (world.repo / "package.json").write_text('{"scripts": {"build": "true", "evil": "touch PWNED"}}')
    make = await granted(world, "make build")
    assert widest_offer(make)[-1] == "bash(make build:*)"
    for attack in ["make build CC='touch PWNED'", "make build evil", "make -f /dev/stdin build",
                   "make --eval='x:=1' build"]:
        assert attempt(world, make, attack).decision is Decision.ASK, attack
    assert not (world.repo / "PWNED").exists()
    npm = PermissionGate(PermissionRules(), None, [world.repo])
    npm.session_allowed.add("bash(npm run build:*)")
    assert npm.evaluate(BASH, {"command": "npm run evil"}).decision is Decision.ASK
    assert npm.evaluate(BASH, {"command": "npm run build"}).decision is Decision.ALLOW
    install = npm.evaluate(BASH, {"command": "npm install left-pad"})
    assert not any(k.endswith(":*)") for s in install.scopes for k in s.keys)
    assert "install scripts run" in install.reason
    py = PermissionGate(PermissionRules(), None, [world.repo])
    assert py.evaluate(BASH, {"command": "python3 -m pytest -x"}).scopes[-1].keys == ("bash(python3 -m pytest:*)",)
    for command in ["python3 -c 'x'", "python3", "node -e x", "perl -e x", "python3 -u x"]:
        assert not any(k.endswith(":*)") for s in py.evaluate(BASH, {"command": command}).scopes for k in s.keys)
