"""The errors of the conversation service a user can act on (:mod:`agent_ls.runtime.conversations`);
each front end maps :class:`ConversationError` to its protocol's error once."""

from __future__ import annotations

NO_MODEL = ("no model is configured: set \"model\" in the agent-ls user settings or the workspace's "
            ".agent-ls/settings.json (a workspace's model applies once you trust the folder), or the "
            "AGENT_LS_MODEL environment variable (any litellm model string, e.g. anthropic/claude-sonnet-4-5, "
            "or ollama/qwen3 with \"apiBase\": \"http://127.0.0.1:11434\")")
"""What every front end says when there is no model to use."""


class ConversationError(Exception):
    """A request the service cannot carry out, said so the user can act on it."""


class NoModel(ConversationError):
    def __init__(self) -> None:
        super().__init__(NO_MODEL)


class UnknownSession(ConversationError):
    def __init__(self, session_id: str, where: str = "") -> None:
        super().__init__(f"no session {session_id!r}{where}")
        self.session_id = session_id


class Busy(ConversationError):
    """The session is answering a prompt: one turn at a time."""

    def __init__(self, session_id: str, what: str = "") -> None:
        super().__init__(f"session {session_id} is already answering a prompt{what}")
        self.session_id = session_id


class BadChoice(ConversationError):
    """A model that is not one of the settings' choices."""
