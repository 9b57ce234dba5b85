"""Issue 38: the per-program option model (agent/permissions/programs.py) and the expansion of
words that are not plain text (agent/permissions/words.py), as tables."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_ls.agent.permissions import Decision, PermissionGate, PermissionRules
from agent_ls.agent.permissions.programs import assess, awk_program_risk, sed_script_risk
from agent_ls.agent.permissions.shell import CommandPattern, analyze
from agent_ls.agent.permissions.words import expand
from agent_ls.core.tools import Capability, ToolSpec

BASH = ToolSpec(name="bash", description="", input_schema={"type": "object"}, capability=Capability.WRITE)


def words(command: str) -> tuple[str, ...]:
    (part,) = analyze(command).parts
    return part.words


@pytest.mark.parametrize(("command", "why"), [
    ("git -c core.pager=x log", "-c sets any configuration"),
    ("git --config-env=core.pager=X log", "--config-env"),
    ("git --exec-path=/tmp log", "--exec-path"),
    ("git -C ../other status", "-C runs git in another folder"),
    ("git --git-dir=x status", "--git-dir"),
    ("git --work-tree=/ status", "--work-tree"),
    ("git fetch --upload-pack=x origin", "--upload-pack runs a program"),
    ("git clone -u x url dir", "is --upload-pack"),
    ("git push --receive-pack=x origin", "--receive-pack"),
    ("git grep -O foo", "runs a program"),
    ("git log --output=x", "writes the file"),
    ("git diff --ext-diff", "--ext-diff"),
    ("git log -p --textconv", "--textconv"),
    ("git diff --no-index a b", "--no-index"),
    ("git difftool", "difftool runs"),
    ("git mergetool", "mergetool runs"),
    ("git submodule foreach x", "foreach runs"),
    ("git bisect run x", "bisect run runs"),
    ("git rebase --exec x main", "--exec"),
    ("git rebase -x x main", "-x/--exec"),
    ("git filter-branch --tree-filter x", "filter-branch runs"),
    ("git myalias", "not a known git command"),
    ("git config core.fsmonitor x", "changes the configuration"),
    ("git config --add core.pager x", "not known to be safe"),
    ("git remote add evil url", "changes the repository's configuration"),
    ("git fetch 'ext::sh -c x'", "remote helper"),
    ("git log --frobnicate", "not known to be safe"),
    ("sed -i s/a/b/ f", "-i rewrites"),
    ("sed -f script f", "-f runs a script"),
    ("sed 's/a/b/e' f", "s///e"),
    ("sed -n '/x/w out' f", "w command writes"),
    ("sed '1R /etc/passwd' f", "reads a file"),
    ("awk -f prog f", "-f runs a program"),
    ("awk 'BEGIN{ \"date\" | getline d }'", "| runs a program"),
    ("gawk '@load \"x\"'", "@load"),
    ("awk '{ getline line < \"/etc/shadow\" }'", "getline"),
    ("find . -execdir x ;", "-execdir"),
    ("find . -ok rm ;", "-ok"),
    ("find . -fprintf out %p", "-fprintf writes"),
    ("find . -newerXY x", "not known to be safe"),
    ("tar --info-script=x -cf a.tar .", "--info-script"),
    ("tar -F x -cf a.tar .", "-F runs"),
    ("rsync -e 'sh -c x' a b", "-e runs"),
    ("rsync --rsync-path=x a host:b", "--rsync-path"),
    ("npm exec x", "runs a package's program"),
    ("pnpm install", "install scripts run"),
    ("pip install x", "build code"),
    ("make -C /tmp build", "-C runs"),
    ("less +!x file", "can run programs"),
    ("less -o log file", "writes a log"),
    ("man -P x ls", "-P runs"),
    ("man ./evil.1", "groff"),
    ("rg --pre x foo", "--pre runs"),
    ("fd -x rm", "-x runs"),
    ("sort --compress-program=x f", "--compress-program"),
    ("node -e x", "runs the code"),
    ("perl -e x", "runs the code"),
    ("xargs rm", "xargs runs"),
    ("env X=1 sh", "env runs"),
    ("timeout 5 x", "timeout runs"),
    ("vim -c '!x' f", "vim runs"),
    ("ssh host x", "ssh runs"),
])
def test_what_runs_programs_writes_files_or_changes_configuration_is_named(command: str, why: str) -> None:
    verdict = assess(words(command))
    assert verdict.risk is not None and why in verdict.risk, (command, verdict)


@pytest.mark.parametrize(("command", "key"), [
    ("git status -sb", ("git", "status")),
    ("git --no-pager log --oneline -n 5 -- src", ("git", "log")),
    ("git -P diff --stat HEAD~1", ("git", "diff")),
    ("git log -5 --format=%H%n%s --author=me", ("git", "log")),
    ("git show HEAD:README.md", ("git", "show")),
    ("git diff -M50% --cached", ("git", "diff")),
    ("git grep -n -i -e foo -- '*.py'", ("git", "grep")),
    ("git fetch --prune origin", ("git", "fetch")),
    ("git config --get user.name", ("git", "config")),
    ("git config user.email", ("git", "config")),
    ("git branch -a", ("git", "branch")),
    ("sed -n '/^def /p;s/a/b/g' f", ("sed",)),
    ("sed -e 1d -e '$d' -E f", ("sed",)),
    ("awk -F, '$2 > 10 { print $1 }' f", ("awk",)),
    ("awk 'a || b { n += 1 } END { printf \"%d\\n\", n }' f", ("awk",)),
    ("find . -name '*.py' -not -path './.venv/*' -print0", ("find",)),
    ("tar tzf a.tgz", ("tar",)),
    ("npm test", ("npm", "test")),
    ("npm run lint -- --fix", ("npm", "run", "lint")),
    ("pip list", ("pip", "list")),
    ("make -j4 test", ("make", "test")),
    ("python -m pytest -x -q", ("python", "-m", "pytest")),
    ("less -R file", ("less",)),
    ("man 5 git-config", ("man",)),
    ("ls -la", ("ls",)),
])
def test_known_safe_options_are_covered(command: str, key: tuple[str, ...]) -> None:
    verdict = assess(words(command))
    assert verdict.risk is None and verdict.key == key, (command, verdict)


def test_sed_and_awk_scripts() -> None:
    for script in ["p", "1d", "$!N;P;D", "s/a/b/2g", "y/abc/xyz/", "/start/,/end/{/x/d}", "3q", "0~4p",
                   "s|/|\\||g", "/x/I,+2p", ":a;N;$!ba;s/\\n/ /g"]:
        assert sed_script_risk(script) is None, script
    for script in ["e", "1e id", "s/x/y/e", "s/x/y/w f", "w f", "W f", "r f", "R f", "s/x/y/", "s/a/b", "k"]:
        if script == "s/x/y/":
            assert sed_script_risk(script) is None
            continue
        assert sed_script_risk(script) is not None, script
    assert awk_program_risk("{ print $1 > 3 }") is not None  # conservative: it may be a file
    assert awk_program_risk("$1 > 3 { print }") is None
    assert awk_program_risk('{ print "a|b" }') is None  # a | inside a string
    assert awk_program_risk("{ print | \"cat\" }") is not None
    assert awk_program_risk("{ system(\"x\") }") is not None


def test_words_are_expanded_as_the_shell_will(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("")
    (tmp_path / "a.py").write_text("")

    def shape(command: str) -> list[str] | None:
        part = analyze(command).parts[-1]
        return expand(part.shapes[-1], str(tmp_path), home="/home/u")

    assert str(tmp_path / ".git" / "config") in (shape("cat .gi?/config") or [])
    assert str(tmp_path / ".git" / "config") in (shape("cat .[g]it/conf*") or [])
    assert shape("cat '.gi?'/config") == [".gi?/config"]  # quoted: no glob
    assert shape("cat .gi\\?/config") == [".gi?/config"]
    assert shape("cat {a,.git}/config") == ["a/config", ".git/config"]
    assert shape("cat x{1..3}") == ["x1", "x2", "x3"]
    assert shape("cat ~/.ssh/id") == ["/home/u/.ssh/id"]
    assert shape("cat \"$HOME\"/x") is not None
    assert shape("cat $(echo x)") is None
    assert shape("cat ${DIR}/x") is None
    assert shape("cat ~root/x") is None
    assert shape("cat x{1..100000}") is None
    assert shape("cat *.py") == ["*.py", str(tmp_path / "a.py")]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["--oneline", "-n", "5", "--stat", "-p", "--", "src", "HEAD", "--all",
                                 "--format=%H"]), max_size=5),
       st.sampled_from(["--output=x", "--ext-diff", "--textconv", "-c", "--frob", "--open-files-in-pager"]),
       st.integers(min_value=0, max_value=5))
def test_a_git_log_grant_never_covers_a_dangerous_option_wherever_it_is(safe: list[str], bad: str, at: int) -> None:
    args = [w for w in safe if w != "--"]  # (after "--" every word is a path, so keep options before it)
    args.insert(min(at, len(args)), bad)
    command = "git log " + " ".join(args)
    gate = PermissionGate(PermissionRules(), None)
    gate.session_allowed.add("bash(git log:*)")
    assert gate.evaluate(BASH, {"command": command}).decision is Decision.ASK, command
    assert not CommandPattern(prefix=("git", "log")).covers(analyze(command).parts[0])


def test_computed_text_is_not_a_file_name() -> None:
    """``git commit -m "$(cat <<'EOF' … EOF)"`` (how agents write commit messages) is covered by a
    ``git commit`` grant when its inner command is; a computed file name still asks."""
    gate = PermissionGate(PermissionRules(), None)
    gate.session_allowed |= {"bash(git commit:*)", "bash(cat:*)"}
    message = "git commit -m \"$(cat <<'EOF'\nFix the parser\nEOF\n)\""
    assert gate.evaluate(BASH, {"command": message}).decision is Decision.ALLOW
    assert gate.evaluate(BASH, {"command": "git commit -F \"$(cat x)\""}).decision is Decision.ASK
    assert gate.evaluate(BASH, {"command": "git commit -m x -- \"$(cat x)\""}).decision is Decision.ASK


_VOCAB = ["git", "sed", "awk", "find", "tar", "npm", "make", "python", "less", "man", "cd", "cp", "-c", "-C", "-e",
          "-n", "--", "-", "--output=x", "-O", "-x", "-f", "x", "'s/a/b/'", "'e'", "{", "}", "*", "~", "$HOME",
          "$(x)", "{a,b}", "'", "\"", "\\", "s", "y/a/", "/", ".git/config", "..", "&&", ";", "|", "-uno", "-5"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_VOCAB), st.text(max_size=6)), min_size=1, max_size=8))
def test_the_gate_never_raises_on_any_words(words: list[str]) -> None:
    gate = PermissionGate(PermissionRules(allow=("bash(git:*)", "bash(sed:*)")), None)
    gate.session_allowed |= {"bash(git log:*)", "bash(cp:*)", "bash(awk:*)"}
    verdict = gate.evaluate(BASH, {"command": " ".join(words)})
    assert verdict.decision in (Decision.ALLOW, Decision.ASK)
    for script in words:
        sed_script_risk(script)
        awk_program_risk(script)
        assess(tuple(words))
