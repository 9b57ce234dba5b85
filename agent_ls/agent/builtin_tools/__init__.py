"""The built-in tools: read, write and edit files, glob, grep and bash, and the set a session gets.

All of them are confined to the :class:`~agent_ls.agent.workspace.Workspace`; ``bash``
runs in the first root (a shell can of course reach further: it is a WRITE tool and goes
through the approval gate). Failures are error results with a message for the model, never
exceptions (except cancellation). File work runs in worker threads so the event loop stays
responsive; long walks stop early when the awaiting task is cancelled.

Each tool caps what it keeps of its output (``output_cap_chars``); whatever is cut is replaced
by an explicit marker such as ``[... 12345 characters cut ...]`` and counted in
:attr:`ToolResult.truncated_chars`. In a session the cap is what the session's output store
can hold, and the session shows the model a page at a time
(:mod:`agent_ls.agent.tools.output_store`, the ``read_output`` tool).

One module per family: :mod:`.base` (the shared plumbing), :mod:`.reading` (``read_file``),
:mod:`.editing` (``write_file``, ``edit_file``), :mod:`.search` (``glob``, ``grep``),
:mod:`.shell` (``bash``), :mod:`.jobs` (``shell_output``, ``shell_stop``), :mod:`.intelligence` (``diagnostics``, ``definition``, ``references``,
``symbols``: the editor's language servers, when the front end gives them); ``read_output`` is :mod:`agent_ls.agent.tools.output_store`'s,
``update_plan`` :mod:`agent_ls.agent.plan`'s.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from agent_ls.agent.builtin_tools.editing import EditFileTool, WriteFileTool
from agent_ls.agent.builtin_tools.intelligence import intelligence_tools
from agent_ls.agent.builtin_tools.jobs import job_tools
from agent_ls.agent.builtin_tools.reading import ReadFileTool
from agent_ls.agent.builtin_tools.search import GlobTool, GrepTool
from agent_ls.agent.builtin_tools.shell import DEFAULT_BASH_TIMEOUT, BashTool
from agent_ls.agent.editor.editor_files import EditorFiles, FileAccess
from agent_ls.agent.editor.intelligence import EditorIntelligence
from agent_ls.agent.jobs import JobTable
from agent_ls.agent.plan import UpdatePlanTool
from agent_ls.agent.tools.output_store import OutputStore, ReadOutputTool
from agent_ls.agent.workspace import Workspace
from agent_ls.config.sandbox import SandboxSettings
from agent_ls.core.sandbox.proxy import AskHost
from agent_ls.core.tools import Tool


def builtin_tools(
    workspace: Workspace,
    *,
    output_cap_chars: int | None = None,
    bash_timeout: float = DEFAULT_BASH_TIMEOUT,
    bash_env_passthrough: tuple[str, ...] = (),
    editor: EditorFiles | None = None,
    outputs: OutputStore | None = None,
    intelligence: EditorIntelligence | None = None,
    sandbox: SandboxSettings | None = None,
    ask_host: AskHost | None = None,
    jobs: JobTable | None = None,
) -> list[Tool]:
    """Every built-in tool, sorted by name, ``read_output`` included.

    ``editor`` (the language server's open documents and ``workspace/applyEdit``): the file
    tools read open buffers and change files through it (:mod:`agent_ls.agent.editor.editor_files`).
    ``outputs``: the session's store of oversized output (a default one when None); the
    session that runs these tools finds it through ``read_output`` and pages long results into
    it. ``bash_env_passthrough``: secret-looking environment variables ``bash`` still gets
    (:func:`~agent_ls.agent.builtin_tools.shell.shell_environment`). ``intelligence`` (the
    editor's language servers): adds ``diagnostics``, ``definition``, ``references`` and
    ``symbols``, and edits applied in the editor report the problems they introduced. The tools themselves then keep up to what the store can hold (``read_file`` keeps to a
    page: it pages by lines itself); an explicit ``output_cap_chars`` caps every tool instead.
    ``sandbox`` (``agent.sandbox``; None or not enabled: no sandbox): ``bash`` runs in the OS
    sandbox (:mod:`agent_ls.core.sandbox`) and the file tools refuse its unreadable places;
    ``ask_host`` puts a host the network rule asks about to the user (None: such hosts are refused).
    ``jobs``: the conversation's background jobs (:mod:`agent_ls.agent.jobs`): ``bash`` takes
    ``run_in_background`` and ``shell_output`` and ``shell_stop`` join (None: neither).
    """
    box = sandbox.sandbox(workspace.roots, ask_host) if sandbox is not None else None
    if box is not None:
        workspace = attrs.evolve(workspace, deny_read=tuple(Path(p) for p in box.policy.deny_read))
    files = FileAccess(workspace, editor, intelligence)
    outputs = outputs if outputs is not None else OutputStore()
    keep = outputs.max_chars if output_cap_chars is None else output_cap_chars
    page = outputs.page_chars if output_cap_chars is None else output_cap_chars
    tools: list[Tool] = [
        ReadFileTool(workspace, output_cap_chars=page, files=files),
        WriteFileTool(workspace, output_cap_chars=keep, files=files),
        EditFileTool(workspace, output_cap_chars=keep, files=files),
        GlobTool(workspace, output_cap_chars=keep),
        GrepTool(workspace, output_cap_chars=keep, files=files),
        BashTool(workspace, output_cap_chars=keep, timeout=bash_timeout, env_passthrough=bash_env_passthrough,
                 sandbox=box, jobs=jobs),
        ReadOutputTool(outputs),
        UpdatePlanTool(),
    ]
    if jobs is not None:
        tools += job_tools(jobs)
    if intelligence is not None:
        tools += intelligence_tools(intelligence, workspace, output_cap_chars=keep, files=files)
    return sorted(tools, key=lambda t: t.spec.name)
