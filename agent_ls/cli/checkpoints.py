"""``agent-ls checkpoints``: a workspace's checkpoints (the state before each prompt, issue 40),
listed and restored without an editor.

    agent-ls checkpoints list [--session ID] [--json]
    agent-ls checkpoints restore CHECKPOINT [--code | --conversation | --both] [--overwrite] [--yes]
    agent-ls checkpoints redo SESSION [--overwrite] [--yes]

``restore`` prints each file and what happens to it, then asks (``--yes``: does not ask; no
terminal and no ``--yes``: only prints). Files the user changed since the checkpoint are left
alone unless ``--overwrite``. A restore can be redone until the session's next prompt.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

from agent_ls.cli.common import EXIT_FAIL, EXIT_OK, EXIT_USAGE, read_line, workspace_folders

if TYPE_CHECKING:
    from pathlib import Path

    from agent_ls.agent.checkpoints import Checkpoint, Checkpoints, RewindPlan

_ACTION_TEXT = {
    "restore": "restore",
    "recreate": "create again (deleted by the agent)",
    "delete": "delete (created by the agent)",
    "conflict": "leave alone: changed by you since (--overwrite restores it)",
    "keep": "leave alone: changed only by you",
    "not-kept": "leave alone: the checkpoint did not keep it",
}


def add_commands(sub: Any) -> None:
    """The ``checkpoints`` command group on the top-level parser's subcommands."""
    group = sub.add_parser("checkpoints", help="list and restore the checkpoints taken before each prompt")
    csub = group.add_subparsers(dest="checkpoints_command", required=True)

    def workspace(p: argparse.ArgumentParser) -> None:
        p.add_argument("--workspace", "-w", action="append", help="workspace folder (repeatable)")

    p = csub.add_parser("list", help="the workspace's checkpoints, oldest first")
    workspace(p)
    p.add_argument("--session", help="only this session's")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_list)

    p = csub.add_parser("restore", help="rewind to before a checkpoint's prompt")
    workspace(p)
    p.add_argument("checkpoint", help="a checkpoint id (or its first characters)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--code", dest="mode", action="store_const", const="code", help="files only")
    mode.add_argument("--conversation", dest="mode", action="store_const", const="conversation",
                      help="the session's messages only")
    mode.add_argument("--both", dest="mode", action="store_const", const="both", help="files and messages (default)")
    p.add_argument("--overwrite", action="store_true", help="also restore files you changed since the checkpoint")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask")
    p.set_defaults(func=cmd_restore, mode="both")

    p = csub.add_parser("redo", help="undo a session's latest restore (until its next prompt)")
    workspace(p)
    p.add_argument("session")
    p.add_argument("--overwrite", action="store_true", help="also put back files you changed since the restore")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask")
    p.set_defaults(func=cmd_redo)


def _open(args: argparse.Namespace) -> Checkpoints:
    # lazy: the engine, not for `serve`
    from agent_ls.runtime.checkpointing import open_checkpoints

    return open_checkpoints(workspace_folders(args))


def _shown(path: str, roots: list[Path]) -> str:
    for root in roots:
        if path.startswith(f"{root}{os.sep}"):
            rel = os.path.relpath(path, root)
            return rel if len(roots) == 1 else f"{root.name}/{rel}"
    return path


def _as_json(cp: Checkpoint) -> dict[str, Any]:
    return {"id": cp.id, "session": cp.session_id, "prompt": cp.prompt_index + 1, "text": cp.prompt,
            "created": cp.created, "finished": cp.finished, "changed": list(cp.changed),
            "notKept": [{"path": n.path, "reason": n.reason} for n in cp.not_kept], "bytes": cp.bytes_added,
            "rewound": cp.rewound}


async def cmd_list(args: argparse.Namespace) -> int:
    with _open(args) as cps:
        items = cps.list(args.session, include_rewound=True)
        notes = cps.notes(args.session)
        if args.json:
            print(json.dumps({"checkpoints": [_as_json(c) for c in items], "notes": notes}, indent=2))
            return EXIT_OK
        if not items:
            print("no checkpoints" + (f" in session {args.session}" if args.session else " in this workspace"))
        for cp in items:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(cp.created))
            words = " ".join(cp.prompt.split())
            words = words if len(words) <= 50 else words[:49] + "…"
            state = " (rewound: redo possible)" if cp.rewound else "" if cp.finished else " (turn not finished)"
            print(f"{cp.id}  session {cp.session_id[:8]}  prompt {cp.prompt_index + 1:<3} {when}  "
                  f"{len(cp.changed):>3} files changed  {words}{state}")
            if cp.not_kept:
                print(f"    not kept: {len(cp.not_kept)} files (e.g. {cp.not_kept[0].path}: {cp.not_kept[0].reason})")
        for sid in sorted({c.session_id for c in items if c.rewound}):
            if cps.can_redo(sid):
                print(f"a restore of session {sid} can be undone: agent-ls checkpoints redo {sid}")
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
    return EXIT_OK


def print_plan(plan: RewindPlan, roots: list[Path], code: bool, file: TextIO | None = None) -> None:
    """What a rewind (or redo) would do to each file."""
    if not code:
        return
    if not plan.actions:
        print("files: nothing to change", file=file)
    for a in plan.actions:
        flag = f" [protected: {a.protected}]" if a.protected else ""
        print(f"  {_shown(a.path, roots)}: {_ACTION_TEXT.get(a.action, a.action)}{flag}", file=file)


async def _confirm(args: argparse.Namespace, question: str) -> bool:
    if args.yes:
        return True
    if not sys.stdin.isatty():
        print("nothing was changed: run again with --yes to do it", file=sys.stderr)
        return False
    answer = await read_line(f"{question} [y/N] ")
    return (answer or "").strip().lower() in ("y", "yes")


async def cmd_restore(args: argparse.Namespace) -> int:
    from agent_ls.agent.checkpoints import CheckpointError, RewindError
    from agent_ls.runtime.checkpointing import open_session_store

    code = args.mode in ("code", "both")
    conversation = args.mode in ("conversation", "both")
    with _open(args) as cps:
        try:
            plan = cps.plan_rewind(args.checkpoint)
        except CheckpointError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        cp = plan.checkpoint
        print(f"checkpoint {cp.id}: before prompt {cp.prompt_index + 1} of session {cp.session_id} "
              f"({' '.join(cp.prompt.split())[:60]!r})")
        print_plan(plan, cps.roots, code)
        if conversation:
            print(f"  conversation: back to before prompt {cp.prompt_index + 1} (the later messages are kept "
                  "for a redo)")
        if not await _confirm(args, "Restore?"):
            return EXIT_FAIL
        store = open_session_store(cps.roots[0]) if conversation else None
        try:
            result = cps.rewind(plan, code=code, conversation=conversation, store=store, overwrite=args.overwrite)
        except (RewindError, CheckpointError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_FAIL
        finally:
            if store is not None:
                store.close()
    print(f"restored: {len(result.changed)} files"
          + (", the conversation" if result.messages_removed else "")
          + (f"; left alone: {len(result.left_alone)}" if result.left_alone else ""))
    print(f"undo it with: agent-ls checkpoints redo {cp.session_id}")
    return EXIT_OK


async def cmd_redo(args: argparse.Namespace) -> int:
    from agent_ls.agent.checkpoints import CheckpointError, RewindError
    from agent_ls.runtime.checkpointing import open_session_store

    with _open(args) as cps:
        try:
            plan = cps.plan_redo(args.session)
        except CheckpointError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        print(f"redo: undo the restore to checkpoint {plan.checkpoint.id}")
        print_plan(plan, cps.roots, True)
        if not await _confirm(args, "Redo?"):
            return EXIT_FAIL
        with open_session_store(cps.roots[0]) as store:
            try:
                result = cps.redo(plan, store=store, overwrite=args.overwrite)
            except (RewindError, CheckpointError) as exc:
                print(f"error: {exc}", file=sys.stderr)
                return EXIT_FAIL
    print(f"put back: {len(result.changed)} files" + (", the conversation" if result.messages_removed else ""))
    return EXIT_OK
