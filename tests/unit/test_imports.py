"""The collector pause around the big imports (agent_ls/core/imports.py): off while any pause
runs, back on (with what was imported frozen) when the last one ends, left off when it was off."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

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


DOCSTRINGS = """
import json, sys
from pydantic import BaseModel, ConfigDict
from pydantic._internal import _fields
from agent_ls.core.imports import field_docstrings_skipped

before = _fields.extract_docstrings_from_cls
with field_docstrings_skipped():
    from acp.schema import InitializeRequest, InitializeResponse
restored = _fields.extract_docstrings_from_cls is before


class After(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)
    x: int = 0
    '''The x.'''


request = InitializeRequest.model_validate({"protocolVersion": 1, "clientCapabilities": {"terminal": True}})
print(json.dumps({
    "schema_description": InitializeResponse.model_fields["agent_capabilities"].description,
    "restored": restored, "after": After.model_fields["x"].description,
    "roundtrip": request.model_dump(by_alias=True, exclude_none=True),
}))
"""


def test_the_acp_schema_imports_without_field_docstrings_and_works_the_same(tmp_path: Path) -> None:
    """`agent-ls acp` imports the ACP SDK with pydantic's field-docstring reading off (40% of the
    SDK's import, issue 46): the schema's models validate and dump as before, their fields have no
    description, and pydantic reads docstrings again for models defined afterwards."""
    script = tmp_path / "check.py"  # (a file: pydantic reads docstrings from the source)
    script.write_text(DOCSTRINGS)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["schema_description"] is None
    assert got["restored"] and got["after"] == "The x."
    assert got["roundtrip"]["protocolVersion"] == 1 and got["roundtrip"]["clientCapabilities"]["terminal"] is True
