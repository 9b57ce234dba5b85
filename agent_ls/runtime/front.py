"""What a front end gives the sessions it runs (:class:`FrontEnd`): how to ask the user, the
editor's files and language intelligence, and a last say over the built-in tools.

Kept apart from :mod:`agent_ls.runtime.sessions` (which imports the whole session layer) so a
front end can describe itself at start-up without loading it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from agent_ls.agent.editor.editor_files import EditorFiles
    from agent_ls.agent.editor.intelligence import EditorIntelligence
    from agent_ls.agent.workspace import Workspace
    from agent_ls.core.tools import Tool
    from agent_ls.runtime.questions import Questions

ToolWrapper = Callable[["list[Tool]", "Workspace"], "list[Tool]"]


@attrs.frozen
class FrontEnd:
    """What the front end running a session gives it."""

    questions: Questions | None = None
    """The front end's questions (the language server's ``LspQuestions``, ACP's ``SessionHost``,
    the terminal's ``TerminalQuestions``): the gate asks ``questions.approve`` about a call the
    rules leave to the user (None: nobody to ask, such calls are refused)."""
    editor: EditorFiles | None = None
    """The editor's buffers and edits, for the file tools (None: files on the disk only)."""
    intelligence: EditorIntelligence | None = None
    """The editor's language intelligence: the ``diagnostics``, ``definition``, ``references`` and
    ``symbols`` tools, and problems after each edit (None: no such tools)."""
    wrap_tools: ToolWrapper | None = None
    """Given the built-in tools and their workspace, the tools the session gets (ACP wraps the file
    tools so that the file a call names is fetched from the client first)."""
