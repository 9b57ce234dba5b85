"""The collector pause around the big imports (agent_ls/core/imports.py): off while any pause
runs, back on (with what was imported frozen) when the last one ends, left off when it was off."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

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
