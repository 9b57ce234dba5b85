"""Checkpoints in the conversation service (issue 40 on issue 39's observer points): a
checkpoint of the workspace before each prompt's turn, what the turn changed recorded after it
(however it ended), and rewind / redo as the user's actions, the same in every front end.

:class:`TurnCheckpoints` is a :class:`~agent_ls.runtime.turns.TurnObserver` over
:class:`agent_ls.agent.checkpoints.Checkpoints` (the engine: a content-addressed store in the
data directory that never touches the user's ``.git``). It sees every change path at once: the
editor's edits, MCP servers writing files and shell commands all land on the disk, and the
checkpoint compares the workspace before and after the turn. A checkpoint that cannot be taken
(a full disk, say) is logged and the turn runs without one: a prompt never fails for it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from agent_ls.agent.checkpoints import Checkpoint, Checkpoints, RewindPlan, RewindResult
    from agent_ls.agent.store import SessionStore
    from agent_ls.runtime.turns import PendingRequests


class TurnInfo(Protocol):
    """A turn as the conversation service tells it (:class:`agent_ls.runtime.turns.TurnInfo`)."""

    @property
    def session_id(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def compact(self) -> bool: ...

    @property
    def index(self) -> int: ...

    @property
    def hooks(self) -> bool: ...

log = logging.getLogger("agent_ls.runtime")


def open_checkpoints(roots: Sequence[Path]) -> Checkpoints:
    """The checkpoints of the workspace ``roots`` in the user's data directory (blocking)."""
    # lazy: the engine (sqlite3, zlib, pathspec), only when checkpoints are used
    from agent_ls.agent.checkpoints import Checkpoints
    from agent_ls.config.paths import user_data_dir

    return Checkpoints.for_workspace(user_data_dir(), list(roots))


def open_session_store(root: Path) -> SessionStore:
    """The session store of the workspace folder ``root`` (blocking): a conversation rewind
    outside a running front end (``agent-ls checkpoints``) takes its history back there."""
    # lazy: sqlite3 and platformdirs, +24 modules, ~15 ms at start-up
    from agent_ls.agent.store import SessionStore
    from agent_ls.config.paths import user_data_dir

    return SessionStore.for_workspace(user_data_dir(), root)


WARM_AFTER = 0.3
"""Seconds after a session opened before the workspace's first snapshot starts (:meth:`TurnCheckpoints.warm`):
a prompt sent right after the open (ACP's ``session/prompt`` after ``session/new``, a one-shot
chat) has its request out first."""


class TurnCheckpoints:
    """A checkpoint before each turn of a conversation service's sessions (``roots``: the
    workspace folders now; ``requests``: the service's turns whose model request has not gone
    out). Opened when first needed; :meth:`warm` takes the workspace's first snapshot in the
    background.

    The snapshot is not on the prompt's path: it must come before the turn changes anything,
    which is a tool call, not the request to the model. On a 2-core machine a snapshot (a walk
    of the workspace, in a worker thread) taken while the request is being made delays it, so
    the turn's snapshot starts once its request has gone out (:meth:`request_sent`: the LLM
    adapter handed it over), and every path to a change waits for it: the turn's first tool call
    (:meth:`before_call`, this object is also a :class:`~agent_ls.agent.tool_runner.ToolObserver`)
    and its end (:meth:`after_turn`: a turn that ended before any output still gets its
    checkpoint). A session with conversation hooks, which may change files before the model
    answers, takes it in :meth:`before_turn`, before any hook runs."""

    def __init__(self, roots: Callable[[], Sequence[Path]], requests: PendingRequests | None = None) -> None:
        self._roots = roots
        self._requests = requests
        self._engine: Checkpoints | None = None
        self._lock = asyncio.Lock()
        self._turns: dict[str, TurnInfo] = {}
        """The running turn of each session whose checkpoint has not started yet."""
        self._open: dict[str, asyncio.Future[Checkpoint | None]] = {}
        """The checkpoint of each session's running turn (being taken, or taken)."""
        self._began = False
        """A turn's checkpoint has started: the first snapshot is under way (no warm-up needed),
        and a warm-up still walking stops pausing."""

    async def engine(self) -> Checkpoints:
        async with self._lock:
            if self._engine is None:
                self._engine = await asyncio.to_thread(open_checkpoints, self._roots())
            return self._engine

    async def warm(self, after: float = WARM_AFTER) -> None:
        """The workspace's first snapshot, in the background, so the first checkpoint costs what
        a later one does: after ``after`` seconds, once no turn waits for its model request (a
        turn's own checkpoint, started meanwhile, makes it needless); while a turn waits for its
        request, the walk pauses between folders."""
        try:
            if self._requests is not None:
                await self._requests.idle(after)
            if self._began:
                return
            engine = await self.engine()
            if not self._began:
                await asyncio.to_thread(engine.warm, self._pause)
        except Exception as e:  # the first checkpoint will pay for it
            log.info("checkpoints: no early snapshot: %s", e)

    def _pause(self) -> None:
        """Between two folders of the warm-up's walk (a worker thread): while a turn waits for its
        model request, until a turn's checkpoint needs the engine."""
        if self._requests is not None and not self._began:
            self._requests.pause(lambda: self._began)

    # the TurnObserver ----------------------------------------------------------------------------
    async def before_turn(self, turn: TurnInfo) -> None:
        if turn.compact:
            return
        self._turns[turn.session_id] = turn
        if turn.hooks:  # a hook may change files before the model answers: the checkpoint first
            await self._taken(turn.session_id)

    def request_sent(self, turn: TurnInfo) -> None:
        """The turn's request has gone out: the snapshot starts (the first tool call waits for it)."""
        if self._turns.get(turn.session_id) is turn:
            self._start(turn.session_id)

    def _start(self, session_id: str) -> asyncio.Future[Checkpoint | None] | None:
        """The checkpoint of the running turn of ``session_id``, started now if it was not."""
        turn = self._turns.pop(session_id, None)
        if turn is not None:
            self._began = True
            self._open[session_id] = asyncio.ensure_future(self._begin(turn))
        return self._open.get(session_id)

    async def _begin(self, turn: TurnInfo) -> Checkpoint | None:
        try:
            engine = await self.engine()
            checkpoint: Checkpoint = await asyncio.to_thread(engine.begin, turn.session_id, turn.index, turn.text)
            return checkpoint
        except Exception as e:  # the turn runs without a checkpoint
            log.warning("no checkpoint before this prompt of session %s: %s", turn.session_id, e)
            return None

    async def _taken(self, session_id: str | None) -> None:
        taking = self._start(session_id or "")
        if taking is not None and not taking.done():
            await asyncio.shield(taking)  # (a cancelled call leaves the snapshot to finish)

    async def before_call(self, session_id: str | None, call: Any, tool: Any) -> None:
        """No tool of the turn runs before its checkpoint is taken."""
        await self._taken(session_id)

    async def after_call(self, session_id: str | None, call: Any, tool: Any, result: Any) -> None:
        pass

    async def after_turn(self, turn: TurnInfo, result: Any) -> None:
        self._start(turn.session_id)  # (a turn that ended before its request went out)
        taking = self._open.pop(turn.session_id, None)
        if taking is None:
            return
        checkpoint = await asyncio.shield(taking)
        if checkpoint is None or self._engine is None:
            return
        try:
            await asyncio.to_thread(self._engine.finish, checkpoint)
        except Exception as e:
            log.warning("the checkpoint of session %s could not record what the turn changed: %s",
                        turn.session_id, e)

    # the user's actions ----------------------------------------------------------------------------
    async def list(self, session_id: str | None) -> list[Checkpoint]:
        engine = await self.engine()
        found: list[Checkpoint] = await asyncio.to_thread(engine.list, session_id)
        return found

    async def plan_rewind(self, checkpoint_id: str) -> RewindPlan:
        engine = await self.engine()
        plan: RewindPlan = await asyncio.to_thread(engine.plan_rewind, checkpoint_id)
        return plan

    async def rewind(self, plan: RewindPlan, *, code: bool, conversation: bool, store: SessionStore | None,
                     overwrite: bool = False) -> RewindResult:
        engine = await self.engine()
        result: RewindResult = await asyncio.to_thread(
            lambda: engine.rewind(plan, code=code, conversation=conversation, store=store, overwrite=overwrite))
        return result

    async def plan_redo(self, session_id: str) -> RewindPlan:
        engine = await self.engine()
        plan: RewindPlan = await asyncio.to_thread(engine.plan_redo, session_id)
        return plan

    async def redo(self, plan: RewindPlan, *, store: SessionStore | None, overwrite: bool = False) -> RewindResult:
        engine = await self.engine()
        result: RewindResult = await asyncio.to_thread(lambda: engine.redo(plan, store=store, overwrite=overwrite))
        return result

    def close(self) -> None:
        if self._engine is not None:
            self._engine.close()
            self._engine = None
