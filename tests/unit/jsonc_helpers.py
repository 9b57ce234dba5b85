"""Shared by the JSONC parser tests (tests/unit/test_jsonc*.py): parse to a value, expect an error,
locate a needle."""

from __future__ import annotations

import pytest

from agent_ls.config.jsonc import JsoncError, Pos, parse


def value(text: str):
    return parse(text).value


def error(text: str) -> JsoncError:
    with pytest.raises(JsoncError) as exc:
        parse(text)
    return exc.value


def locate(text: str, needle: str, nth: int = 0) -> Pos:
    """The 0-based (line, column) of the ``nth`` occurrence of ``needle`` in ``text``."""
    i = -1
    for _ in range(nth + 1):
        i = text.index(needle, i + 1)
    line = text.count("\n", 0, i)
    return Pos(line, i - (text.rfind("\n", 0, i) + 1))
