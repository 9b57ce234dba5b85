"""How the custom protocol's payloads go on the wire: camelCase attrs classes through cattrs.

Payload classes are attrs classes registered with :func:`_register`; on the wire every field is
camelCase. Params are validated by :func:`parse` (a bad shape is a JSON-RPC ``InvalidParams``
error response, never a hang). Also: the raw JSON-RPC envelopes of the custom messages (pygls
must not convert their params).
"""

from __future__ import annotations

import re
import typing
from typing import Any, TypeVar

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from cattrs.v import format_exception


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def snake_to_camel_dict(value: Any) -> Any:
    """Recursively camelCase the keys of plain dicts (for results built from attrs.asdict)."""
    if isinstance(value, dict):
        return {camel(k) if isinstance(k, str) and re.fullmatch(r"[a-z0-9_]+", k) else k: snake_to_camel_dict(v)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [snake_to_camel_dict(v) for v in value]
    return value


converter = cattrs.Converter(forbid_extra_keys=False)


_PAYLOADS: set[type] = set()


def _register(cls: type) -> type:
    """A payload class: camelCase on the wire. Its (un)structure functions are generated on
    first use, not at import (that keeps ``initialize`` fast)."""
    _PAYLOADS.add(cls)
    return cls


def _renames(cls: Any) -> dict[str, Any]:
    return {a.name: override(rename=camel(a.name)) for a in attrs.fields(cls)}


converter.register_structure_hook_factory(
    lambda t: t in _PAYLOADS, lambda t: make_dict_structure_fn(t, converter, **_renames(t)))
converter.register_unstructure_hook_factory(
    lambda t: t in _PAYLOADS, lambda t: make_dict_unstructure_fn(t, converter, **_renames(t)))


T = TypeVar("T")


class InvalidParams(ValueError):
    """Params that do not fit their payload class (answered with ``INVALID_PARAMS``)."""


class RequestFailed(RuntimeError):
    """A well-formed request that cannot be done (answered with ``REQUEST_FAILED``)."""


def _strict_str(value: Any, _type: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, not {type(value).__name__}")
    return value


def _strict_bool(value: Any, _type: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"expected true or false, not {type(value).__name__}")
    return value


def _strict_dict(value: Any, _type: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError(f"expected an object, not {type(value).__name__}")
    return value


def _strict_str_dict(value: Any, _type: Any) -> dict[str, str]:
    d = _strict_dict(value, _type)
    bad = [k for k, v in d.items() if not isinstance(v, str)]
    if bad:
        raise TypeError(f"values must be strings ({', '.join(map(repr, bad))} are not)")
    return d


def _is_list(t: Any) -> bool:
    return typing.get_origin(t) is list


def _strict_list(value: Any, type_: Any) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError(f"expected an array, not {type(value).__name__}")
    (item,) = typing.get_args(type_) or (Any,)
    if item is Any:
        return list(value)
    errors: list[Exception] = []
    out = []
    for i, v in enumerate(value):
        try:
            out.append(converter.structure(v, item))
        except Exception as e:
            e.__notes__ = [*getattr(e, "__notes__", []), cattrs.errors.IterableValidationNote(
                f"Structuring {type_} @ index {i}", i, item)]
            errors.append(e)
    if errors:
        raise cattrs.errors.IterableValidationError(f"While structuring {type_!r}", errors, type_)
    return out


# cattrs would happily turn 5 into "5" or a dict into a list of its keys: be strict instead.
converter.register_structure_hook(str, _strict_str)
converter.register_structure_hook(bool, _strict_bool)
converter.register_structure_hook_func(_is_list, _strict_list)
converter.register_structure_hook_func(lambda t: t == dict[str, Any], _strict_dict)
converter.register_structure_hook_func(lambda t: t == dict[str, str], _strict_str_dict)


def parse(cls: type[T], params: Any) -> T:
    """Structure raw params into ``cls``; a clear :class:`InvalidParams` when they do not fit."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise InvalidParams(f"params must be an object, not {type(params).__name__}")
    try:
        return converter.structure(params, cls)
    except Exception as e:  # cattrs ClassValidationError and friends
        msgs = [_wire_message(m) for m in cattrs.transform_error(e, format_exception=_format_exception)] \
            if isinstance(e, cattrs.BaseValidationError) else [str(e)]
        raise InvalidParams("invalid params: " + "; ".join(msgs)) from None


def _format_exception(exc: BaseException, type_: Any) -> str:
    if isinstance(exc, (TypeError, ValueError)) and type(exc) in (TypeError, ValueError) and str(exc) and \
            not str(exc).startswith(("invalid literal", "int() argument")):
        return str(exc)  # our own checks say exactly what is wrong

    return format_exception(exc, type_)


def _wire_message(message: str) -> str:
    """cattrs' ``<problem> @ $.session_id[0]`` -> ``sessionId[0]: <problem>`` (wire names)."""
    problem, sep, path = message.rpartition(" @ ")
    if not sep:
        return message
    path = re.sub(r"[A-Za-z_][A-Za-z0-9_]*", lambda m: camel(m.group(0)), path.removeprefix("$").lstrip("."))
    problem = problem.replace("invalid value for type, expected ", "expected ")
    return f"{path or 'params'}: {problem}"


def dump(value: Any) -> Any:
    return converter.unstructure(value)


_same_names = cattrs.Converter(detailed_validation=False)
"""For :func:`payload_from`: attrs classes by their own (snake_case) field names."""


def payload_from(value: Any, cls: type[T]) -> T:
    """The payload ``cls`` built by cattrs from ``value``, a lower layer's attrs instance (or a
    dict of its fields) that names its fields as the payload does
    (:class:`agent_ls.mcp.status.ServerStatus` -> ``ServerStatusPayload``): nothing is copied
    by hand, so a field both have cannot be forgotten; nested attrs values become the nested
    payloads, tuples lists. A field ``cls`` does not have is left out
    (``tests/unit/test_payload_fields.py`` says which may be)."""
    raw = value if isinstance(value, dict) else _same_names.unstructure(value)
    return _same_names.structure(raw, cls)


@_register
@attrs.define
class NoParams:
    """Methods without params accept null or an object (extra fields are ignored)."""



# Raw JSON-RPC envelopes: custom messages whose params pygls must not convert ---------------

@attrs.define
class RawRequest:
    id: int | str
    method: str
    jsonrpc: str
    params: Any = None


@attrs.define
class RawNotification:
    method: str
    jsonrpc: str
    params: Any = None


@attrs.define
class RawResponse:
    id: int | str
    jsonrpc: str
    result: Any = None
