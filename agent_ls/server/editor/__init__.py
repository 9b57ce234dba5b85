"""The language server's answers to the agent's editor needs: buffers and edits through
``workspace/applyEdit`` and ``agent/reviewEdit``, and the editor's language intelligence
through ``agent/editorIntelligence``."""
