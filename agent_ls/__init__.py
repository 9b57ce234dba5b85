"""agent-ls: a coding agent and MCP host served as a language server."""

import os as _os
import sys as _sys


def _drop_unsafe_path() -> None:
    """``python -m agent_ls...`` puts the current directory first on ``sys.path``, so a
    workspace's ``json.py`` or ``numbers.py`` would be imported instead of the standard library's
    when the server is started inside the folder. While ``-m`` locates this package,
    ``sys.argv[0]`` is ``"-m"``: drop that entry before anything else is imported (as ``-P`` or
    ``PYTHONSAFEPATH`` would; this package itself is already found, its modules load from its
    own folder)."""
    if _sys.argv[:1] != ["-m"] or _sys.flags.safe_path or not _sys.path:
        return
    first = _sys.path[0]
    try:
        here = _os.getcwd()
    except OSError:
        here = None
    if first == "" or (here is not None and _os.path.realpath(first) == _os.path.realpath(here)):
        del _sys.path[0]


_drop_unsafe_path()

__version__ = "0.1.0"
