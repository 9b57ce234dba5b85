"""The language server front end (LSP on stdio): :func:`serve` is what ``agent-ls`` /
``agent-ls serve`` and ``python -m agent_ls.server`` run."""

from typing import NoReturn


def serve(log_level: str = "WARNING") -> NoReturn:
    """Serve LSP on stdio (what editors run), logging to stderr at ``log_level``. Nothing else
    may write to stdout. Ends the process (0 after shutdown + exit, as LSP asks)."""
    # lazy: only what serving needs, so that `initialize` is answered fast (gc, +3 modules)
    from agent_ls.core.process_secrets import take_process_secrets

    take_process_secrets()  # first (idempotent): provider keys in memory only, not in /proc/<pid>/environ
    from agent_ls.core.imports import attrs_methods_cached, collector_paused
    from agent_ls.core.redact import log_to_stderr

    log_to_stderr(log_level)
    # pygls, lsprotocol and the server's modules live as long as the process; the methods attrs
    # generates for the server's classes come from their bytecode cache (as the chat's and ACP's)
    with attrs_methods_cached(), collector_paused():
        # lazy: the language server, +134 modules, ~0.45 s; not for importing a submodule
        from agent_ls.server.app import create_server
        from agent_ls.server.process_exit import serve_stdio

        server = create_server()
    from agent_ls.runtime.model_library import share_model_host

    share_model_host()  # the model requests go to the user's warm model host (issue 46), attached by the warm-up
    serve_stdio(server)
