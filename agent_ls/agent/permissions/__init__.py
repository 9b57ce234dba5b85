"""Permissions: rules from settings, then the tool's capability, then the user.

Rules are glob patterns over model-facing tool names (``mcp__github__*``,
``mcp__*__delete_*``, ``bash``; the name-pattern syntax of :mod:`agent_ls.config.globs`).
An ``mcp__<server>__<tool>`` pattern matches the (server, tool) pair: its server part is
matched against the server's name segment only (server segments never contain ``__``, see
:mod:`agent_ls.core.naming`), so ``mcp__github__*`` never matches a server ``github::ci``.
Two more shapes name what a call does:

- ``bash(git status:*)``: shell commands starting with those words; ``bash(npm test)``: that
  exact command. Matched per part of the command (:mod:`.shell`): a deny or ask rule applies
  when any part matches, an allow rule covers only the parts it matches, and every part must be
  covered for the command to run unasked. A command the parser cannot fully account for asks.
- ``write_file(.vscode/settings.json)`` / ``edit_file(...)``: the only kind of rule that allows
  a write to a protected path (:mod:`.protected`) unasked.

Deny beats ask beats allow. With no matching rule the capability decides: read runs; write,
network and unknown ask. Asking goes to an injectable approval handler (the editor or the
terminal) that answers allow once, allow for the session in one of the scopes the request
offers (:class:`SessionScope`: a shell command exactly or by a word prefix, a tool as a whole),
or deny. Protected paths and unaccounted commands offer no session scope. A denied call becomes
an error result for the model, never an exception.
"""

from __future__ import annotations

import enum
import functools
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

import attrs

from agent_ls.agent.permissions.programs import ARGS_NOT_FILES, assess
from agent_ls.agent.permissions.protected import (
    looks_like_path,
    protected_reason,
    secrets_below,
    user_location,
)
from agent_ls.agent.permissions.shell import (
    Analysis,
    CommandPattern,
    Part,
    analyze,
    offered_prefix,
    split_rule,
)
from agent_ls.agent.permissions.words import expand
from agent_ls.config.globs import name_matches, name_pattern
from agent_ls.core.naming import sanitize, server_segment
from agent_ls.core.tools import Capability, ToolSpec
from agent_ls.core.visible import visible

log = logging.getLogger(__name__)


class Decision(enum.StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class ApprovalAnswer(enum.StrEnum):
    ALLOW_ONCE = "allow_once"
    ALLOW_SESSION = "allow_session"
    DENY = "deny"


@attrs.frozen
class PermissionRules:
    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()


def merge_rules(*layers: PermissionRules) -> PermissionRules:
    return PermissionRules(
        allow=tuple(p for r in layers for p in r.allow),
        ask=tuple(p for r in layers for p in r.ask),
        deny=tuple(p for r in layers for p in r.deny),
    )



SHELL_TOOL = "bash"
WRITE_TOOLS = ("write_file", "edit_file")
"""Built-in tools whose ``path`` argument is checked against the protected paths."""
READ_TOOLS = ("read_file", "grep")
"""Built-in tools whose ``path`` argument is checked against the user's places holding secrets
(they are confined to the workspace, which may be the home folder or hold such a place)."""
_CHANGES_DIR = frozenset({"cd", "pushd"})


@attrs.frozen
class SessionScope:
    """One "allow for this session" choice a prompt offers: what is remembered and its label."""

    id: str
    """``"exact"`` (this shell command), ``"prefix"`` (shell commands starting with the shown
    words) or ``"tool"`` (the tool as a whole)."""
    keys: tuple[str, ...]
    """The grants added to the session (rule syntax: ``bash(git status:*)``, ``edit_file``)."""
    label: str
    """What the button or option says, naming the scope in full."""


@attrs.frozen
class Verdict:
    decision: Decision
    reason: str
    scopes: tuple[SessionScope, ...] = ()
    """The session scopes a prompt may offer, narrowest first (empty: allow once or deny only)."""
    sensitive: str | None = None
    """Why the call touches a protected path (the prompt shows it), or None."""


def _pair_match(pattern: str, spec: ToolSpec) -> bool:
    """An ``mcp__<server>__<tool>`` pattern against the tool's (server, tool) pair: the server
    part against the server's name segment, the tool part against the tool's own name (so a
    long name cut to 64 characters still matches the rules that name it)."""
    server_pat, sep, tool_pat = pattern[len("mcp__"):].partition("__")
    if not sep or spec.server is None:
        return name_matches(spec.name, pattern)
    tool = spec.display_name if spec.display_name is not None else spec.name.rpartition("__")[2]
    return (any(name_matches(s, server_pat) for s in (server_segment(spec.server), spec.server))
            and any(name_matches(t, tool_pat) for t in (sanitize(tool), tool)))


def _name_rule(pattern: str, spec: ToolSpec, *, restricting: bool) -> bool:
    if split_rule(pattern) is not None:
        return False  # a rule about what a call does (``bash(...)``): matched per call
    try:
        name_pattern(pattern)
    except Exception:  # noqa: BLE001 - GlobError or a non-string: the settings show the diagnostic
        return restricting
    if spec.source == "mcp" and pattern.startswith("mcp__"):
        return _pair_match(pattern, spec)
    return name_matches(spec.name, pattern)


def _match(patterns: Sequence[str], spec: ToolSpec, *, restricting: bool = False) -> str | None:
    return next((p for p in patterns if _name_rule(p, spec, restricting=restricting)), None)


@functools.lru_cache(maxsize=1024)
def _command_patterns(keys: tuple[str, ...], tool: str, restricting: bool = False) -> tuple[CommandPattern, ...]:
    """The ``tool(...)`` rules among ``keys``; an unusable one matches every command when
    ``restricting`` (deny and ask fail closed; the settings file shows the diagnostic)."""
    out = []
    for key in keys:
        shaped = split_rule(key) if isinstance(key, str) else None
        if shaped is None or shaped[0] != tool:
            continue
        if (p := CommandPattern.parse(shaped[1])) is not None:
            out.append(p)
        elif restricting:
            out.append(CommandPattern(everything=True))
    return tuple(out)


@functools.lru_cache(maxsize=256)
def _analyze(command: str) -> Analysis:
    return analyze(command)


def decide(rules: PermissionRules, spec: ToolSpec) -> tuple[Decision, str]:
    """The decision for a tool by its name and capability alone, and why. A deny or ask rule
    whose pattern is unusable applies to every tool until it is fixed (fail closed; the settings
    file shows the diagnostic); an unusable allow rule allows nothing."""
    if (p := _match(rules.deny, spec, restricting=True)) is not None:
        return Decision.DENY, f"denied by the rule {p!r} in the permissions settings"
    if (p := _match(rules.ask, spec, restricting=True)) is not None:
        return Decision.ASK, f"the rule {p!r} in the permissions settings asks first"
    if (p := _match(rules.allow, spec)) is not None:
        return Decision.ALLOW, f"allowed by the rule {p!r}"
    if spec.capability is Capability.READ:
        return Decision.ALLOW, "read-only tool"
    what = {Capability.WRITE: "it can change files or data", Capability.NETWORK: "it reaches the network",
            Capability.UNKNOWN: "what it does is not known"}[spec.capability]
    return Decision.ASK, f"{spec.name} needs approval: {what}"


def _quote(text: str) -> str:
    return f"`{visible(text)}`"


def _cwds(parts: Sequence[Part], roots: Sequence[Path]) -> tuple[list[str], str | None]:
    """The folders relative paths of the command may start from (the first root, and every
    ``cd``/``pushd`` target inside the workspace), or why the command leaves the workspace."""
    root = str(roots[0]) if roots else os.getcwd()
    cwds = [root]
    real_roots = [os.path.realpath(r) for r in roots] or [os.path.realpath(root)]
    for part in parts:
        if part.kind != "command" or part.name not in _CHANGES_DIR:
            continue
        args = [i for i in range(1, len(part.words)) if not (part.literal[i] and part.words[i].startswith("-"))]
        if not args:
            targets: list[str] | None = [os.path.expanduser("~")]
        else:
            targets = expand(part.shapes[args[0]] if part.shapes else None, root)
            if targets is not None and part.words[args[0]] == "-":
                targets = None
        if not targets:
            return cwds, f"it changes to the folder {part.text[len(part.name or ''):].strip() or '~'!r}, which " \
                         "cannot be resolved here"
        reached = []
        for target in targets:
            for cwd in cwds:  # from any folder an earlier cd may have reached (subshells, cd a && cd b)
                real = os.path.realpath(os.path.join(cwd, target))
                if not any(real == r or real.startswith(r.rstrip("/") + "/") for r in real_roots):
                    return cwds, f"it changes to {target!r}, outside the workspace, where the paths it names " \
                                 "are not checked"
                reached.append(real)
        cwds += [r for r in dict.fromkeys(reached) if r not in cwds]
        if len(cwds) > 32:
            return cwds, "it changes folders too often to follow"
    return cwds, None


def _candidates(word: str) -> set[str]:
    """A literal argument and the paths it may carry: ``--output=FILE``, ``-oFILE``."""
    out = {word, word.partition("=")[2]}
    if word.startswith("-") and not word.startswith("--") and len(word) > 2:
        out.add(word[2:])
    return out - {""}


_COPIES = frozenset({"cp", "mv", "rsync", "ditto", "scp"})
_MAX_WALK = 10_000
"""A folder a command copies is walked for protected names up to this many entries (more: it asks)."""


def _copied_folder(part: Part, paths: Sequence[str], cwd: str) -> str | None:
    """Why a copy or move of the folders among ``paths`` would create a protected name (``cp -r
    vendor/. .`` where ``vendor/.vscode/tasks.json`` exists), or None."""
    if part.name not in _COPIES:
        return None
    for path in paths:
        folder = path if os.path.isabs(path) else os.path.join(cwd, path)
        if not os.path.isdir(folder) or os.path.islink(folder):
            continue
        seen = 0
        for top, dirs, files in os.walk(folder, followlinks=False):
            for name in dirs + files:
                seen += 1
                if seen > _MAX_WALK:
                    return f"it copies the folder {path!r}, too large to check for protected files"
                rel = os.path.relpath(os.path.join(top, name), folder)
                if (why := protected_reason(rel)) is not None:
                    return f"it copies the folder {path!r}, which holds {rel!r}, a protected name: {why}"
    return None


def _part_sensitive(part: Part, roots: Sequence[Path], cwds: Sequence[str]) -> str | None:
    if part.kind == "write":
        for base in cwds:
            if (why := protected_reason(part.text, roots, base, user_places=True)) is not None:
                return f"it writes {part.text!r}, a protected file: {why}"
        return None
    if part.name in ARGS_NOT_FILES:
        return None
    shapes = part.shapes or tuple(None for _ in part.words)
    text = assess(part.words).text if not all(part.literal) else frozenset()
    sources = _sources(part)
    for i, (word, lit, shape) in enumerate(zip(part.words, part.literal, shapes, strict=True)):
        if i == 0 or (not lit and i in text):
            continue  # the name; or text the program reads as text (git commit -m "$(…)")
        if lit:
            candidates = _candidates(word)
        else:
            expanded = expand(shape, cwds[0])
            if expanded is None:
                return (f"its argument {word!r} is not plain text and cannot be expanded here, so it could "
                        "name a protected file")
            candidates = {c for w in expanded for c in _candidates(w)}
        for candidate in candidates:
            for k, base in enumerate(cwds):
                if k == 0 and lit and not looks_like_path(candidate):
                    continue
                if (why := protected_reason(candidate, roots, base, user_places=True)) is not None:
                    return f"it names {candidate!r}, a protected path: {why}"
            if i in sources:
                for base in cwds:
                    if (why := _copied_folder(part, sorted(candidates), base)) is not None:
                        return why
    return None


def _sources(part: Part) -> frozenset[int]:
    """The indices of the words a copy or move reads from (every operand but the destination)."""
    if part.name not in _COPIES:
        return frozenset()
    operands = [i for i in range(1, len(part.words)) if not part.words[i].startswith("-")]
    target = next((i + 1 for i in range(1, len(part.words)) if part.words[i] in ("-t", "--target-directory")), None)
    if target is not None or any(w.startswith("--target-directory=") for w in part.words):
        return frozenset(i for i in operands if i != target)
    return frozenset(operands[:-1])


def _beyond(part: Part) -> str:
    """Why no prefix grant covers ``part`` (the program model's reason), as a parenthesis."""
    if not all(part.literal):
        return ""
    risk = assess(part.words).risk
    return f" ({risk}, so no grant covers it)" if risk else ""


def _scope_label(patterns: Sequence[CommandPattern]) -> str:
    shown = [_quote(p.exact) if p.exact is not None else _quote(" ".join(p.prefix)) + " …" for p in patterns]
    return "Allow " + " and ".join(shown) + " for this session"


OUTSIDE_SANDBOX = "outside_sandbox"
"""The ``bash`` argument that asks to run a command outside the sandbox (always asks the user)."""


@attrs.frozen
class SandboxState:
    """What the gate knows about the OS sandbox ``bash`` runs in (:mod:`agent_ls.core.sandbox`)."""

    enabled: bool = False
    """``agent.sandbox.enabled``: False, commands run as before (and ask as before)."""
    available: bool = False
    """A mechanism works here; enabled but not available: every command asks."""
    auto_allow: bool = False
    """``agent.sandbox.autoAllow``: a command the sandbox contains runs without asking."""
    contains_power_files: bool = False
    """The mechanism keeps the workspace's power files read-only (bubblewrap, Seatbelt; not
    Landlock): ``autoAllow`` needs it."""
    detail: str = ""
    """The mechanism, or why none is available."""

    @classmethod
    def of(cls, enabled: bool, auto_allow: bool) -> SandboxState:
        """The state on this machine (probes the mechanism once)."""
        from agent_ls.core.sandbox import Mechanism, detect

        found = detect()
        return cls(enabled, found.available, auto_allow,
                   found.mechanism in (Mechanism.BUBBLEWRAP, Mechanism.SEATBELT), found.sentence())


class PermissionGate:
    """Rules + the approval handler + what the user allowed for this session.

    ``session_allowed`` holds grants in rule syntax: a tool name (``edit_file``) or a shell
    command scope (``bash(git status:*)``, ``bash(npm test)``).
    """

    def __init__(self, rules: PermissionRules | None = None, handler: ApprovalHandler | None = None,
                 roots: Sequence[Path] = (), sandbox: SandboxState | None = None) -> None:
        self.rules = rules or PermissionRules()
        self.sandbox = sandbox or SandboxState()
        self.handler = handler
        self.roots = tuple(roots)
        self.session_allowed: set[str] = set()

    # -- deciding ---------------------------------------------------------------------------------
    def evaluate(self, spec: ToolSpec, arguments: dict[str, Any] | None) -> Verdict:
        """The decision for one call, with the scopes a prompt may offer."""
        rules, args = self.rules, arguments if isinstance(arguments, dict) else {}
        if (p := _match(rules.deny, spec, restricting=True)) is not None:
            return Verdict(Decision.DENY, f"denied by the rule {p!r} in the permissions settings")
        if spec.source == "builtin" and spec.name == SHELL_TOOL:
            return self._shell(spec, args)
        tool_scope = SessionScope("tool", (spec.name,), f"Allow {spec.display_name or spec.name} for this session")
        if spec.source == "builtin" and spec.name in READ_TOOLS:
            path = args.get("path", ".")
            if isinstance(path, str) and (why := self._secret(path)) is not None:
                return Verdict(Decision.ASK, f"{visible(path)} {why}. Reading it always asks", sensitive=why)
        if spec.source == "builtin" and spec.name in WRITE_TOOLS:
            path = args.get("path")
            why = protected_reason(path, self.roots, user_places=True) if isinstance(path, str) else None
            if why is not None and isinstance(path, str):
                exact = f"{spec.name}({path})"
                if exact in rules.allow and exact not in rules.ask:
                    return Verdict(Decision.ALLOW, f"allowed by the rule {exact!r}")
                return Verdict(Decision.ASK, f"{visible(path)} is a protected file: {why}. Writes to it always "
                               f"ask; only the rule {exact!r} would allow them", sensitive=why)
            tool_scope = attrs.evolve(tool_scope, label=f"Allow {spec.name} for this session (protected files "
                                      "such as .git/ and .vscode/ still ask)")
        decision, reason = decide(rules, spec)
        if decision is Decision.ALLOW:
            return Verdict(decision, reason)
        if spec.name in self.session_allowed:
            return Verdict(Decision.ALLOW, "allowed for this session")
        return Verdict(Decision.ASK, reason, (tool_scope,))

    def _secret(self, path: str) -> str | None:
        """Why reading ``path`` (a file, or a folder a search walks) reads the user's secrets."""
        base = str(self.roots[0]) if self.roots else None
        if (why := user_location(path, base, reading=True)) is not None:
            return f"is one of your own files outside the project: {why}"
        joined = path if os.path.isabs(path) else os.path.join(base or os.getcwd(), path)
        if os.path.isdir(joined) and (place := secrets_below(joined)) is not None:
            return f"holds {place}, one of your own folders with credentials"
        return None

    def _shell(self, spec: ToolSpec, args: dict[str, Any]) -> Verdict:
        rules, command = self.rules, args.get("command")
        # (long commands are not cached: 256 of them could hold tens of megabytes)
        analysis = _analyze(command) if isinstance(command, str) and len(command) <= 8192 else analyze(command)
        parts, whole = analysis.parts, analysis.command.strip()
        box = self.sandbox
        outside = args.get(OUTSIDE_SANDBOX) is True  # (only a sandboxed bash has the argument)
        if outside or (box.enabled and not box.available):
            for p in _command_patterns(tuple(rules.deny), SHELL_TOOL, True):
                if p.exact == whole or any(p.matches(part) for part in parts):
                    return Verdict(Decision.DENY, f"denied by the rule {p.rule()!r} in the permissions settings")
            unboxed = ("run outside the sandbox: " + _quote(whole) + ", with your full rights (no limits on files "
                       "or network)") if outside else f"{box.detail}; this command would run with your full rights"
            return Verdict(Decision.ASK, unboxed, sensitive=unboxed)
        if analysis.unaccounted is not None:
            return Verdict(Decision.ASK, f"this command cannot be checked part by part ({analysis.unaccounted}), "
                           "so it asks every time")

        def covered(patterns: Sequence[CommandPattern], part: Part) -> bool:
            return any(p.covers(part) for p in patterns)

        for p in _command_patterns(tuple(rules.deny), SHELL_TOOL, True):
            if p.exact == whole or any(p.matches(part) for part in parts):
                return Verdict(Decision.DENY, f"denied by the rule {p.rule()!r} in the permissions settings")
        cwds, leaves = _cwds(parts, self.roots)
        if leaves is not None:
            return Verdict(Decision.ASK, f"{leaves}. Such commands always ask", sensitive=leaves)
        for part in parts:
            if (why := _part_sensitive(part, self.roots, cwds)) is not None:
                return Verdict(Decision.ASK, f"{why}. Such commands always ask", sensitive=why)
        asked = _match(rules.ask, spec, restricting=True)
        ask_rules = _command_patterns(tuple(rules.ask), SHELL_TOOL, True)
        hit = next((p for p in ask_rules if p.exact == whole or any(p.matches(q) for q in parts)), None)
        if box.enabled and box.auto_allow and box.contains_power_files and asked is None and hit is None:
            return Verdict(Decision.ALLOW, "runs in the OS sandbox (agent.sandbox.autoAllow)")
        grants = _command_patterns(tuple(sorted(self.session_allowed)), SHELL_TOOL)
        allows = _command_patterns(tuple(rules.allow), SHELL_TOOL)
        allow_all = asked is None and hit is None and _match(rules.allow, spec) is not None
        whole_granted = any(p.exact == whole for p in grants)
        whole_allowed = asked is None and hit is None and any(p.exact == whole for p in allows)
        if allow_all or whole_allowed:
            return Verdict(Decision.ALLOW, "allowed by the permissions settings")
        if whole_granted:
            return Verdict(Decision.ALLOW, "allowed for this session")
        open_parts = [q for q in parts if not covered(grants, q)
                      and not (asked is None and hit is None and covered(allows, q))]
        if not open_parts:
            by_grants = all(covered(grants, q) for q in parts)
            return Verdict(Decision.ALLOW, "allowed for this session" if by_grants
                           else "every part is allowed by the permissions settings or for this session")
        if asked is not None or hit is not None:
            rule = asked if asked is not None else hit.rule() if hit is not None else ""
            reason = f"the rule {rule!r} in the permissions settings asks first"
        else:
            shown = ", ".join(_quote(q.text) + _beyond(q) if q.kind == "command" else f"writing {_quote(q.text)}"
                              for q in open_parts)
            reason = f"bash needs approval: it runs commands; not allowed yet: {shown}"
        # An exact text ending ":*" would read back as a prefix: never offered as an exact grant.
        scopes = [] if whole.endswith(":*") else [
            SessionScope("exact", (f"{SHELL_TOOL}({whole})",), "Allow exactly this command for this session")]
        if all(q.kind == "command" for q in open_parts):
            patterns: list[CommandPattern] = []
            for q in open_parts:
                prefix = offered_prefix(q)
                pat = CommandPattern(prefix=prefix) if prefix else CommandPattern(exact=q.text.strip())
                if pat not in patterns:
                    patterns.append(pat)
            if any(p.exact is None for p in patterns) and not any((p.exact or "").endswith(":*") for p in patterns):
                scopes.append(SessionScope("prefix", tuple(p.rule() for p in patterns), _scope_label(patterns)))
        return Verdict(Decision.ASK, reason, tuple(scopes))

    # -- the session's gate -----------------------------------------------------------------------
    def runs_without_asking(self, spec: ToolSpec, arguments: dict[str, Any] | None = None) -> bool:
        return self.evaluate(spec, arguments).decision is Decision.ALLOW

    def approval_reason(self, spec: ToolSpec, arguments: dict[str, Any] | None = None) -> str | None:
        """Why the user will be asked before this call runs, or None when nobody is asked."""
        verdict = self.evaluate(spec, arguments)
        if verdict.decision is not Decision.ASK or self.handler is None:
            return None
        return verdict.reason

    async def check(self, spec: ToolSpec, arguments: dict[str, Any], *, call_id: str = "",
                    session_id: str | None = None) -> tuple[bool, str]:
        """Whether this call may run, and why; asks the handler when the rules leave it to the user.
        ``call_id`` and ``session_id`` name the call in the question (the front end shows it next
        to that call's card)."""
        verdict = self.evaluate(spec, arguments)
        if verdict.decision is Decision.DENY:
            return False, f"This call was not run: {verdict.reason}."
        if verdict.decision is Decision.ALLOW:
            return True, verdict.reason
        if self.handler is None:
            return False, f"This call was not run: {verdict.reason}, and no approver is attached."
        answer = await self.handler(ApprovalRequest(spec, arguments, verdict.reason, verdict.scopes,
                                                    verdict.sensitive, call_id, session_id))
        scope: SessionScope | None = None
        if isinstance(answer, SessionScope):
            scope = answer if answer in verdict.scopes else None
        elif answer is ApprovalAnswer.ALLOW_SESSION:
            scope = verdict.scopes[0] if verdict.scopes else None
        elif answer is not ApprovalAnswer.ALLOW_ONCE:
            return False, "The user denied this call."
        if scope is None:
            return True, "allowed once"
        self.session_allowed.update(scope.keys)
        return True, f"allowed for this session ({scope.label})"


@attrs.frozen
class ApprovalRequest:
    spec: ToolSpec
    arguments: dict[str, Any]
    reason: str
    scopes: tuple[SessionScope, ...] = ()
    """The "allow for this session" choices to offer, narrowest first; none: only once or deny."""
    sensitive: str | None = None
    """Why the call touches a protected path, for the prompt to show."""
    call_id: str = ""
    """The tool call asking (the id of its ``tool_call_started`` event and card)."""
    session_id: str | None = None
    """The session whose turn made the call; None for a direct call from the editor. A
    subagent's call names its parent's session (the chat the user sees)."""
    agent: str | None = None
    """The subagent that makes the call, as the user is shown it (``explore: find the retry
    logic``: its name and the description of its task); None for the conversation's own calls."""

    def scope(self, scope_id: str | None) -> SessionScope | None:
        """The offered scope with this id (a front end's answer), or None."""
        return next((s for s in self.scopes if s.id == scope_id), None)


class ApprovalHandler(Protocol):
    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer | SessionScope: ...


NETWORK_QUESTION = "sandbox_network"
"""The name a network question from the sandbox's proxy carries (it is no tool the model calls)."""


NETWORK_ALWAYS = "always"
"""The id of the network question's "always allow this host in this workspace" choice."""


def host_asker(handler: ApprovalHandler, remember: Callable[[str], None] | None = None,
               ) -> Callable[[str], Awaitable[Literal["once", "session", "deny"]]]:
    """An ``ask_host`` for the sandbox's proxy (``agent.sandbox.network: "ask"``) that puts the host
    to the user through the same approval handler as any tool call: allow once, allow the host
    for this session, always allow it in this workspace (when ``remember`` can keep that as the
    user's decision, outside the workspace), or deny."""
    spec = ToolSpec(name=NETWORK_QUESTION, description="A sandboxed command reaches a host on the network",
                    input_schema={"type": "object"}, capability=Capability.NETWORK)

    async def ask(host: str) -> Literal["once", "session", "deny"]:
        key = f"{NETWORK_QUESTION}({host})"
        scopes = [SessionScope("session", (key,), f"Allow {host} for this session")]
        if remember is not None:
            scopes.append(SessionScope(NETWORK_ALWAYS, (key,), f"Always allow {host} in this workspace"))
        answer = await handler(ApprovalRequest(spec, {"host": host}, f"a command in the sandbox wants to reach "
                                               f"{visible(host)} (agent.sandbox.network asks)", tuple(scopes)))
        if isinstance(answer, SessionScope) and answer.id == NETWORK_ALWAYS and remember is not None:
            try:
                remember(host)
            except (OSError, ValueError):
                log.exception("could not keep the grant for %s", host)
            return "session"
        if isinstance(answer, SessionScope) or answer is ApprovalAnswer.ALLOW_SESSION:
            return "session"
        return "once" if answer is ApprovalAnswer.ALLOW_ONCE else "deny"

    return ask
