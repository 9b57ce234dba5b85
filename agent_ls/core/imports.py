"""Importing the big libraries (pygls' lsprotocol, the MCP SDK, litellm, the ACP SDK) without the
cyclic garbage collector walking them over and over, and without work nobody uses.

An import that creates hundreds of thousands of long-lived objects (classes, pydantic models,
their schemas) sets off a collection of the oldest generation several times, each one walking
every object created so far: about a third of litellm's import (1 s of 3 s CPU) and a third of
what agent-ls adds to a bare pygls server's start (issue 30 items 2 and 3). While
:func:`collector_paused` is active the collector is off; when the last pause ends, everything
alive is moved to the permanent generation (:func:`gc.freeze`: module-level objects that live as
long as the process, so later full collections skip them too) and the collector is on again.

Process-wide, as the collector is: the event loop keeps running meanwhile (its garbage of those
seconds is collected afterwards, or frozen with the rest: measured, no difference in memory).
Pauses may overlap (a background import while another runs): the collector comes back with the
last one.

:func:`field_docstrings_skipped`: the ACP SDK's schema (``acp.schema``, 270 pydantic models) asks
pydantic for ``use_attribute_docstrings``, which reads and parses the source of every model class
as it is defined, to fill field descriptions: 40% of the SDK's import (0.15-0.3 s of the
``agent-ls acp`` start, issue 46). The descriptions only serve JSON Schema output, which agent-ls
never asks the SDK for; validation and serialization do not read them.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import logging
import threading
from collections.abc import Iterator
from types import ModuleType
from typing import Any

log = logging.getLogger(__name__)

_lock = threading.Lock()
_pauses = 0
_enable_after = False


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the duration (see the module's docstring)."""
    global _pauses, _enable_after
    with _lock:
        if _pauses == 0:
            _enable_after = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            if _pauses == 0 and _enable_after:
                gc.freeze()
                gc.enable()


def import_quietly(name: str) -> ModuleType:
    """:func:`importlib.import_module` with the collector paused."""
    with collector_paused():
        return importlib.import_module(name)


@contextlib.contextmanager
def field_docstrings_skipped() -> Iterator[None]:
    """pydantic models defined meanwhile take no field descriptions from attribute docstrings (see
    the module's docstring); pydantic as it was afterwards. Main thread, at start-up only (it
    swaps a function of pydantic's for the duration). Without pydantic, or when its internals
    differ (another version), nothing is changed."""
    try:
        from pydantic._internal import _fields
    except ImportError:
        yield
        return
    original = getattr(_fields, "extract_docstrings_from_cls", None)
    if not callable(original):
        log.debug("pydantic has no extract_docstrings_from_cls: field docstrings are read as usual")
        yield
        return

    def none(*args: Any, **kwargs: Any) -> dict[str, str]:
        return {}

    _fields.extract_docstrings_from_cls = none
    try:
        yield
    finally:
        _fields.extract_docstrings_from_cls = original
