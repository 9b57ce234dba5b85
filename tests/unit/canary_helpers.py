"""What every canary uses: the failure that names the hook, the file and the doc, and readers for a
target's parameters and the names its code touches."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = "docs/architecture-hooks.md"


def fail(hook: str, where: str, what: str) -> None:
    pytest.fail(
        f"canary for the hook '{hook}' (used in {where}): {what}. A dependency changed under a "
        f"private hook: fix the hook, then update this canary and {DOC}.",
        pytrace=False,
    )


def params(fn: Callable[..., Any]) -> list[str]:
    return list(inspect.signature(fn).parameters)


def expect_signature(hook: str, where: str, fn: Any, expected: list[str], *, kind: str = "") -> None:
    """``fn`` exists with exactly these parameter names (and, with ``kind``, is that kind of
    callable: ``coroutine``, ``asyncgen`` or ``function``)."""
    if fn is None:
        fail(hook, where, "the target no longer exists")
    try:
        got = params(fn)
    except (TypeError, ValueError) as e:
        fail(hook, where, f"the target has no readable signature ({e})")
        return
    if got != expected:
        fail(hook, where, f"{getattr(fn, '__qualname__', fn)} now takes {got}, the hook expects {expected}")
    checks = {"coroutine": inspect.iscoroutinefunction, "asyncgen": inspect.isasyncgenfunction,
              "function": lambda f: callable(f) and not inspect.iscoroutinefunction(f)}
    if kind and not checks[kind](fn):
        fail(hook, where, f"{getattr(fn, '__qualname__', fn)} is no longer a {kind} function")


def code_names(fn: Any) -> set[str]:
    """Names a function's own code touches (attributes it reads or stores, globals it calls)."""
    code = getattr(fn, "__code__", None)
    return set(code.co_names) if code is not None else set()
