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

:func:`pydantic_models_light`: the ACP SDK's schema (``acp.schema``, 270 pydantic models, of
which a session uses a few dozen) is the largest part of the ``agent-ls acp`` start (issue 46).
Two settings of pydantic's own ``ConfigDict`` make it cheaper, given to the models defined
meanwhile: ``use_attribute_docstrings`` off (the SDK asks for it, and pydantic then reads and
parses the source of every model class to fill field descriptions: 40% of the import; they
only serve JSON Schema output, which agent-ls never asks the SDK for) and ``defer_build`` on
(a model's validator and serializer are built at its first use, not at import: most of the
classes are never used). Validation and serialization are the same; a model's first use pays
for its build.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import importlib
import logging
import marshal
import os
import re
import sys
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


LIGHT_CONFIG: dict[str, Any] = {"use_attribute_docstrings": False, "defer_build": True}
"""What :func:`pydantic_models_light` sets in every ``ConfigDict(...)`` made meanwhile."""


@contextlib.contextmanager
def pydantic_models_light() -> Iterator[None]:
    """pydantic models defined meanwhile whose config is a ``pydantic.ConfigDict(...)`` call take
    :data:`LIGHT_CONFIG` over what they ask (see the module's docstring); pydantic as it was
    afterwards. For a module that reads ``ConfigDict`` from ``pydantic`` as it is imported (the
    ACP SDK's schema does: ``from pydantic import ConfigDict``). Main thread, at start-up only:
    ``pydantic.ConfigDict`` is swapped for the duration. Without pydantic nothing is changed.
    tests/unit/test_imports.py checks that the SDK's models come out light, and the same."""
    try:
        import pydantic
    except ImportError:
        yield
        return
    original = pydantic.ConfigDict  # (also binds pydantic's lazily imported names of its module)

    def light(**config: Any) -> Any:
        return original(**{**config, **LIGHT_CONFIG})

    pydantic.ConfigDict = light  # type: ignore[assignment,misc]
    # ``RootModel[X]`` made meanwhile (a class of its own, configured as RootModel is)
    root = pydantic.RootModel
    root_config = root.__dict__.get("model_config")
    root.model_config = light(**root.model_config)
    try:
        yield
    finally:
        pydantic.ConfigDict = original  # type: ignore[misc]
        if root_config is None:
            del root.model_config
        else:
            root.model_config = root_config


_TYPE_HASH = re.compile(r"(\breturn hash\(\(\n\s*)-?\d+,")
"""The number attrs puts first in a ``__hash__`` it generates: ``hash()`` of the class's name,
which differs from process to process (string hashing is randomized); any number gives an equal
method (within a process, the instances of a class hash alike), so the cache's key leaves it
out and a cached ``__hash__`` keeps the one it was compiled with."""

METHODS_CACHE_LIMIT = 4096
"""Most entries the attrs methods cache keeps (beyond it, only those of the latest process)."""


def methods_cache_path() -> str | None:
    """Where :func:`attrs_methods_cached` keeps its bytecode: beside agent-ls' own compiled
    modules, as Python would (its ``__pycache__`` folder, or under ``sys.pycache_prefix``)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tag = sys.implementation.cache_tag
    if tag is None:
        return None
    name = f"attrs-methods.{tag}.marshal"
    if sys.pycache_prefix:
        return os.path.join(sys.pycache_prefix, package.lstrip(os.sep), name)
    return os.path.join(package, "__pycache__", name)


def _read_methods(path: str) -> dict[bytes, bytes]:
    try:
        with open(path, "rb") as f:
            magic, entries = marshal.load(f)
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    from importlib.util import MAGIC_NUMBER

    return entries if magic == MAGIC_NUMBER and isinstance(entries, dict) else {}


def _write_methods(path: str, entries: dict[bytes, bytes]) -> None:
    from importlib.util import MAGIC_NUMBER

    part = f"{path}.{os.getpid()}.part"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(part, "wb") as f:
            marshal.dump((MAGIC_NUMBER, entries), f)
        os.replace(part, path)  # another process' cache is replaced whole, never mixed
    except OSError as e:
        log.debug("attrs methods cache not written (%s)", e)
        with contextlib.suppress(OSError):
            os.unlink(part)


@contextlib.contextmanager
def attrs_methods_cached() -> Iterator[None]:
    """attrs classes defined meanwhile take the bytecode of the methods attrs generates for them
    (``__init__``, ``__repr__``, ``__eq__``... compiled from source for every class, a third of
    agent-ls' own import time) from a cache, as Python takes a module's from its ``.pyc``: the
    same source and file name give the same code object. Kept where Python keeps agent-ls'
    compiled modules (:func:`methods_cache_path`), written under the same rule (not with
    ``PYTHONDONTWRITEBYTECODE``). Swaps a private function of attrs (``_compile_and_eval``) for
    the duration; without it (another attrs), nothing is changed. tests/unit/test_imports.py
    checks that classes come out the same and that the cache is used."""
    try:
        from attr import _make
    except ImportError:
        yield
        return
    original = getattr(_make, "_compile_and_eval", None)
    path = methods_cache_path()
    if not callable(original) or path is None:
        log.debug("attrs has no _compile_and_eval: its methods are compiled as usual")
        yield
        return
    cache = _read_methods(path)
    used: dict[bytes, bytes] = {}
    new = False

    def cached(script: str, globs: dict[str, Any] | None, locs: Any = None, filename: str = "") -> None:
        nonlocal new
        stable = _TYPE_HASH.sub(r"\1TYPE_HASH,", script)
        key = hashlib.blake2b(f"{filename}\0{stable}".encode(), digest_size=16).digest()
        code = None
        if (data := cache.get(key)) is not None:
            with contextlib.suppress(ValueError, EOFError, TypeError):
                code = marshal.loads(data)
                used[key] = data
        if code is None:
            code = compile(script, filename, "exec")
            used[key], new = marshal.dumps(code), True
        eval(code, globs, locs)  # what attrs does with the code it compiles

    _make._compile_and_eval = cached
    try:
        yield
    finally:
        _make._compile_and_eval = original
        if new and not sys.dont_write_bytecode:
            merged = {**cache, **used}
            _write_methods(path, merged if len(merged) <= METHODS_CACHE_LIMIT else used)


@contextlib.contextmanager
def front_end_start() -> Iterator[None]:
    """The start-up cuts of a front end that serves one user's run (``agent-ls acp``, ``agent-ls
    chat``; issue 46), for the duration: the methods attrs generates come from their bytecode cache
    (:func:`attrs_methods_cached`: what this process compiled is added to it as the block ends),
    and the sandbox probe's child processes run in a thread while the modules import
    (:func:`~agent_ls.core.sandbox.runner.detect_soon`)."""
    with attrs_methods_cached():
        with collector_paused():
            # lazy: the sandbox's modules (attrs classes: under the cache), for the front ends that run tools
            from agent_ls.core.sandbox.runner import detect_soon

        detect_soon()
        yield
