"""The agent's side of the editor: buffers and edits through the editor (or the disk), the
editor's language intelligence (diagnostics, definitions, references, symbols), and the record
of the agent's file changes for review and revert."""
