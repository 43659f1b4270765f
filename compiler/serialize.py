"""JSON for Explorations: lossless, versioned, and tolerant of what it does not know.

The writer walks the dataclasses; the reader rebuilds them from their type hints,
keeps a list of keys it did not recognise, refuses a newer major version and
upgrades older majors one step at a time.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from typing import Any, Union

from . import model
from .errors import SchemaVersionError, TraceFormatError
from .links import derive
from .model import SCHEMA_VERSION, Exploration


def _upgrade_1_to_2(data: dict[str, Any]) -> dict[str, Any]:
    """Schema 2.0 added ids and links computed from the other fields (``Compile.key``,
    ``Kernel.id``, ``Node.kernels``, ...): compute them for a 1.x document, with the
    same ``links.derive`` live capture and trace loading use."""
    unknown: list[str] = []
    exp = _build(Exploration, data, "exploration", unknown)
    if not isinstance(exp, Exploration):
        raise TraceFormatError("the 'exploration' entry does not describe an Exploration")
    upgraded = dataclasses.replace(
        exp,
        compiles=tuple(derive(list(exp.compiles))),
        unknown_keys=(*exp.unknown_keys, *unknown),
    )
    out: dict[str, Any] = to_dict(upgraded)
    return out


# _UPGRADES[n] turns a major-version-n dict into a major-version-(n+1) dict.
_UPGRADES: dict[int, typing.Callable[[dict[str, Any]], dict[str, Any]]] = {1: _upgrade_1_to_2}


def to_dict(value: Any) -> Any:
    """Plain JSON types for a dataclass tree (tuples become lists)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_dict(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [to_dict(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_dict(v) for k, v in value.items()}
    return value


def to_json(exp: Exploration, *, indent: int | None = None) -> str:
    """``{"schema_version": [major, minor], "exploration": {...}}`` as text."""
    doc = {"schema_version": list(SCHEMA_VERSION), "exploration": to_dict(exp)}
    return json.dumps(doc, indent=indent, ensure_ascii=False)


def from_json(text: str) -> Exploration:
    """Rebuild an Exploration; unknown keys are listed in ``unknown_keys``."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        msg = (
            f"not an Exploration JSON document: {exc}. Pass text written by Exploration.to_json()."
        )
        raise TraceFormatError(msg) from exc
    if not isinstance(doc, dict) or "schema_version" not in doc or "exploration" not in doc:
        msg = (
            "not an Exploration JSON document: expected the keys 'schema_version' and "
            "'exploration' written by Exploration.to_json()."
        )
        raise TraceFormatError(msg)
    major, minor = (int(v) for v in doc["schema_version"])
    if major > SCHEMA_VERSION[0]:
        have = ".".join(map(str, SCHEMA_VERSION))
        msg = (
            f"this Exploration was written with schema {major}.{minor}, newer than the "
            f"{have} this version of torch-compile-explorer reads; upgrade the package."
        )
        raise SchemaVersionError(msg)
    data = doc["exploration"]
    while major < SCHEMA_VERSION[0]:
        data = _UPGRADES[major](data)
        major += 1
    unknown: list[str] = []
    exp = _build(Exploration, data, "exploration", unknown)
    if not isinstance(exp, Exploration):
        raise TraceFormatError("the 'exploration' entry does not describe an Exploration")
    if unknown:
        exp = dataclasses.replace(exp, unknown_keys=tuple(exp.unknown_keys) + tuple(unknown))
    return exp


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls, vars(model))
    return _HINTS[cls]


def _build(tp: Any, value: Any, path: str, unknown: list[str]) -> Any:
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        options = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None:
            return None
        return _build(options[0], value, path, unknown)
    if origin is tuple:
        (item, *_rest) = typing.get_args(tp)
        return tuple(_build(item, v, f"{path}[{i}]", unknown) for i, v in enumerate(value))
    if origin is dict:
        _key, item = typing.get_args(tp)
        return {k: _build(item, v, f"{path}.{k}", unknown) for k, v in value.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise TraceFormatError(f"{path}: expected an object, found {type(value).__name__}")
        hints = _hints(tp)
        kwargs = {}
        for key, v in value.items():
            if key not in hints:
                unknown.append(f"{path}.{key}")
                continue
            kwargs[key] = _build(hints[key], v, f"{path}.{key}", unknown)
        try:
            return tp(**kwargs)
        except TypeError as exc:
            raise TraceFormatError(f"{path}: cannot build {tp.__name__}: {exc}") from exc
    if tp is float and isinstance(value, int):
        return float(value)
    return value
