"""What a command grant covers: each known program's options and subcommands, as data.

A grant (``bash(git log:*)``, a session answer, an allow rule) names a program and maybe a
subcommand; it covers the rest of an argument list only as far as that program's *known-safe*
options go. The options and subcommands that run other programs, write files named in an
option, or change configuration are listed here with why (the question shows it: "git's
--upload-pack runs a program"); for the programs with ``strict`` models, an option that is not
listed as safe is outside every grant too ("git log's --frob is not known to be safe").

:func:`assess` reads one simple command's words and says:

- ``key``: the canonical words a grant names (``git log`` for ``git --no-pager log -n 3``), so a
  grant on ``git log`` covers ``git --no-pager log`` and a deny rule on ``git push`` catches
  ``git -C x push``;
- ``offer``: the narrowest prefix a question may offer, or None when only the exact command may
  be granted (programs that run others: ``sed``, ``awk``, ``find``, ``env``, ``xargs``,
  interpreters, shells...); never a bare program that can run others;
- ``risk`` and ``risk_at``: why (and from which word on) the words go beyond what any prefix grant
  covers.

Programs not in the model keep the plain meaning of a prefix grant (every argument covered),
except that file names are still checked against the protected paths (:mod:`.protected`).
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Callable, Mapping

import attrs

from agent_ls.agent.permissions.scripts import awk_program_risk, sed_script_risk

_PLAIN_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:+-]*")


@attrs.frozen
class Assessment:
    key: tuple[str, ...]
    """The words a grant is named by (program, then subcommand when the program has them)."""
    offer: tuple[str, ...] | None
    """The prefix a question may offer for the session; None: only the exact command."""
    risk: str | None = None
    """Why the command goes beyond what a prefix grant covers, or None."""
    risk_at: int = 1 << 30
    """The index of the first word that goes beyond (a grant whose literal prefix is longer still
    covers it: the user wrote or saw those words)."""
    modeled: bool = False
    """Whether the program is in the model (else a prefix grant covers any arguments)."""
    text: frozenset[int] = frozenset()
    """Indices of words that are text, not file names (``git commit -m "$(…)"``): such a word
    may be computed by the shell without making the command ask."""


def _risk(key: tuple[str, ...], offer: tuple[str, ...] | None, why: str, at: int) -> Assessment:
    return Assessment(key, offer, why, at, True)


# -- option scanning ---------------------------------------------------------------------------------

@attrs.frozen
class Options:
    """A program's (or a subcommand's) options: which a grant covers, which take a value, and
    which are outside every grant with why."""

    safe: frozenset[str] = frozenset()
    """Option names a grant covers (``-n``, ``--oneline``; long ones also as ``--format=...``)."""
    values: frozenset[str] = frozenset()
    """Options that take the next word as their value (``-n 5``, ``--author X``), safe or not."""
    danger: Mapping[str, str] = attrs.field(factory=dict)
    """Options outside every grant, with why."""
    strict: bool = True
    """Unlisted options are outside every grant (False: only ``danger`` ones are)."""
    numbers: bool = False
    """``-5`` style numeric options are safe (``git log -5``, ``head -20``)."""
    attached: frozenset[str] = frozenset()
    """Short options whose optional value is the rest of the word (``-uno``, ``-M50%``)."""


def _scan(prog: str, opts: Options, words: tuple[str, ...], start: int,
          operand: Callable[[int, str], str | None] | None = None) -> tuple[str | None, int]:
    """Checks ``words[start:]``; returns (why, index) of the first word outside the grant, or
    (None, len). ``operand`` checks a non-option word (None: any operand is fine)."""
    i, n, after_dashes = start, len(words), False
    while i < n:
        w = words[i]
        if after_dashes or w == "-" or not w.startswith("-"):
            if operand is not None and (why := operand(i, w)) is not None:
                return why, i
            i += 1
            continue
        if w == "--":
            after_dashes = True
            i += 1
            continue
        if w.startswith("--"):
            name, eq, _ = w.partition("=")
            if name in opts.danger:
                return opts.danger[name], i
            if opts.strict and name not in opts.safe:
                return f"{prog}'s {name} is not known to be safe", i
            i += 2 if (not eq and name in opts.values and not _optionlike(words, i + 1)) else 1
            continue
        if opts.numbers and w[1:].isdigit():
            i += 1
            continue
        # a short option, a cluster (-sb) or one with its value attached (-n5, -U3)
        j, took_next = 1, False
        while j < len(w):
            flag = "-" + w[j]
            if flag in opts.danger:
                return opts.danger[flag], i
            if opts.strict and flag not in opts.safe:
                return f"{prog}'s {flag} is not known to be safe", i
            if flag in opts.values:
                took_next = j == len(w) - 1
                break
            if flag in opts.attached:
                break
            j += 1
        i += 2 if took_next and not _optionlike(words, i + 1) else 1
    return None, n


def _optionlike(words: tuple[str, ...], i: int) -> bool:
    """A value that looks like an option is read as one too (``-n --output=x``): the check stays on
    the safe side whichever way the program reads it."""
    return i < len(words) and words[i].startswith("-") and len(words[i]) > 1


def _opts(safe: str = "", values: str = "", danger: Mapping[str, str] | None = None, *, strict: bool = True,
          numbers: bool = False, attached: str = "") -> Options:
    return Options(frozenset(safe.split()), frozenset(values.split()), dict(danger or {}), strict, numbers,
                   frozenset(attached.split()))


# -- git -----------------------------------------------------------------------------------------------

_RUNS = "runs a program"
_GIT_GLOBAL = _opts(
    "--no-pager -P -p --paginate --no-replace-objects --literal-pathspecs --glob-pathspecs --noglob-pathspecs "
    "--icase-pathspecs --no-optional-locks --no-advice --version --help -h --html-path --man-path --info-path",
    "",
    {"-c": "git's -c sets any configuration, e.g. a pager, an editor or an alias that runs a program",
     "--config-env": "git's --config-env sets any configuration, e.g. a pager that runs a program",
     "--exec-path": "git's --exec-path=DIR runs git's programs from that folder",
     "-C": "git's -C runs git in another folder, whose .git/config and hooks may run programs",
     "--git-dir": "git's --git-dir uses another repository, whose config and hooks may run programs",
     "--work-tree": "git's --work-tree writes and reads another folder",
     "--namespace": "git's --namespace is not known to be safe",
     "--super-prefix": "git's --super-prefix is not known to be safe",
     "--bare": "git's --bare treats the folder as a repository, whose config and hooks may run programs"})

_DIFF_SAFE = (
    "-p -u --patch -s --no-patch -U --unified --raw --patch-with-raw --stat --numstat --shortstat --dirstat "
    "--summary --name-only --name-status --compact-summary --submodule --color --no-color --color-moved "
    "--word-diff --word-diff-regex --color-words --no-renames --find-renames -M -B --break-rewrites "
    "-C --find-copies --find-copies-harder -D --irreversible-delete -l --diff-filter -S -G --pickaxe-all "
    "--pickaxe-regex -R --relative --no-relative -a --text --ignore-cr-at-eol --ignore-space-at-eol -b "
    "--ignore-space-change -w --ignore-all-space --ignore-blank-lines --inter-hunk-context -W --function-context "
    "--exit-code --quiet --no-ext-diff --no-textconv --ignore-submodules --src-prefix --dst-prefix --no-prefix "
    "--default-prefix --line-prefix --ita-invisible-in-index --abbrev --full-index --binary --minimal "
    "--patience --histogram --anchored --diff-algorithm --indent-heuristic --no-indent-heuristic -z "
    "--check --cached --staged --merge-base -1 -2 -3 --base --ours --theirs --cc --combined-all-paths "
    "--stat-width --stat-name-width --stat-count --output-indicator-new --output-indicator-old "
    "--output-indicator-context --no-stat --dd -m --remerge-diff --diff-merges --no-diff-merges")
_LOG_SAFE = (
    "--oneline --graph --decorate --no-decorate --decorate-refs --decorate-refs-exclude --source --all "
    "--branches --tags --remotes --glob --exclude --author --committer --grep --all-match --invert-grep -i "
    "--regexp-ignore-case -E --extended-regexp -F --fixed-strings --perl-regexp --since --after --until "
    "--before --since-as-filter --max-count -n --skip --merges --no-merges --min-parents --max-parents "
    "--first-parent --not --reverse --follow --format --pretty --abbrev-commit --no-abbrev-commit "
    "--oneline --date --relative-date --parents --children --left-right --cherry-pick --cherry-mark "
    "--boundary --simplify-by-decoration --full-history --ancestry-path --topo-order --date-order "
    "--author-date-order --no-walk --do-walk --encoding --expand-tabs --no-expand-tabs --notes --no-notes "
    "--show-notes --show-signature --log-size --mailmap --no-mailmap --use-mailmap -L --walk-reflogs -g "
    "--show-linear-break --full-diff --count --no-color-moved --clear-decorations --stdin=no")
_DIFF_VALUES = "-U --unified -S -G --diff-filter --src-prefix --dst-prefix --line-prefix --abbrev -l --relative"
_LOG_VALUES = (_DIFF_VALUES + " -n --max-count --skip --author --committer --grep --since --after --until "
               "--before --format --pretty --date --encoding -L --glob --exclude --decorate-refs "
               "--decorate-refs-exclude")
_DIFF_DANGER = {
    "--output": "git's --output writes the file it names",
    "--ext-diff": "git's --ext-diff runs the diff program the configuration names",
    "--textconv": "git's --textconv runs the conversion programs the configuration names",
    "--no-index": "git's --no-index compares any two files, also outside the repository",
    "-O": "git's -O reads an order file",
    "--open-files-in-pager": "git's --open-files-in-pager runs a program",
}
_STATUS = _opts("-s --short -b --branch --show-stash --porcelain --long -v --verbose -u --untracked-files "
                "--ignored --ignore-submodules -z --column --no-column --ahead-behind --no-ahead-behind "
                "--renames --no-renames --find-renames", attached="-u")
_LOGS = _opts(_DIFF_SAFE + " " + _LOG_SAFE, _LOG_VALUES, _DIFF_DANGER, numbers=True, attached="-M -B -C")
_DIFFS = _opts(_DIFF_SAFE, _DIFF_VALUES, _DIFF_DANGER, attached="-M -B -C")
_FETCH_DANGER = {
    "--upload-pack": "git's --upload-pack runs a program",
    "--exec": "git's --exec runs a program",
    "--receive-pack": "git's --receive-pack runs a program",
    "-u": "git's -u is --upload-pack for some commands (it runs a program)",
    "--config": "git's --config sets any configuration, e.g. a program git runs",
    "-c": "git's -c sets any configuration, e.g. a program git runs",
    "--template": "git's --template copies hooks, which run programs",
    "--recurse-submodules": "git's --recurse-submodules fetches what .gitmodules names",
}
_FETCH = _opts("--all -a --append --atomic --depth --deepen --shallow-since --shallow-exclude --unshallow "
               "--dry-run --force -f --keep -k --multiple --prune -p --prune-tags --no-tags -t --tags "
               "--refetch --jobs -j --no-recurse-submodules -q --quiet -v --verbose --progress --set-upstream "
               "--ipv4 -4 --ipv6 -6 --filter --no-write-fetch-head --write-fetch-head --porcelain",
               "--depth --deepen --shallow-since --shallow-exclude -j --jobs --filter", _FETCH_DANGER)
_PULL = _opts(" ".join(sorted(_FETCH.safe)) + " --rebase -r --no-rebase --ff --no-ff "
              "--ff-only --squash --no-squash --commit --no-commit --no-edit --autostash --no-autostash "
              "--stat --no-stat -n --verify --no-verify -S --gpg-sign --signoff",
              " ".join(sorted(_FETCH.values)), {**_FETCH_DANGER, "-s": "git's -s picks a merge strategy program",
                                        "--strategy": "git's --strategy picks a merge strategy program",
                                        "-X": "git's -X passes options to a merge strategy program",
                                        "--strategy-option": "git's -X passes options to a strategy program"})
_PUSH = _opts("--all --mirror --tags --follow-tags --atomic -n --dry-run --porcelain --delete -d --prune "
              "-f --force --force-with-lease --force-if-includes -u --set-upstream -q --quiet -v --verbose "
              "--progress --no-verify --verify --signed --no-signed -o --push-option --ipv4 --ipv6 -4 -6",
              "-o --push-option",
              {k: v for k, v in _FETCH_DANGER.items() if k != "-u"})
_CLONE = _opts("--depth --branch -b --single-branch --no-single-branch --no-tags --shallow-since "
               "--shallow-exclude --filter --bare --mirror -q --quiet -v --verbose --progress --no-checkout -n "
               "--origin -o --sparse --reject-shallow --no-reject-shallow --also-filter-submodules "
               "--no-hardlinks -l --local -s --shared",
               "--depth --branch -b --shallow-since --shallow-exclude --filter --origin -o", _FETCH_DANGER)
_COMMIT = _opts("-m --message -a --all -p --patch --amend --no-edit -s --signoff --no-signoff -q --quiet -v "
                "--verbose --allow-empty --allow-empty-message --no-verify -n --verify --author --date "
                "--fixup --squash --reset-author --only -o --include -i --dry-run --short --branch "
                "--porcelain --long -z --null -e --edit --cleanup -S --gpg-sign --no-gpg-sign --trailer "
                "--untracked-files -u --no-status --status -C --reuse-message -c --reedit-message",
                "-m --message --author --date --fixup --squash --cleanup --trailer -C --reuse-message -c "
                "--reedit-message",
                {"-F": "git's -F reads the message from a file", "--file": "git's --file reads a file",
                 "-t": "git's -t reads a template file", "--template": "git's --template reads a file",
                 "--pathspec-from-file": "git's --pathspec-from-file reads a file"})
_ANY = _opts(strict=False)  # subcommands whose options were reviewed and run nothing named by them
_MUTATE = _opts(strict=False, danger={
    "-x": "git's -x/--exec runs a program after each commit", "--exec": "git's --exec runs a program",
    "-s": "git's -s picks a merge strategy program", "--strategy": "git's --strategy picks a merge "
    "strategy program", "-X": "git's -X passes options to a merge strategy program",
    "--strategy-option": "git's --strategy-option passes options to a merge strategy program",
    "-i": "git's interactive mode runs the editor and the commands of its todo list",
    "--interactive": "git's interactive mode runs the editor and the commands of its todo list",
    "--pathspec-from-file": "git's --pathspec-from-file reads a file",
    "-F": "git's -F reads a file", "--file": "git's --file reads a file",
    "-t": "git's -t reads a template file", "--template": "git's --template copies hooks, which run programs",
    "--config": "git's --config sets any configuration", "-c": "git's -c sets any configuration",
    "--upload-pack": "git's --upload-pack runs a program", "--exec-path": "git's --exec-path runs programs",
    "-p": "git's -p (patch mode) runs the interactive editor", "--patch": "git's --patch runs the editor",
    "-e": "git's -e runs the editor", "--edit": "git's --edit runs the editor",
    "--output": "git's --output writes the file it names", "-o": "git's -o writes where it names",
    "--remote": "git's --remote runs a program on the remote", "--to-command": "git's --to-command runs a program",
    "--open-files-in-pager": "git's --open-files-in-pager runs a program",
    "--output-directory": "git's --output-directory writes files where it names",
})
_GREP = _opts("-n --line-number -i --ignore-case -w --word-regexp -v --invert-match -l --files-with-matches "
              "-L --files-without-match -c --count -h -H --full-name -E --extended-regexp -G --basic-regexp "
              "-F --fixed-strings -P --perl-regexp -e --and --or --not -r --recursive --no-recursive "
              "--cached --untracked --no-index=no -a --text -I --max-depth -o --only-matching -q --quiet "
              "-A -B -C --context --after-context --before-context --color --no-color --break --heading "
              "-p --show-function -W --function-context -z --null --column --all-match --threads "
              "--recurse-submodules --exclude-standard --no-exclude-standard -m --max-count",
              "-e -A -B -C --context --after-context --before-context --max-depth --threads -m --max-count",
              {"-O": "git's -O/--open-files-in-pager runs a program",
               "--open-files-in-pager": "git's --open-files-in-pager runs a program",
               "--no-index": "git's --no-index searches files outside the repository",
               "-f": "git's -f reads patterns from a file"}, numbers=True)
_CONFIG_READ = _opts("--get --get-all --get-regexp --get-urlmatch --list -l --show-origin --show-scope "
                     "--name-only -z --null --local --global --system --worktree --type --bool --int "
                     "--bool-or-int --path --default --includes --no-includes --all --regexp --value "
                     "--fixed-value --url", "--type --default --value --url")
_GIT_SUBCOMMANDS: dict[str, Options] = {
    "status": _STATUS, "log": _LOGS, "show": _LOGS, "whatchanged": _LOGS, "shortlog": _LOGS,
    "diff": _DIFFS, "diff-tree": _DIFFS, "diff-index": _DIFFS, "diff-files": _DIFFS, "range-diff": _DIFFS,
    "grep": _GREP, "fetch": _FETCH, "pull": _PULL, "push": _PUSH, "clone": _CLONE, "commit": _COMMIT,
    "config": _CONFIG_READ,
    **{s: _ANY for s in (
        "rev-parse", "rev-list", "ls-files", "ls-tree", "cat-file", "show-ref", "describe", "blame", "reflog",
        "branch", "tag", "stash", "add", "rm", "mv", "restore", "reset", "switch", "checkout", "merge-base",
        "name-rev", "count-objects", "fsck", "verify-commit", "verify-tag", "for-each-ref", "check-ignore",
        "check-attr", "var", "version", "help", "worktree", "notes", "init", "gc", "prune", "repack",
        "maintenance", "sparse-checkout", "cherry", "bundle", "format-patch", "merge", "rebase", "cherry-pick",
        "revert", "clean", "ls-remote", "remote", "bisect", "archive", "submodule", "write-tree", "mailinfo",
        "stripspace", "check-ref-format")},
}
_GIT_MUTATING = frozenset({"merge", "rebase", "cherry-pick", "revert", "clean", "worktree", "init", "format-patch",
                           "archive", "ls-remote", "stash", "add", "checkout", "restore", "reset", "switch",
                           "blame", "notes", "tag", "branch"})
_GIT_NEVER = {
    "difftool": "git difftool runs the diff program the configuration names",
    "mergetool": "git mergetool runs the merge program the configuration names",
    "filter-branch": "git filter-branch runs the shell commands it is given",
    "filter-repo": "git filter-repo runs the code it is given",
    "send-email": "git send-email runs the programs its options name and sends mail",
    "instaweb": "git instaweb starts a web server and a browser",
    "daemon": "git daemon serves the repository on the network",
    "credential": "git credential reads and writes stored passwords",
    "upload-pack": "git upload-pack runs the programs its configuration names",
    "receive-pack": "git receive-pack runs hooks",
    "web--browse": "git web--browse runs a browser",
    "sh-setup": "it is a shell library",
    "apply": "git apply writes the files named inside the patch, which are not shown",
    "am": "git am writes the files named inside the patches, which are not shown",
    **{p: f"git {p} writes the repository's objects, index or references directly (files it puts in a "
          "commit are not shown)" for p in ("mktree", "read-tree", "update-index", "commit-tree", "update-ref",
                                            "hash-object", "symbolic-ref", "fast-import", "unpack-objects")},
}
_GIT_SUB_DANGER = {
    ("submodule", "foreach"): "git submodule foreach runs the command it is given in each submodule",
    ("submodule", "update"): "git submodule update fetches and checks out what .gitmodules names (and may "
                             "run a command named in the configuration)",
    ("bisect", "run"): "git bisect run runs the command it is given",
    ("remote", "add"): "git remote add changes the repository's configuration",
    ("remote", "set-url"): "git remote set-url changes the repository's configuration",
    ("worktree", "add"): "git worktree add checks out a tree elsewhere (its hooks run)",
}


def _git_operand(sub: str) -> Callable[[int, str], str | None]:
    def check(_i: int, w: str) -> str | None:
        if "::" in w or w.startswith("ext:") or w.startswith("fd:"):
            return f"git's remote helper {w.split('::')[0]!r}:: runs a program"
        return None
    return check


_GIT_GLOBAL_VALUES = frozenset({"-c", "-C", "--git-dir", "--work-tree", "--namespace", "--config-env",
                                "--super-prefix"})


_MESSAGE_TEXT = frozenset({"-m", "--message", "--trailer", "--author", "--date"})
_LOG_TEXT = frozenset({"--format", "--pretty", "--grep", "--author", "--committer", "--since", "--until", "--after",
                       "--before", "--date"})
_GIT_TEXT: dict[str, frozenset[str]] = {
    **{s: _MESSAGE_TEXT for s in ("commit", "tag", "merge", "notes", "stash", "revert", "cherry-pick")},
    **{s: _LOG_TEXT for s in ("log", "show", "whatchanged", "shortlog")},
}


def _assess_git(words: tuple[str, ...]) -> Assessment:
    verdict = _assess_git_options(words)
    options = _GIT_TEXT.get(verdict.key[-1]) if len(verdict.key) == 2 else None
    if not options:
        return verdict
    text = frozenset(i + 1 for i, w in enumerate(words[:-1]) if w in options)
    return attrs.evolve(verdict, text=text) if text else verdict


def _assess_git_options(words: tuple[str, ...]) -> Assessment:
    i, n, risk = 1, len(words), None
    while i < n and words[i].startswith("-"):  # global options; the subcommand is found past all of them
        w = words[i]
        name = w.partition("=")[0]
        if risk is None:
            if name in _GIT_GLOBAL.danger and not (name == "--exec-path" and "=" not in w):
                risk = (_GIT_GLOBAL.danger[name], i)
            elif name not in _GIT_GLOBAL.safe and name != "--exec-path":
                risk = (f"git's {name} is not known to be safe", i)
        i += 2 if (name in _GIT_GLOBAL_VALUES and "=" not in w) else 1
    if i >= n:
        if risk is not None:
            return _risk(("git",), None, *risk)
        return Assessment(("git",), None, None, 1 << 30, True)
    sub = words[i]
    key = ("git", sub)
    if risk is not None:
        return _risk(key, key if sub in _GIT_SUBCOMMANDS and _PLAIN_WORD.fullmatch(sub) else None, *risk)
    if sub in _GIT_NEVER:
        return _risk(key, None, _GIT_NEVER[sub], i)
    opts = _GIT_SUBCOMMANDS.get(sub)
    if opts is None:
        return _risk(key, None, f"git {sub} is not a known git command (an alias can run any program)", i)
    offer = key if _PLAIN_WORD.fullmatch(sub) else None
    if i + 1 < n and (sub, words[i + 1]) in _GIT_SUB_DANGER:
        return _risk(key, offer, _GIT_SUB_DANGER[(sub, words[i + 1])], i + 1)
    if sub == "config":
        return _assess_git_config(words, i, key, offer)
    if sub in _GIT_MUTATING and opts is _ANY:
        opts = _MUTATE
    why, at = _scan(f"git {sub}", opts, words, i + 1, _git_operand(sub))
    if why is not None:
        return _risk(key, offer, why, at)
    return Assessment(key, offer, None, 1 << 30, True)


def _assess_git_config(words: tuple[str, ...], i: int, key: tuple[str, ...],
                       offer: tuple[str, ...] | None) -> Assessment:
    why, at = _scan("git config", _CONFIG_READ, words, i + 1)
    if why is not None:
        return _risk(key, offer, why + " (git config can set a program git runs)", at)
    operands = [w for w in words[i + 1:] if not w.startswith("-")]
    reading = {"--get-regexp", "--get-urlmatch", "--get-all", "--get"} & set(words[i + 1:])
    if operands and operands[0] in ("get", "list"):
        operands = operands[1:]
    elif operands and operands[0] in ("set", "unset", "rename-section", "remove-section", "edit"):
        operands = ["", "", ""]
    if len(operands) > (2 if reading else 1) or "--edit" in words or "-e" in words:
        return _risk(key, offer, "git config with a value changes the configuration (it can name a program "
                     "git runs)", i + 1)
    return Assessment(key, offer, None, 1 << 30, True)


# -- sed and awk (their scripts: .scripts) --------------------------------------------------------------

_SED_OPTS = _opts("-n --quiet --silent -E -r --regexp-extended -s --separate -z --null-data -u --unbuffered "
                  "--posix --debug --sandbox -l --line-length --follow-symlinks -b --binary -e --expression",
                  "-l -e --expression",
                  {"-i": "sed's -i rewrites the files it is given", "--in-place": "sed's -i rewrites files",
                   "-f": "sed's -f runs a script from a file, which is not shown",
                   "--file": "sed's --file runs a script from a file, which is not shown"})


def _assess_sed(words: tuple[str, ...]) -> Assessment:
    key = (words[0],)
    why, at = _scan("sed", _SED_OPTS, words, 1, operand=lambda i, w: None)
    if why is not None:
        return _risk(key, None, why, at)
    scripts: list[tuple[int, str]] = []
    i, first_operand = 1, None
    while i < len(words):
        w = words[i]
        if w in ("-e", "--expression") and i + 1 < len(words):
            scripts.append((i + 1, words[i + 1]))
            i += 2
            continue
        if w.startswith("--expression="):
            scripts.append((i, w.partition("=")[2]))
        elif w.startswith("-e") and len(w) > 2:
            scripts.append((i, w[2:]))
        elif w in ("-l",):
            i += 1
        elif not w.startswith("-") and first_operand is None:
            first_operand = i
        i += 1
    if not scripts and first_operand is not None:
        scripts.append((first_operand, words[first_operand]))
    for at, script in scripts:
        if (why := sed_script_risk(script)) is not None:
            return _risk(key, None, why, at)
    return Assessment(key, None, None, 1 << 30, True)


_AWK_OPTS = _opts("-F -v --field-separator --assign -- -b --characters-as-bytes -c --traditional -P --posix "
                  "-S --sandbox -e --source --lint --re-interval",
                  "-F -v --field-separator --assign -e --source",
                  {"-f": "awk's -f runs a program from a file, which is not shown",
                   "--file": "awk's --file runs a program from a file, which is not shown",
                   "-i": "awk's -i includes a program file", "--include": "awk's --include includes a file",
                   "-l": "awk's -l loads an extension library", "--load": "awk's --load loads a library",
                   "-E": "awk's -E runs a program from a file", "--exec": "awk's --exec runs a program file",
                   "-W": "mawk's -W options are not known to be safe"})


def _assess_awk(words: tuple[str, ...]) -> Assessment:
    key = (words[0],)
    why, at = _scan(words[0], _AWK_OPTS, words, 1, operand=lambda i, w: None)
    if why is not None:
        return _risk(key, None, why, at)
    i, programs = 1, []
    while i < len(words):
        w = words[i]
        if w in ("-e", "--source") and i + 1 < len(words):
            programs.append((i + 1, words[i + 1]))
            i += 2
            continue
        if w in ("-F", "-v", "--field-separator", "--assign"):
            i += 2
            continue
        if w == "--":
            i += 1
            if i < len(words) and not programs:
                programs.append((i, words[i]))
            break
        if not w.startswith("-"):
            if not programs:
                programs.append((i, w))
            break
        i += 1
    for at, program in programs:
        if (why := awk_program_risk(program)) is not None:
            return _risk(key, None, why, at)
    return Assessment(key, None, None, 1 << 30, True)


# -- find, tar, package managers, make, interpreters, pagers... ------------------------------------------

_FIND_SAFE = frozenset(["-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-regextype", "-type", "-xtype", "-maxdepth", "-mindepth", "-newer", "-anewer", "-cnewer", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-size", "-empty", "-print", "-print0", "-printf", "-ls", "-prune", "-o", "-a", "-or", "-and", "-not", "!", "(", ")", ",", "-user", "-group", "-uid", "-gid", "-nouser", "-nogroup", "-perm", "-readable", "-writable", "-executable", "-samefile", "-links", "-inum", "-lname", "-ilname", "-true", "-false", "-quit", "-daystart", "-depth", "-mount", "-xdev", "-follow", "-L", "-H", "-P", "-noleaf", "-ignore_readdir_race", "-noignore_readdir_race", "-used", "-fstype", "-newermt", "-newerct", "-newerat", "-newermm", "-help", "-version", "-d"])
_FIND_DANGER = {
    "-exec": "find's -exec runs a program", "-execdir": "find's -execdir runs a program",
    "-ok": "find's -ok runs a program", "-okdir": "find's -okdir runs a program",
    "-delete": "find's -delete deletes the files it finds",
    "-fprint": "find's -fprint writes a file", "-fprint0": "find's -fprint0 writes a file",
    "-fprintf": "find's -fprintf writes a file", "-fls": "find's -fls writes a file",
    "-D": "find's -D is not known to be safe", "-files0-from": "find's -files0-from reads a file",
}


def _assess_find(words: tuple[str, ...]) -> Assessment:
    key = (words[0],)
    expecting_value = False
    for i, w in enumerate(words[1:], 1):
        if expecting_value:
            expecting_value = False
            continue
        if w in _FIND_DANGER:
            return _risk(key, None, _FIND_DANGER[w], i)
        if w.startswith("-") and len(w) > 1 and not w[1:].isdigit() and not w.startswith(("-O",)):
            if w not in _FIND_SAFE:
                return _risk(key, None, f"find's {w} is not known to be safe", i)
            expecting_value = w not in ("-print", "-print0", "-ls", "-prune", "-o", "-a", "-or", "-and", "-not",
                                        "-empty", "-true", "-false", "-quit", "-daystart", "-depth", "-mount",
                                        "-xdev", "-follow", "-L", "-H", "-P", "-noleaf", "-readable",
                                        "-writable", "-executable", "-nouser", "-nogroup", "-help", "-version",
                                        "-d", "-ignore_readdir_race", "-noignore_readdir_race")
    return Assessment(key, None, None, 1 << 30, True)


_TAR_DANGER = {
    "--to-command": "tar's --to-command runs a program", "-I": "tar's -I runs a compression program",
    "--use-compress-program": "tar's --use-compress-program runs a program",
    "--checkpoint-action": "tar's --checkpoint-action runs a program",
    "--info-script": "tar's --info-script runs a program", "-F": "tar's -F runs a script",
    "--new-volume-script": "tar's --new-volume-script runs a program",
    "--rsh-command": "tar's --rsh-command runs a program", "--rmt-command": "tar's --rmt-command runs a program",
    "-x": "tar's extraction writes the files named inside the archive, which are not shown",
    "--extract": "tar's extraction writes the files named inside the archive, which are not shown",
    "--get": "tar's extraction writes the files named inside the archive, which are not shown",
    "-r": "tar's -r changes an archive", "-u": "tar's -u changes an archive", "--append": "it changes an archive",
    "-A": "tar's -A changes an archive", "--delete": "tar's --delete changes an archive",
    "-T": "tar's -T reads a list of files from a file", "--files-from": "tar's --files-from reads a file",
    "-g": "tar's -g writes a snapshot file", "--listed-incremental": "tar's -g writes a snapshot file",
}
_TAR = _opts("-c --create -t --list -v --verbose -f --file -z --gzip -j --bzip2 -J --xz --zstd -a "
             "--auto-compress -C --directory --exclude --exclude-vcs --exclude-vcs-ignores --wildcards "
             "--no-wildcards --strip-components --totals -O --to-stdout -p -h --dereference --sort "
             "--mtime --owner --group --numeric-owner --no-recursion --one-file-system -k --keep-old-files "
             "--skip-old-files -W --verify -S --sparse --format -H --null -m --touch",
             "-f --file -C --directory --exclude --strip-components --sort --mtime --owner --group --format -H",
             _TAR_DANGER)


def _assess_tar(words: tuple[str, ...]) -> Assessment:
    key = (words[0],)
    ws = words
    if len(words) > 1 and words[1] and not words[1].startswith("-"):  # old style: tar czf x.tgz dir
        ws = (words[0], "-" + words[1], *words[2:])
    why, at = _scan("tar", _TAR, ws, 1)
    if why is not None:
        return _risk(key, key, why, at)
    return Assessment(key, key, None, 1 << 30, True)


_RUNS_OTHERS = {
    "env": "env runs the command it is given", "xargs": "xargs runs the command it is given",
    "sudo": "sudo runs the command it is given", "doas": "doas runs the command it is given",
    "su": "su runs a shell", "eval": "eval runs the text it is given as commands",
    "exec": "exec runs the command it is given", "source": "source runs a shell script",
    ".": ". runs a shell script", "nohup": "nohup runs the command it is given",
    "timeout": "timeout runs the command it is given", "nice": "nice runs the command it is given",
    "ionice": "ionice runs the command it is given", "command": "command runs the command it is given",
    "builtin": "builtin runs a shell builtin", "time": "time runs the command it is given",
    "watch": "watch runs the command it is given", "parallel": "parallel runs the commands it is given",
    "ssh": "ssh runs commands (on another machine, and locally through -o options)",
    "stdbuf": "stdbuf runs the command it is given", "setsid": "setsid runs the command it is given",
    "chroot": "chroot runs the command it is given", "unshare": "unshare runs the command it is given",
    "flock": "flock runs the command it is given", "strace": "strace runs the command it is given",
    "ltrace": "ltrace runs the command it is given", "gdb": "gdb runs programs and commands",
    "script": "script runs a shell", "expect": "expect runs the programs its script names",
    "busybox": "busybox runs any of its programs", "npx": "npx runs a package's program",
    "pnpx": "pnpx runs a package's program", "bunx": "bunx runs a package's program",
    "uvx": "uvx runs a package's program", "pipx": "pipx runs and installs programs",
    "vim": "vim runs commands (:!, -c) and writes files", "vi": "vi runs commands and writes files",
    "nvim": "nvim runs commands and writes files", "view": "view (vim) runs commands",
    "ex": "ex runs commands and writes files", "emacs": "emacs runs Lisp and commands",
    "nano": "nano writes files and can run commands", "ed": "ed runs commands (!) and writes files",
    "crontab": "crontab schedules commands", "at": "at schedules commands", "batch": "batch schedules commands",
    "systemd-run": "systemd-run runs the command it is given",
}
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "csh", "tcsh", "ash", "mksh"})
_INTERPRETERS = frozenset({"python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "deno", "bun",
                           "perl", "ruby", "php", "lua", "luajit", "Rscript", "R", "julia", "osascript",
                           "tclsh", "wish", "guile", "racket", "ghci", "runghc", "irb", "jshell", "pwsh",
                           "powershell", "groovy", "scala", "kotlin", "elixir", "erl", "swift", "java"})
_INTERPRETER_CODE = {"-c": "runs the code in its argument", "-e": "runs the code in its argument",
                     "--eval": "runs the code in its argument", "-p": "runs the code in its argument",
                     "--print": "runs the code in its argument", "-E": "runs the code in its argument",
                     "-r": "runs the code in its argument", "-n": "runs the code in its argument"}


def _interpreter_name(name: str) -> bool:
    return name in _INTERPRETERS or re.fullmatch(r"(python|pypy|ruby|perl|php|node|lua)[0-9.]*", name) is not None


def _assess_interpreter(words: tuple[str, ...]) -> Assessment:
    name = words[0]
    key = (name,)
    if len(words) == 1:
        return _risk(key, None, f"{name} runs any code it is given (here: its input)", 0)
    w = words[1]
    if w in _INTERPRETER_CODE:
        return _risk(key, None, f"{name} {w} {_INTERPRETER_CODE[w]}", 1)
    if w == "-m" and len(words) > 2 and _PLAIN_WORD.fullmatch(words[2]):
        # ``python -m pytest``: the module named, with any of its arguments (it runs the module's code,
        # as approving ``pytest`` would)
        return Assessment((name, "-m", words[2]), (name, "-m", words[2]), None, 1 << 30, True)
    if not w.startswith("-") and (w.endswith((".py", ".js", ".mjs", ".cjs", ".ts", ".pl", ".rb", ".php", ".lua",
                                              ".R", ".jl", ".sh")) or "/" in w):
        # ``python scripts/x.py``: that script, with any of its arguments
        return Assessment((name, w), (name, w), None, 1 << 30, True)
    return _risk(key, None, f"{name} runs any code it is given ({w} is not known to be safe)", 1)


_NPM_SAFE = frozenset({"test", "t", "tst", "ls", "list", "ll", "la", "view", "v", "info", "show", "outdated",
                       "audit", "why", "explain", "help", "--version", "-v", "version", "doctor", "search",
                       "root", "bin", "prefix", "whoami", "ping", "fund", "licenses", "lint", "typecheck",
                       "build", "start", "check", "format"})
_NPM_RUNS = {"run": "runs the package.json script it names", "run-script": "runs the package.json script",
             "exec": "runs a package's program", "x": "runs a package's program", "dlx": "runs a package's program",
             "install": "installs packages, whose install scripts run", "i": "installs packages, whose install "
             "scripts run", "ci": "installs packages, whose install scripts run", "add": "installs packages, "
             "whose install scripts run", "update": "installs packages, whose install scripts run",
             "up": "installs packages, whose install scripts run", "upgrade": "installs packages",
             "rebuild": "runs install scripts", "link": "links and builds packages", "publish": "publishes "
             "the package", "config": "changes npm's configuration", "set": "changes npm's configuration",
             "init": "runs an initializer package", "create": "runs an initializer package",
             "pack": "runs the prepack script", "restart": "runs scripts", "stop": "runs scripts",
             "uninstall": "runs lifecycle scripts", "remove": "runs lifecycle scripts", "rm": "runs scripts",
             "dedupe": "installs packages", "prune": "runs scripts", "shrinkwrap": "runs scripts"}


def _assess_npm(words: tuple[str, ...]) -> Assessment:
    name = words[0]
    if len(words) == 1:
        return _risk((name,), None, f"{name} with no subcommand is not known to be safe", 0)
    sub = words[1]
    key = (name, sub)
    if sub in ("run", "run-script") and len(words) > 2 and _PLAIN_WORD.fullmatch(words[2]):
        # ``npm run build``: that script (the question names it), with its arguments
        return Assessment((name, sub, words[2]), (name, sub, words[2]), None, 1 << 30, True)
    if sub in ("audit",) and "fix" in words[2:]:
        return _risk(key, key, f"{name} audit fix installs packages, whose install scripts run", 2)
    if sub in _NPM_RUNS:
        return _risk(key, None, f"{name} {sub} {_NPM_RUNS[sub]}", 1)
    if sub in _NPM_SAFE:
        return Assessment(key, key, None, 1 << 30, True)
    return _risk(key, None, f"{name} {sub} is not known to be safe (it may run a package.json script)", 1)


_PIP_SAFE = frozenset({"list", "show", "freeze", "check", "--version", "-V", "help", "inspect", "debug", "hash",
                       "search", "index", "cache"})


def _assess_pip(words: tuple[str, ...]) -> Assessment:
    name = words[0]
    if len(words) == 1:
        return Assessment((name,), None, None, 1 << 30, True)
    sub = words[1]
    key = (name, sub)
    if sub in _PIP_SAFE:
        return Assessment(key, key, None, 1 << 30, True)
    if sub in ("install", "download", "wheel", "uninstall", "config"):
        return _risk(key, None, f"{name} {sub} runs packages' build code or changes the environment", 1)
    return _risk(key, None, f"{name} {sub} is not known to be safe", 1)


_MAKE = _opts("-j --jobs -k --keep-going -s --silent --quiet -n --dry-run --just-print -B --always-make -q "
              "--question -w --print-directory --no-print-directory -r --no-builtin-rules -R -i -O -t -d "
              "--trace -p --print-data-base -l --load-average -S --stop",
              "-j --jobs -l --load-average -O",
              {"-f": "make's -f reads another makefile", "--file": "make's --file reads another makefile",
               "--makefile": "make's --makefile reads another makefile", "-C": "make's -C runs another "
               "folder's makefile", "--directory": "make's --directory runs another folder's makefile",
               "--eval": "make's --eval runs makefile text", "-E": "make's -E runs makefile text",
               "-I": "make's -I includes other makefiles", "--include-dir": "make's -I includes makefiles",
               "-e": "make's -e lets the environment override the makefile's commands"}, numbers=True)


def _assess_make(words: tuple[str, ...]) -> Assessment:
    name = words[0]
    targets: list[int] = []

    def operand(i: int, w: str) -> str | None:
        if "=" in w:
            return f"make's variable {w.partition('=')[0]}=... can change the commands make runs"
        targets.append(i)
        return None

    why, at = _scan("make", _MAKE, words, 1, operand)
    key = (name, words[targets[0]]) if targets else (name,)
    offer = key if targets and _PLAIN_WORD.fullmatch(words[targets[0]]) else None
    if why is not None:
        return _risk(key, offer, why, at)
    if len(targets) > 1:
        return _risk(key, offer, "make runs the recipe of each target it is given", targets[1])
    return Assessment(key, offer, None, 1 << 30, True)


_LESS = _opts("-N -R -r -S -F -X -i -I -n -M -m -s -x -e -E -f -q -Q -w -J -L --no-lessopen --LINE-NUMBERS "
              "--RAW-CONTROL-CHARS --chop-long-lines --quit-if-one-screen --no-init --ignore-case",
              "-x",
              {"-o": "less's -o writes a log file", "-O": "less's -O writes a log file",
               "--log-file": "less's --log-file writes a file", "--LOG-FILE": "less's --LOG-FILE writes a file",
               "-k": "less's -k reads key bindings, which can run programs",
               "--lesskey-file": "less's --lesskey-file reads key bindings, which can run programs",
               "--lesskey-src": "less's --lesskey-src reads key bindings, which can run programs"})


def _assess_pager(words: tuple[str, ...]) -> Assessment:
    key = (words[0],)

    def operand(i: int, w: str) -> str | None:
        return f"{words[0]}'s + commands (here {w!r}) can run programs (!)" if w.startswith("+") else None

    why, at = _scan(words[0], _LESS, words, 1, operand)
    if why is not None:
        return _risk(key, key, why, at)
    return Assessment(key, key, None, 1 << 30, True)


_MAN = _opts("-a --all -k --apropos -f --whatis -w --where --path -W -s --sections -S -M "
             "--manpath -L --locale -7 --ascii -E --encoding", "-s --sections -S -M --manpath -L --locale -E "
             "--encoding",
             {"-P": "man's -P runs the pager program it names", "--pager": "man's --pager runs a program",
              "-H": "man's -H runs a browser", "--html": "man's --html runs a browser",
              "-p": "man's -p runs preprocessors it names", "--preprocessor": "man's -p runs preprocessors",
              "-X": "man's -X runs a display program", "-Z": "man's -Z runs groff", "-l": "man's -l renders a "
              "local file (groff requests can run programs)", "--local-file": "it renders a local file",
              "-R": "man's -R recodes a file", "-t": "man's -t runs groff", "-T": "man's -T runs groff"})


def _assess_man(words: tuple[str, ...]) -> Assessment:
    key = (words[0],)

    def operand(i: int, w: str) -> str | None:
        return f"man renders the local file {w!r} (groff requests can run programs)" if "/" in w else None

    why, at = _scan("man", _MAN, words, 1, operand)
    if why is not None:
        return _risk(key, key, why, at)
    return Assessment(key, key, None, 1 << 30, True)


def _danger_only(danger: Mapping[str, str], values: str = "", offer: bool = True) -> Callable[
        [tuple[str, ...]], Assessment]:
    opts = _opts(values=values, danger=danger, strict=False)

    def assess(words: tuple[str, ...]) -> Assessment:
        key = (words[0],)
        why, at = _scan(words[0], opts, words, 1)
        offered = key if offer else None
        if why is not None:
            return _risk(key, offered, why, at)
        return Assessment(key, offered, None, 1 << 30, True)
    return assess


_PROGRAMS: dict[str, Callable[[tuple[str, ...]], Assessment]] = {
    "git": _assess_git, "sed": _assess_sed, "gsed": _assess_sed,
    "awk": _assess_awk, "gawk": _assess_awk, "mawk": _assess_awk, "nawk": _assess_awk, "busybox-awk": _assess_awk,
    "find": _assess_find, "gfind": _assess_find, "tar": _assess_tar, "gtar": _assess_tar, "bsdtar": _assess_tar,
    "npm": _assess_npm, "pnpm": _assess_npm, "yarn": _assess_npm, "bun": _assess_npm,
    "pip": _assess_pip, "pip3": _assess_pip, "make": _assess_make, "gmake": _assess_make,
    "less": _assess_pager, "more": _assess_pager, "most": _assess_pager, "man": _assess_man,
    "rsync": _danger_only({"-e": "rsync's -e runs a remote shell program", "--rsh": "rsync's --rsh runs a program",
                           "--rsync-path": "rsync's --rsync-path runs a program on the other side",
                           "--files-from": "rsync's --files-from reads a file",
                           "--include-from": "rsync's --include-from reads a file"}, offer=False),
    "scp": _danger_only({"-o": "scp's -o sets ssh options (ProxyCommand runs a program)",
                         "-S": "scp's -S runs a program", "-F": "scp's -F reads an ssh configuration"},
                        "-P -i -l -c -J", offer=False),
    "rg": _danger_only({"--pre": "rg's --pre runs a program on each file", "--pre-glob": "it runs --pre",
                        "--search-zip": "rg's -z runs decompression programs", "-z": "rg's -z runs programs"},
                       "-e -g --glob -t -T --type --type-not -A -B -C -m -M --max-columns -j --threads "
                       "--type-add -r --replace -f"),
    "fd": _danger_only({"-x": "fd's -x runs a program", "--exec": "fd's --exec runs a program",
                        "-X": "fd's -X runs a program", "--exec-batch": "fd's --exec-batch runs a program"},
                       "-e --extension -t --type -d --max-depth -E --exclude -S --size"),
    "fdfind": _danger_only({"-x": "fd's -x runs a program", "--exec": "fd's --exec runs a program",
                            "-X": "fd's -X runs a program", "--exec-batch": "fd's --exec-batch runs a program"},
                           "-e --extension -t --type -d --max-depth -E --exclude -S --size"),
    "sort": _danger_only({"--compress-program": "sort's --compress-program runs a program",
                          "--files0-from": "sort's --files0-from reads a file"}, "-k -t -S -T -o"),
    "zip": _danger_only({"-TT": "zip's -TT runs a program", "--unzip-command": "zip's --unzip-command runs "
                         "a program", "-T": "zip's -T runs unzip"}),
    "patch": lambda words: _risk((words[0],), None, "patch writes the files named inside the patch, which are "
                                 "not shown", 1),
    "unzip": lambda words: Assessment((words[0],), None, None, 1 << 30, True) if {"-l", "-t", "-v", "-Z", "-p", "-c"}
    & set(words[1:]) else _risk((words[0],), None, "unzip writes the files named inside the archive, which are not "
                                "shown", 1),
    "cpio": lambda words: _risk((words[0],), None, "cpio writes the files named inside the archive", 1),
    "curl": _danger_only({"-K": "curl's -K reads a config file", "--config": "curl's --config reads a file"},
                         "-o --output -H -d --data -X -u --user -A -e -w -T --upload-file -F"),
}


@functools.lru_cache(maxsize=2048)
def assess(words: tuple[str, ...]) -> Assessment:
    """The model's reading of one simple command's literal words (``words[0]`` its name)."""
    if not words:
        return Assessment((), None)
    name = posixpath.basename(words[0])
    if name in _RUNS_OTHERS or name in _SHELLS:
        why = _RUNS_OTHERS.get(name) or f"{name} runs the commands it is given"
        return _risk((words[0],), None, why, 1 if len(words) > 1 else 0)
    if _interpreter_name(name):
        return _assess_interpreter(words)
    model = _PROGRAMS.get(name)
    if model is not None:
        return model(words)
    offer: tuple[str, ...] = (words[0],)
    if len(words) >= 2 and _PLAIN_WORD.fullmatch(words[1]) and not words[1][0].isdigit():
        offer = words[:2]
    return Assessment(offer, offer)


def runs_others(name: str) -> bool:
    """Whether ``name`` (a command's first word) runs other commands as its arguments say."""
    base = posixpath.basename(name)
    return base in _RUNS_OTHERS or base in _SHELLS or _interpreter_name(base) or base in (
        "sed", "gsed", "awk", "gawk", "mawk", "nawk", "find", "gfind")


ARGS_NOT_FILES = frozenset({"echo", "printf", "true", "false", "test", "[", "seq", "sleep", "expr", "basename",
                            "dirname", "yes", ":", "exit", "return", "type", "which"})
"""Programs whose arguments never name a file they open: a word that is not plain text is no
path risk there (``echo $(date)``)."""
