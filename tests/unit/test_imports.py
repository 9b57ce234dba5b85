"""The collector pause around the big imports (agent_ls/core/imports.py): off while any pause
runs, back on (with what was imported frozen) when the last one ends, left off when it was off;
and the ACP SDK's schema imported light (:func:`~agent_ls.core.imports.pydantic_models_light`)."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_ls.core.imports import collector_paused, import_quietly


@pytest.fixture
def collector() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    try:
        yield
    finally:
        gc.unfreeze()
        (gc.enable if was else gc.disable)()


def test_the_collector_is_off_during_a_pause_and_back_with_the_objects_frozen(collector: None) -> None:
    frozen = gc.get_freeze_count()
    with collector_paused():
        assert not gc.isenabled()
        kept = [object() for _ in range(1000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= frozen + len(kept)


def test_overlapping_pauses_end_with_the_last_one(collector: None) -> None:
    inside = threading.Event()
    leave = threading.Event()

    def other() -> None:
        with collector_paused():
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=other)
    with collector_paused():
        thread.start()
        assert inside.wait(10)
    assert not gc.isenabled(), "another import still runs: the collector stays off"
    leave.set()
    thread.join(10)
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off(collector: None) -> None:
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_import_quietly_imports_and_a_failed_import_ends_the_pause(collector: None) -> None:
    assert import_quietly("json.decoder").__name__ == "json.decoder"
    with pytest.raises(ModuleNotFoundError):
        import_quietly("agent_ls.no_such_module")
    assert gc.isenabled()


SCHEMA_USE = """
import json, sys
from pydantic import BaseModel, ConfigDict, ValidationError

light = sys.argv[1] == "light"
if light:
    import pydantic

    from agent_ls.core.imports import pydantic_models_light

    before = pydantic.ConfigDict
    with pydantic_models_light():
        import acp.schema as schema
    restored = pydantic.ConfigDict is before
else:
    import acp.schema as schema
    restored = True
models = [c for c in vars(schema).values()
          if isinstance(c, type) and issubclass(c, BaseModel) and c.__module__ == schema.__name__]
deferred = [c for c in models if not c.__pydantic_complete__]


class After(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)
    x: int = 0
    '''The x.'''


MESSAGES = [
    ("InitializeRequest", {"protocolVersion": 1, "clientCapabilities": {
        "terminal": True, "fs": {"readTextFile": True, "writeTextFile": False}}}),
    ("NewSessionRequest", {"cwd": "/w", "mcpServers": [
        {"name": "s", "command": "srv", "args": ["-x"], "env": [{"name": "K", "value": "v"}]},
        {"type": "http", "name": "h", "url": "http://127.0.0.1:1/mcp", "headers": []}]}),
    ("PromptRequest", {"sessionId": "s1", "prompt": [
        {"type": "text", "text": "hi"},
        {"type": "resource", "resource": {"uri": "file:///w/a.py", "text": "x = 1", "mimeType": "text/x-python"}},
        {"type": "resource_link", "uri": "file:///w/b.py", "name": "b.py"},
        {"type": "image", "data": "AAAA", "mimeType": "image/png"}]}),
    ("SessionNotification", {"sessionId": "s1", "update": {
        "sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Edit a.py", "kind": "edit",
        "status": "pending", "content": [{"type": "diff", "path": "/w/a.py", "oldText": "x = 1", "newText": "x = 2"}],
        "locations": [{"path": "/w/a.py", "line": 1}], "rawInput": {"path": "a.py"}}}),
    ("SessionNotification", {"sessionId": "s1", "update": {"sessionUpdate": "plan", "entries": [
        {"content": "step", "priority": "high", "status": "in_progress"}]}}),
    ("RequestPermissionResponse", {"outcome": {"outcome": "selected", "optionId": "allow_once"}}),
    ("NewSessionResponse", {"sessionId": "s1", "configOptions": [{
        "id": "model", "name": "Model", "category": "model", "type": "select", "currentValue": "a",
        "options": [{"value": "a", "name": "A"}]}]}),
    ("PromptRequest", {"sessionId": "s1", "prompt": [{"type": "text"}]}),
    ("InitializeRequest", {"protocolVersion": "one"}),
]
out = []
for name, message in MESSAGES:
    try:
        model = getattr(schema, name).model_validate(message)
        out.append(model.model_dump(mode="json", by_alias=True, exclude_none=True))
    except ValidationError as e:
        out.append(sorted([err["type"], [str(p) for p in err["loc"]]] for err in e.errors()))
print(json.dumps({
    "messages": out, "models": len(models), "deferred": len(deferred),
    "description": schema.InitializeResponse.model_fields["agent_capabilities"].description,
    "restored": restored, "after": [After.model_fields["x"].description, After.__pydantic_complete__],
}))
"""


def _schema_use(tmp_path: Path, how: str) -> dict[str, Any]:
    script = tmp_path / "use.py"  # (a file: pydantic reads docstrings from the source)
    script.write_text(SCHEMA_USE)
    out = subprocess.run([sys.executable, str(script), how], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    got: dict[str, Any] = json.loads(out.stdout)
    return got


def test_the_acp_schema_imports_light_and_works_the_same(tmp_path: Path) -> None:
    """`agent-ls acp` imports the ACP SDK's schema light (issue 46): its models read no field
    docstrings and build their validators at first use. A canary too: the SDK's models take their
    config from ``pydantic.ConfigDict(...)`` as its module runs; if that changes, nothing is
    deferred and this fails. Validation, errors and dumps are those of a plain import, and
    pydantic is itself again for the models defined afterwards."""
    plain, light = _schema_use(tmp_path, "plain"), _schema_use(tmp_path, "light")
    assert plain["deferred"] == 0 and plain["description"]
    assert light["models"] > 200 and light["deferred"] >= 0.9 * light["models"], light
    assert light["description"] is None
    assert light["messages"] == plain["messages"]
    assert isinstance(light["messages"][-2], list) and light["messages"][-2], "a prompt block without text is refused"
    assert light["messages"][-1]["protocolVersion"] == 1, "the SDK salvages a bad version (its wrap validators run)"
    assert light["restored"] and light["after"] == ["The x.", True]


ATTRS_CLASSES = '''
import attrs


@attrs.frozen
class Point:
    x: int
    y: int = attrs.field(default=0, converter=int)


@attrs.define(order=True)
class Item:
    name: str = attrs.field(validator=attrs.validators.instance_of(str))
    tags: list[str] = attrs.Factory(list)
'''

ATTRS_USE = """
import builtins, json, sys

compiled = []
real_compile = builtins.compile


def counting(source, filename, *args, **kwargs):
    if str(filename).startswith("<attrs generated") and " classes." in str(filename):
        compiled.append(filename)
    return real_compile(source, filename, *args, **kwargs)


builtins.compile = counting
sys.path.insert(0, sys.argv[2])
if sys.argv[1] == "cached":
    from agent_ls.core.imports import attrs_methods_cached

    with attrs_methods_cached():
        import classes
    from attr import _make
    restored = _make._compile_and_eval.__name__ == "_compile_and_eval"
else:
    import classes
    restored = True
P, I = classes.Point, classes.Item
try:
    I(3)
    refused = False
except TypeError:
    refused = True
print(json.dumps({
    "compiled": len(compiled), "restored": restored, "refused": refused,
    "repr": [repr(P(1, "2")), repr(I("a"))], "eq": [P(1, 2) == P(1, 2), P(1, 2) == P(2, 1), I("a") == I("a")],
    "hash": [hash(P(1, 2)) == hash(P(1, 2)), len({P(1, 2), P(1, 2), P(2, 1)})],
    "order": [I("a") < I("b"), sorted([I("b"), I("a")])[0].name],
}))
"""


def _attrs_use(tmp_path: Path, how: str, **env: str) -> dict[str, Any]:
    (tmp_path / "classes.py").write_text(ATTRS_CLASSES)
    script = tmp_path / "use_attrs.py"
    script.write_text(ATTRS_USE)
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    environ.update(PYTHONPYCACHEPREFIX=str(tmp_path / "pycache"), **env)
    out = subprocess.run([sys.executable, str(script), how, str(tmp_path)], capture_output=True, text=True,
                         timeout=120, env=environ)
    assert out.returncode == 0, out.stderr
    got: dict[str, Any] = json.loads(out.stdout)
    return got


def test_attrs_methods_come_from_their_bytecode_cache_and_work_the_same(tmp_path: Path) -> None:
    """`agent-ls acp` imports its modules with the methods attrs generates taken from a bytecode
    cache (issue 46): the first process compiles them and writes the cache beside Python's own
    compiled modules, the next compiles none (a canary: if attrs stops compiling through
    ``_compile_and_eval``, or its scripts change from process to process, it compiles again and
    this fails), and the classes behave as without the cache."""
    plain = _attrs_use(tmp_path, "plain")
    first = _attrs_use(tmp_path, "cached")
    second = _attrs_use(tmp_path, "cached")
    assert plain["compiled"] > 0 and first["compiled"] == plain["compiled"]
    assert second["compiled"] == 0, "the second process compiled attrs' methods again"
    for run in (plain, first, second):
        run.pop("compiled")
    assert first == plain and second == plain
    assert plain["refused"] and plain["eq"] == [True, False, True] and plain["hash"] == [True, 2]
    assert second["restored"]


def test_attrs_methods_cache_is_not_written_without_bytecode(tmp_path: Path) -> None:
    """``PYTHONDONTWRITEBYTECODE`` holds for this cache as for Python's own."""
    _attrs_use(tmp_path, "cached", PYTHONDONTWRITEBYTECODE="1")
    assert not list((tmp_path / "pycache").rglob("attrs-methods.*"))
    assert _attrs_use(tmp_path, "cached")["compiled"] > 0


COMMAND_USE = """
import builtins, os, sys

real_compile = builtins.compile


def counting(source, filename, *args, **kwargs):
    if str(filename).startswith("<attrs generated") and "agent_ls" in str(filename):
        with open(os.environ["COMPILED_FILE"], "a") as f:
            f.write(str(filename) + "\\n")
    return real_compile(source, filename, *args, **kwargs)


builtins.compile = counting
from agent_ls.cli import main

sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("command", [["chat", "--list-sessions"], ["serve"]], ids=["chat", "language server"])
def test_the_chat_and_the_language_server_take_attrs_methods_from_their_cache(tmp_path: Path,
                                                                             command: list[str]) -> None:
    """``agent-ls chat`` (its whole run) and the language server (its imports) take the methods attrs
    generates for agent-ls' classes from the bytecode cache, as ``agent-ls acp`` does: the first
    process compiles them and writes the cache, the next compiles none (fails if the command stops
    using it: it compiles them again)."""
    script = tmp_path / "use_command.py"
    script.write_text(COMMAND_USE)
    (tmp_path / "ws").mkdir()
    environ = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONDONTWRITEBYTECODE", "AGENT_LS_MODEL", "AGENT_LS_USER_SETTINGS")}
    environ.update(PYTHONPYCACHEPREFIX=str(tmp_path / "pycache"), AGENT_LS_CONFIG_DIR=str(tmp_path / "config"),
                   AGENT_LS_DATA_DIR=str(tmp_path / "data"))
    argv = [*command, "-w", str(tmp_path / "ws")] if command[0] == "chat" else command
    compiled = []
    for run in ("first", "second"):
        environ["COMPILED_FILE"] = str(tmp_path / run)
        out = subprocess.run([sys.executable, str(script), *argv], capture_output=True, text=True, timeout=120,
                             env=environ, stdin=subprocess.DEVNULL, cwd=tmp_path)
        assert "Traceback" not in out.stderr, out.stderr
        compiled.append(len((tmp_path / run).read_text().splitlines()) if (tmp_path / run).exists() else 0)
    assert compiled[0] > 0 and compiled[1] == 0, compiled
