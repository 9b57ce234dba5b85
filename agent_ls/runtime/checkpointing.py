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


class TurnCheckpoints:
    """A checkpoint before each turn of a conversation service's sessions (``roots``: the
    workspace folders now). Opened when first needed; :meth:`warm` takes the workspace's first
    snapshot in the background.

    The snapshot is not on the prompt's path: it must come before the turn changes anything,
    which is a tool call, not the request to the model. So :meth:`before_turn` starts it and
    returns; it runs (in a worker thread) while the model answers, and the turn's first tool call
    waits for it (:meth:`before_call`, this object is also a
    :class:`~agent_ls.agent.tool_runner.ToolObserver`)."""

    def __init__(self, roots: Callable[[], Sequence[Path]]) -> None:
        self._roots = roots
        self._engine: Checkpoints | None = None
        self._lock = asyncio.Lock()
        self._open: dict[str, asyncio.Future[Checkpoint | None]] = {}
        """The checkpoint of each session's running turn (being taken, or taken)."""

    async def engine(self) -> Checkpoints:
        async with self._lock:
            if self._engine is None:
                self._engine = await asyncio.to_thread(open_checkpoints, self._roots())
            return self._engine

    async def warm(self) -> None:
        try:
            engine = await self.engine()
            await asyncio.to_thread(engine.warm)
        except Exception as e:  # the first checkpoint will pay for it
            log.info("checkpoints: no early snapshot: %s", e)

    # the TurnObserver ----------------------------------------------------------------------------
    async def before_turn(self, turn: TurnInfo) -> None:
        if not turn.compact:
            self._open[turn.session_id] = asyncio.ensure_future(self._begin(turn))

    async def _begin(self, turn: TurnInfo) -> Checkpoint | None:
        try:
            engine = await self.engine()
            checkpoint: Checkpoint = await asyncio.to_thread(engine.begin, turn.session_id, turn.index, turn.text)
            return checkpoint
        except Exception as e:  # the turn runs without a checkpoint
            log.warning("no checkpoint before this prompt of session %s: %s", turn.session_id, e)
            return None

    async def _taken(self, session_id: str | None) -> None:
        taking = self._open.get(session_id or "")
        if taking is not None and not taking.done():
            await asyncio.shield(taking)  # (a cancelled call leaves the snapshot to finish)

    async def before_call(self, session_id: str | None, call: Any, tool: Any) -> None:
        """No tool of the turn runs before its checkpoint is taken."""
        await self._taken(session_id)

    async def after_call(self, session_id: str | None, call: Any, tool: Any, result: Any) -> None:
        pass

    async def after_turn(self, turn: TurnInfo, result: Any) -> None:
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
