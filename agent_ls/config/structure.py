"""A strict cattrs converter for settings sections, and its errors as positioned problems.

JSON has no types beyond object, array, string, number, true/false and null, so every hook
here is strict: ``"10"`` is not a number, ``1`` is not a string, ``"bash"`` is not a list. The
constrained value types (:data:`PositiveInt`, :data:`Seconds`...) are ``Annotated`` types with
their own hooks. Attrs classes are structured from objects whose keys are their attribute names in
camelCase (``max_steps`` <- ``maxSteps``), with unknown keys refused. cattrs' detailed
validation collects every error of a section; :func:`structure` returns them with their JSON
paths and :func:`describe` words them (an unknown key comes with a did-you-mean suggestion).
"""

from __future__ import annotations

import difflib
import functools
import operator
from collections.abc import Callable, Iterator, Mapping
from typing import Annotated, Any, get_args, get_origin

import attrs
import cattrs
from cattrs.errors import (
    AttributeValidationNote,
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
    IterableValidationNote,
)
from cattrs.gen import make_dict_structure_fn, override

from agent_ls.config import jsonc
from agent_ls.config.diagnostics import type_name

MIN_OUTPUT_PAGE_CHARS = 1_000
"""The smallest ``agent.outputPageChars`` / ``agent.outputStoreChars`` (the agent's
``output_store.MIN_PAGE_CHARS``; a unit test keeps the two equal)."""

MIN_CONTEXT_WINDOW = 2_000
"""The smallest ``agent.contextWindow`` (the agent's ``context.MIN_WINDOW``)."""

DEFAULT_OUTPUT_PAGE_CHARS = 30_000
"""``agent.outputPageChars`` when no file sets it (the agent's ``output_store.DEFAULT_PAGE_CHARS``;
the same unit test keeps the two equal)."""

TOOL_ACTION_APPLY_MODES = ("replaceSelection",)
"""What a tool action's ``apply`` may say (the language server's ``code_actions.APPLY_MODES``)."""

MAX_RETRIES = 10
"""The largest ``agent.maxRetries`` (it takes effect in an untrusted folder: a folder must not be
able to make every failing request repeat without end)."""

# Constrained values: plain types for the type checker, checked by their own hooks.
PositiveInt = Annotated[int, "positive integer"]
PageChars = Annotated[int, "page characters"]
Retries = Annotated[int, "retries"]
"""0 to :data:`MAX_RETRIES`."""
Seconds = Annotated[float, "seconds"]
ContextTokens = Annotated[int, "context tokens"]
"""``agent.contextWindow``: tokens the model accepts (at least :data:`MIN_CONTEXT_WINDOW`)."""
Fraction = Annotated[float, "fraction"]
"""``agent.compactAt``: a share of the context window, between 0.1 and 1."""
DeferTools = Annotated[bool | int, "defer tools"]
"""``true``, ``false`` or a number of tools."""
NonEmptyStr = Annotated[str, "non-empty string"]
"""A string with something besides white space (stored stripped)."""
ApplyMode = Annotated[str, "apply mode"]
JsonObject = Annotated[dict[str, Any], "JSON object"]
"""Any JSON object, kept as it is."""


class Invalid(ValueError):
    """A value of the wrong type (``got`` False) or out of range (``got`` True)."""

    def __init__(self, expected: str, value: Any, *, got: bool = False) -> None:
        self.expected = expected
        self.value = value
        self.got = got
        super().__init__(self.detail())

    def detail(self) -> str:
        if self.got:
            return f"must be {self.expected}, got {self.value!r}"
        return f"must be {self.expected}, not {_a(type_name(self.value))}"


def _a(noun: str) -> str:
    return noun if noun in ("null", "true", "false") else ("an " if noun[0] in "aeiou" else "a ") + noun


def _int(expected: str, ok: Callable[[int], bool]) -> Callable[[Any, Any], int]:
    def hook(value: Any, _t: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise Invalid(expected, value)
        if not ok(value):
            raise Invalid(expected, value, got=True)
        return value
    return hook


def _str(value: Any, _t: Any) -> str:
    if not isinstance(value, str):
        raise Invalid("a string", value)
    return value


def _non_empty(value: Any, _t: Any) -> str:
    if not isinstance(value, str):
        raise Invalid("a non-empty string", value)
    if not value.strip():
        raise Invalid("a non-empty string", value, got=True)
    return value.strip()


def _bool(value: Any, _t: Any) -> bool:
    if not isinstance(value, bool):
        raise Invalid("true or false", value)
    return value


def _number(value: Any, _t: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Invalid("a number", value)
    return float(value)


def _seconds(value: Any, _t: Any) -> float:
    expected = "a number of seconds > 0"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Invalid(expected, value)
    if not value > 0:
        raise Invalid(expected, value, got=True)
    return float(value)


def _fraction(value: Any, _t: Any) -> float:
    expected = "a number between 0.1 and 1"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Invalid(expected, value)
    if not 0.1 <= value <= 1:
        raise Invalid(expected, value, got=True)
    return float(value)


def _defer(value: Any, _t: Any) -> bool | int:
    expected = "true, false or a number of tools"
    if isinstance(value, bool):
        return value
    if not isinstance(value, int):
        raise Invalid(expected, value)
    if value < 0:
        raise Invalid(expected, value, got=True)
    return value


def _apply_mode(value: Any, _t: Any) -> str:
    expected = " or ".join(repr(m).replace("'", '"') for m in TOOL_ACTION_APPLY_MODES)
    if not isinstance(value, str):
        raise Invalid(expected, value)
    if value not in TOOL_ACTION_APPLY_MODES:
        raise Invalid(expected, value, got=True)
    return value


def _json_object(value: Any, _t: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Invalid("an object", value)
    return value


_PLURAL: dict[Any, str] = {str: "strings", NonEmptyStr: "strings"}


def _plural(t: Any) -> str:
    return _PLURAL.get(t, "objects" if attrs.has(t) else "values")


class _Converter(cattrs.Converter):
    def __init__(self) -> None:
        super().__init__(forbid_extra_keys=True, detailed_validation=True)
        self.register_structure_hook(str, _str)
        self.register_structure_hook(bool, _bool)
        self.register_structure_hook(int, _int("an integer", lambda v: True))
        self.register_structure_hook(float, _number)
        for t, hook in ((NonEmptyStr, _non_empty), (Seconds, _seconds), (DeferTools, _defer),
                        (ApplyMode, _apply_mode), (JsonObject, _json_object), (Fraction, _fraction),
                        (ContextTokens, _int(f"an integer >= {MIN_CONTEXT_WINDOW}", lambda v: v >= MIN_CONTEXT_WINDOW)),
                        (PositiveInt, _int("a positive integer", lambda v: v > 0)),
                        (Retries, _int(f"an integer from 0 to {MAX_RETRIES}", lambda v: 0 <= v <= MAX_RETRIES)),
                        (PageChars, _int(f"an integer >= {MIN_OUTPUT_PAGE_CHARS}",
                                         lambda v: v >= MIN_OUTPUT_PAGE_CHARS))):
            self.register_structure_hook_func(functools.partial(operator.eq, t), hook)
        self.register_structure_hook_factory(attrs.has, self._object_hook)
        self.register_structure_hook_factory(lambda t: get_origin(t) is tuple, self._list_hook)
        self.register_structure_hook_factory(lambda t: get_origin(t) in (dict, Mapping), self._mapping_hook)

    def _object_hook(self, cl: Any) -> Callable[[Any, Any], Any]:
        inner = object_structure_fn(cl)

        def hook(value: Any, t: Any) -> Any:
            if not isinstance(value, dict):
                raise Invalid("an object", value)
            return inner(value, t)
        return hook

    def _list_hook(self, t: Any) -> Callable[[Any, Any], tuple[Any, ...]]:
        args = get_args(t)
        if len(args) != 2 or args[1] is not Ellipsis:
            raise TypeError(f"settings lists are tuple[X, ...], not {t}")
        elem = args[0]

        def hook(value: Any, _t: Any) -> tuple[Any, ...]:
            if not isinstance(value, list):
                raise Invalid(f"a list of {_plural(elem)}", value)
            return tuple(self._each(((i, v) for i, v in enumerate(value)), elem, t).values())
        return hook

    def _mapping_hook(self, t: Any) -> Callable[[Any, Any], dict[str, Any]]:
        elem = get_args(t)[1]

        def hook(value: Any, _t: Any) -> dict[str, Any]:
            if not isinstance(value, dict):
                raise Invalid("an object", value)
            return self._each(iter(value.items()), elem, t)
        return hook

    def _each(self, items: Iterator[tuple[Any, Any]], elem: Any, t: Any) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        errors: list[Exception] = []
        for index, value in items:
            try:
                out[index] = self.structure(value, elem)
            except Exception as e:
                e.add_note(IterableValidationNote(f"Structuring {t} @ index {index!r}", index, elem))
                errors.append(e)
        if errors:
            raise IterableValidationError(f"While structuring {t}", errors, t)
        return out


CONVERTER = _Converter()


def get_close_matches(word: str, possibilities: list[str]) -> list[str]:
    """:func:`difflib.get_close_matches`: the closest of ``possibilities``, for "did you mean"."""
    return difflib.get_close_matches(word, possibilities, n=1)


def did_you_mean(close: list[str]) -> str:
    """``; did you mean 'x'?`` for the first of ``difflib.get_close_matches``, or nothing."""
    return f"; did you mean {close[0]!r}?" if close else ""


def json_key(name: str) -> str:
    """The settings key of an attribute: ``max_output_chars`` -> ``maxOutputChars``."""
    first, *rest = name.split("_")
    return first + "".join(part.capitalize() for part in rest)


@functools.cache
def object_structure_fn(cl: Any) -> Callable[[Any, Any], Any]:
    """Structures an attrs class from an object with camelCase keys, refusing unknown keys."""
    renames: dict[str, Any] = {f.name: override(rename=json_key(f.name)) for f in attrs.fields(cl)
                               if json_key(f.name) != f.name}
    return make_dict_structure_fn(cl, CONVERTER, **renames)


Problem = tuple[jsonc.JsonPath, "Invalid | str", bool]
"""(path relative to the structured value, what is wrong, whether the path names a key)."""


def structure(value: Any, t: Any) -> tuple[Any, list[Problem]]:
    """``value`` as a ``t`` and no problems, or None and every problem (see :func:`describe`)."""
    try:
        return CONVERTER.structure(value, t), []
    except Exception as e:
        return None, list(_walk(e, ()))


def _walk(e: BaseException, path: jsonc.JsonPath) -> Iterator[Problem]:
    if isinstance(e, (ClassValidationError, IterableValidationError)):
        with_notes, without = e.group_exceptions()
        for sub, note in with_notes:
            if isinstance(note, AttributeValidationNote):
                yield from _walk(sub, (*path, json_key(note.name)))
            elif isinstance(note, IterableValidationNote):
                yield from _walk(sub, (*path, note.index))
            else:  # pragma: no cover - cattrs adds one of the two
                yield from _walk(sub, path)
        for sub in without:
            yield from _walk(sub, path)
    elif isinstance(e, ForbiddenExtraKeysError):
        known = [json_key(f.name) for f in attrs.fields(e.cl)] if attrs.has(e.cl) else []
        for key in sorted(e.extra_fields):
            hint = get_close_matches(key, known)
            yield (*path, key), f"unknown key {key!r}{did_you_mean(hint)}", True
    elif isinstance(e, Invalid):
        yield path, e, False
    else:
        yield path, f"is not valid: {type(e).__name__}: {e}", False


def describe(prefix: jsonc.JsonPath, problem: Problem) -> tuple[jsonc.JsonPath, str, str]:
    """The full JSON path, the message said at that place (``must be a positive integer, got
    0``) and the same in a sentence that names the setting (``agent.maxSteps must be...``,
    ``"agent" must be an object, not a string``, ``permissions.deny must be a list of strings:
    item 1 is a number``, ``agent.sampling: unknown key 'x'...``)."""
    rel, what, is_key = problem
    full = (*prefix, *rel)
    if is_key:
        return full, str(what), f"{where(full[:-1])}: {what}"
    detail = what.detail() if isinstance(what, Invalid) else what
    if isinstance(what, Invalid) and not what.got and full and isinstance(full[-1], int):
        noun = what.expected.removeprefix("a ").removeprefix("an ")
        return full, detail, (f"{where(full[:-1])} must be a list of {noun}s: item {full[-1]} is "
                              f"{_a(type_name(what.value))}")
    return full, detail, f"{where(full)} {detail}"


def where(path: jsonc.JsonPath) -> str:
    """How a message names the setting at ``path``: ``"agent"`` for a top-level one, else its
    dotted path (``agent.sampling.servers.docs``)."""
    if len(path) == 1 and isinstance(path[0], str):
        return f'"{path[0]}"'
    return jsonc.format_path(path)
