"""Shell commands split into what the permission gate matches: one :class:`Part` per simple
command (``;``, ``&&``, ``||``, ``|``, ``&``, newlines, ``$(…)``, backticks and ``<(…)``/``>(…)``
all separate parts) and one per redirection that writes a file.

The parser is tree-sitter-bash (the grammar GitHub and editors use, maintained, a C parser
with error recovery: it parses 1 MB in milliseconds and marks what it could not parse). The
walk is an allowlist: a node it does not know (``if``, ``for``, functions, ``export``, a
command name that is an expansion, a parse error, a heredoc with an expanding body it cannot
see through) makes the command *unaccounted* (:attr:`Analysis.unaccounted` says why), and an
unaccounted command always asks and can never be granted for the session.
"""

from __future__ import annotations

import functools
import posixpath
import re
import shlex
from typing import Any

import attrs

from agent_ls.agent.permissions.programs import assess, runs_others

MAX_COMMAND = 200_000
"""Longer commands are not parsed (a prompt shows them; no grant or rule can cover them)."""
MAX_DEPTH = 64
"""Deeper nesting (``$($($(…)))``) is not walked: the command is unaccounted."""

_STRUCTURE = frozenset({"program", "list", "pipeline", "redirected_statement", "subshell", "comment"})
_OPERATORS = frozenset({";", ";;", "&&", "||", "|", "|&", "&", "(", ")", "\n"})
_LITERAL_ARGS = frozenset({"word", "number", "raw_string", "string", "concatenation"})
_EXPANDING = frozenset({"simple_expansion", "expansion", "command_substitution", "process_substitution",
                        "arithmetic_expansion", "string", "concatenation", "brace_expression"})
_WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_PLAIN_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:+-]*")
_NOT_PARSED = re.compile("[\ud800-\udfff\U00010000-\U0010ffff]")
"""Characters never handed to the parser: lone surrogates, and everything outside the Basic
Multilingual Plane (emoji, private-use planes): tree-sitter-bash 0.25.1 crashes the process on
some of them (found by the hypothesis test in tests/agent/test_shell_permissions.py), so a
command holding one is unaccounted (it asks every time)."""
RUNS_OTHER_COMMANDS = frozenset({  # (and the programs :func:`.programs.runs_others` names)
    "sh", "bash", "zsh", "dash", "ksh", "fish", "env", "sudo", "doas", "su", "xargs", "eval", "exec", "source",
    ".", "nohup", "timeout", "nice", "command", "builtin", "time", "watch", "ssh", "parallel", "find",
})
"""Commands whose arguments are (or may be) another command: never offered as a prefix grant."""


@attrs.frozen
class Part:
    """One simple command, or one file a redirection writes (``kind == "write"``)."""

    kind: str
    """``"command"`` or ``"write"``."""
    text: str
    """The source text of the command (for ``write``: the target as written)."""
    words: tuple[str, ...] = ()
    """The command's words, quotes removed where the word is a literal; env assignments first."""
    literal: tuple[bool, ...] = ()
    """Per word: True when the word is plain text (no expansion, substitution or glob)."""
    shapes: tuple[Shape | None, ...] = ()
    """Per word: its pieces for expansion (:data:`Shape`), or None when the shell computes it from
    something not known here (a command substitution, a variable other than ``HOME``)."""

    @property
    def name(self) -> str | None:
        """The command name when it is literal (and no ``VAR=…`` comes first), else None."""
        if self.words and self.literal[0] and "=" not in self.words[0]:
            return self.words[0]
        return None

    def starts_with(self, prefix: tuple[str, ...]) -> bool:
        n = len(prefix)
        return 0 < n <= len(self.words) and all(self.literal[:n]) and self.words[:n] == prefix


Shape = tuple[tuple[str, bool], ...]
"""A word as pieces of text: ``(text, quoted)``; unquoted pieces are subject to brace expansion,
tilde expansion (at the start) and globbing, quoted ones are taken as written."""


@attrs.frozen
class Analysis:
    command: str
    parts: tuple[Part, ...] = ()
    unaccounted: str | None = None
    """Why the command cannot be fully accounted for (then it always asks), or None."""


class _Unaccounted(Exception):
    pass


@functools.cache
def _parser() -> Any:
    # lazy: tree_sitter and the bash grammar, +4 modules, ~5 ms at start-up
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace")


def _literal(node: Any) -> str | None:
    """The value of an argument node when it is plain text, else None."""
    t = node.type
    if t in ("word", "number"):
        s = _text(node)
        return None if any(c in s for c in "*?[\\{~") else s
    if t == "raw_string":
        return _text(node)[1:-1]
    if t == "string":
        if "\\" in _text(node) or any(c.type != "string_content" for c in node.named_children):
            return None
        return "".join(_text(c) for c in node.named_children)
    if t == "concatenation":
        pieces = [_literal(c) for c in node.named_children]
        return None if any(p is None for p in pieces) else "".join(p for p in pieces if p is not None)
    return None


_HOME_VARS = frozenset({"HOME"})


def _unquoted(text: str) -> Shape:
    """An unquoted word's text as pieces: backslash escapes are quoted pieces."""
    out: list[tuple[str, bool]] = []
    buf, i = "", 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            if buf:
                out.append((buf, False))
                buf = ""
            out.append((text[i + 1], True))
            i += 2
            continue
        buf += c
        i += 1
    if buf:
        out.append((buf, False))
    return tuple(out)


def _shape(node: Any) -> Shape | None:
    """The pieces of an argument node (see :data:`Shape`), or None."""
    t = node.type
    if t in ("word", "number"):
        return _unquoted(_text(node))
    if t == "raw_string":
        return ((_text(node)[1:-1], True),)
    if t == "brace_expression":
        return ((_text(node), False),)
    if t in ("simple_expansion", "expansion"):
        names = [c for c in node.named_children if c.type == "variable_name"]
        if len(node.named_children) == 1 and names and _text(names[0]) in _HOME_VARS:
            return ((posixpath.expanduser("~"), True),)
        return None
    if t == "string":
        out: list[tuple[str, bool]] = []
        for c in node.named_children:
            if c.type == "string_content":
                out.append((re.sub(r'\\([$`"\\\n])', r"\1", _text(c)), True))
            else:
                inner = _shape(c)
                if inner is None:
                    return None
                out.extend((text, True) for text, _q in inner)
        return tuple(out)
    if t == "concatenation":
        pieces: list[tuple[str, bool]] = []
        for c in node.named_children:
            inner = _shape(c)
            if inner is None:
                return None
            pieces.extend(inner)
        return tuple(pieces)
    return None


class _Walker:
    def __init__(self) -> None:
        self.parts: list[Part] = []

    def statement(self, node: Any, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise _Unaccounted("it is nested too deeply to check")
        if node.type == "ERROR" or node.is_missing:
            raise _Unaccounted("the shell parser could not parse it")
        t = node.type
        if t == "command":
            self.command(node, depth)
        elif t in _STRUCTURE:
            for child in node.children:
                if child.is_named:
                    if child.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                        self.redirect(child, depth)
                    else:
                        self.statement(child, depth + 1)
                elif child.type not in _OPERATORS and _text(child).strip():
                    raise _Unaccounted(f"it uses {_text(child)!r}, which is not checked")
        elif t == "negated_command":
            for child in node.named_children:
                self.statement(child, depth + 1)
        else:
            raise _Unaccounted(f"it contains a {t.replace('_', ' ')}, which is not checked part by part")

    def nested(self, node: Any, depth: int) -> None:
        """Every command hidden inside an argument (``$(…)``, backticks, ``<(…)``)."""
        if depth > MAX_DEPTH:
            raise _Unaccounted("it is nested too deeply to check")
        if node.type == "ERROR" or node.is_missing:
            raise _Unaccounted("the shell parser could not parse it")
        if node.type in ("command_substitution", "process_substitution"):
            for child in node.named_children:
                self.statement(child, depth + 1)
            return
        if node.type == "expansion" and any(c.type not in ("variable_name", "special_variable_name")
                                             for c in node.named_children):
            raise _Unaccounted(f"it uses the expansion {_text(node)!r}, which is not checked")
        for child in node.named_children:
            self.nested(child, depth + 1)

    def command(self, node: Any, depth: int) -> None:
        words: list[str] = []
        literal: list[bool] = []
        shapes: list[Shape | None] = []
        for child in node.named_children:
            t = child.type
            if t == "variable_assignment":
                self.nested(child, depth)
                words.append(_text(child))
                literal.append(_literal(child.named_children[-1]) is not None if len(child.named_children) > 1
                               else True)
                shapes.append(((words[-1], True),) if literal[-1] else None)
            elif t == "command_name":
                inner = child.named_children[0] if child.named_children else child
                value = _literal(inner)
                if value is None:
                    raise _Unaccounted(f"the command name {_text(child)!r} is not plain text")
                words.append(value)
                literal.append(True)
                shapes.append(((value, True),))
            elif t in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                self.redirect(child, depth)
            elif t in _LITERAL_ARGS or t in _EXPANDING:
                self.nested(child, depth)
                value = _literal(child)
                words.append(_text(child) if value is None else value)
                literal.append(value is not None)
                shapes.append(((value, True),) if value is not None else _shape(child))
            else:
                raise _Unaccounted(f"it contains a {t.replace('_', ' ')}, which is not checked part by part")
        if not any(c.type == "command_name" for c in node.named_children):
            raise _Unaccounted("it only sets shell variables")
        self.parts.append(Part("command", _text(node), tuple(words), tuple(literal), tuple(shapes)))

    def redirect(self, node: Any, depth: int) -> None:
        self.nested(node, depth)
        if node.type != "file_redirect":
            return  # heredoc / herestring: input only; commands inside were walked above
        ops = [_text(c) for c in node.children if not c.is_named]
        targets = [c for c in node.named_children if c.type != "file_descriptor"]
        target = targets[-1] if targets else None
        op = ops[0] if len(ops) == 1 else None
        if op is None or target is None:
            raise _Unaccounted(f"the redirection {_text(node)!r} is not understood")
        if op in (">&", "<&") and (_text(target).isdigit() or _text(target) == "-"):
            return  # duplicating or closing a descriptor
        if op in ("<", "<&"):
            return  # reading
        if op not in _WRITE_OPS and op != ">&":  # ">& file" writes like "&>"
            raise _Unaccounted(f"the redirection {_text(node)!r} is not understood")
        value = _literal(target) if target is not None else None
        if value is None:
            raise _Unaccounted(f"it writes to {_text(node)!r}, a file name that is not plain text")
        if value not in _HARMLESS_TARGETS:
            self.parts.append(Part("write", value))


def analyze(command: object) -> Analysis:
    """``command`` split into parts; never raises (anything odd is :attr:`Analysis.unaccounted`)."""
    if not isinstance(command, str):
        return Analysis(str(command), unaccounted="the command is not text")
    if len(command) > MAX_COMMAND:
        return Analysis(command, unaccounted=f"it is longer than {MAX_COMMAND:,} characters")
    if "\x00" in command:
        return Analysis(command, unaccounted="it contains a NUL character")
    if (odd := _NOT_PARSED.search(command)) is not None:
        return Analysis(command, unaccounted=f"it contains the character U+{ord(odd.group()):04X}, which the "
                        "shell parser is not used on")
    if not command.strip():
        return Analysis(command, unaccounted="it is empty")
    try:
        tree = _parser().parse(command.encode("utf-8"))
    except Exception as e:  # noqa: BLE001 - any parser failure is a prompt, never a crash
        return Analysis(command, unaccounted=f"the shell parser failed ({type(e).__name__})")
    root = tree.root_node
    if root.has_error:
        return Analysis(command, unaccounted="the shell parser could not parse all of it")
    walker = _Walker()
    try:
        walker.statement(root, 0)
    except _Unaccounted as e:
        return Analysis(command, unaccounted=str(e))
    except RecursionError:
        return Analysis(command, unaccounted="it is nested too deeply to check")
    if not walker.parts:
        return Analysis(command, unaccounted="no command was found in it")
    return Analysis(command, tuple(walker.parts))


# -- rules and grants: ``bash(git status:*)`` (prefix) and ``bash(git status --short)`` (exact) --

@attrs.frozen
class CommandPattern:
    """A command rule's body: a word prefix (``git status:*``) or an exact command text."""

    exact: str | None = None
    prefix: tuple[str, ...] = ()
    everything: bool = False
    """An unusable deny or ask rule: it applies to every command until it is fixed."""

    @classmethod
    def parse(cls, body: str) -> CommandPattern | None:
        body = body.strip()
        if body.endswith(":*"):
            try:
                words = tuple(shlex.split(body[:-2]))
            except ValueError:
                return None
            return cls(prefix=words) if words else None
        return cls(exact=body) if body else None

    def covers(self, part: Part) -> bool:
        """Whether a grant or allow rule of this pattern covers ``part``: the exact text, or the
        prefix (as written, or as the program model names the command: ``git log`` for ``git
        --no-pager log``) and every later word within the program's known-safe options
        (:mod:`.programs`)."""
        if part.kind != "command":
            return False
        if self.everything:
            return True
        if self.exact is not None:
            return part.text.strip() == self.exact
        if not part.words or part.words[0] != self.prefix[0] or not part.literal[0]:
            return False  # (the model's name for a command always starts with its first word)
        verdict = assess(part.words)
        if verdict.modeled and not _readable(part, verdict.text):
            return False  # a word the model cannot read (the exact text may still be granted)
        if part.starts_with(self.prefix):  # the words the pattern names are covered, later ones if safe
            return verdict.risk is None or verdict.risk_at < len(self.prefix)
        return verdict.risk is None and verdict.key[:len(self.prefix)] == self.prefix

    def matches(self, part: Part) -> bool:
        """Whether a deny or ask rule of this pattern applies to ``part``: as :meth:`covers`, but
        whatever the options, and also by the program model's name for the command (a rule on
        ``git push`` applies to ``git -C x push``)."""
        if part.kind != "command":
            return False
        if self.everything:
            return True
        if self.exact is not None:
            return part.text.strip() == self.exact
        if part.starts_with(self.prefix):
            return True
        if not part.words or not part.literal[0] or part.words[0] != self.prefix[0]:
            return False
        n = len(self.prefix)
        literal_words = tuple(w for w, lit in zip(part.words, part.literal, strict=True) if lit)
        key = assess(literal_words).key
        return len(key) >= n and key[:n] == self.prefix

    def rule(self, tool: str = "bash") -> str:
        if self.everything:
            return f"{tool}(...) (unusable)"
        if self.exact is not None:
            return f"{tool}({self.exact})"
        return f"{tool}({shlex.join(self.prefix)}:*)"


def _readable(part: Part, text: frozenset[int]) -> bool:
    """Every word plain text, or text the program does not read as an option or a file."""
    return all(lit or i in text for i, lit in enumerate(part.literal))


def split_rule(rule: str) -> tuple[str, str] | None:
    """``"bash(git status:*)"`` -> ``("bash", "git status:*")``; None for a plain name pattern."""
    if rule.endswith(")") and "(" in rule:
        name, _, body = rule.partition("(")
        if name and _PLAIN_WORD.fullmatch(name.replace("*", "a")):
            return name, body[:-1]
    return None


def offered_prefix(part: Part) -> tuple[str, ...] | None:
    """The prefix a prompt offers for one command part: the program model's name for it (``git
    status`` for ``git status -s``, ``git log`` for ``git --no-pager log``, ``npm run build``),
    else the name and a subcommand-like second word, else the name alone. None when only the
    exact command fits: a ``VAR=…`` first, a word that is not plain text, a command that runs
    other commands (``sh``, ``env``, ``xargs``, ``sed``, ``awk``, ``find``, interpreters), or one
    whose options go beyond what a grant covers (the prefix would not cover it)."""
    name = part.name
    if name is None or name in RUNS_OTHER_COMMANDS:
        return None
    verdict = assess(part.words)
    if verdict.risk is not None or verdict.offer is None or (verdict.modeled and not _readable(part, verdict.text)):
        return None
    if len(verdict.offer) == 1 and runs_others(name):
        return None  # never the bare name of a program that runs others
    return verdict.offer
