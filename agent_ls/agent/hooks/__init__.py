"""Hooks: the user's and the project's own commands around tool calls and the conversation.

Settings: :mod:`agent_ls.config.hooks`. Running one command: :mod:`.process` (the OS sandbox's
seam is :func:`.process.sandboxed_argv`). What its exit code and output mean: :mod:`.outcome`.
One method per event: :class:`.hooks.Hooks`. Each run as the user sees it (the ``hook`` event):
:mod:`.shown`. Tool hooks are run by
:mod:`agent_ls.agent.tool_runner`; the conversation's by the runtime.
"""

from agent_ls.agent.hooks.hooks import Hooks, Report, hooks_for
from agent_ls.agent.hooks.outcome import HookOutcome, HookRun
from agent_ls.agent.hooks.shown import hook_ran, reporter

__all__ = ["HookOutcome", "HookRun", "Hooks", "Report", "hook_ran", "hooks_for", "reporter"]
