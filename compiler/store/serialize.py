"""JSON for Explorations: lossless, versioned, and tolerant of what it does not know.

The writer walks the dataclasses; the reader rebuilds them from their type hints,
keeps a list of keys it did not recognise, refuses a newer major version and
upgrades older majors one step at a time. Since schema 3.0 the writer stores repeated
strings once and long texts compressed (``compiler/store/compact.py``): a major version, so
that a 2.x reader refuses such a file instead of reading table indexes as text. The
reader still takes the plain form (``to_json(compact=False)``, and 2.x files through
the upgrade to 3.0) and 1.x through the upgrade to 2.0.

Since schema 4.0 the file holds no value that is computed on first read (graph nodes
and parse errors, guard lists, kernels' user lines, lowered-line maps): ``to_json``
writes fields only, so it parses nothing, and ``from_json`` gives the Exploration a
new cache (``compiler/model/derived.py``) that computes them again from the texts when
first read, as a trace load does. The one exception is a frame's decompiled source
(``Bytecode.decompiled``, ``decompile_error``), which the file keeps: a live capture's
code object is gone once its process ends, so ``to_json`` decompiles what nobody read
yet (through the cache, counted as ``decompile``).
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from typing import Any, Union

from compiler import model
from compiler.errors import SchemaVersionError, TraceFormatError
from compiler.link.derive import derive
from compiler.model import SCHEMA_VERSION, Bytecode, Derived, Exploration, Schedule
from compiler.model.derived import is_derived
from compiler.store.compact import Unpacker, fused_text, pack, schedule_spans

# The first version written in the compact form.
_COMPACT_SINCE = (3, 0)


# Properties computed on first read that the file keeps all the same (see the module doc).
KEPT_PROPERTIES: dict[type, tuple[str, ...]] = {Bytecode: ("decompiled", "decompile_error")}
_DECOMPILED = KEPT_PROPERTIES[Bytecode]


@dataclasses.dataclass
class _Reading:
    """What ``_build`` carries down the tree: the keys it did not know, for a compact
    document the string table, and the cache of the Exploration being read."""

    unknown: list[str]
    strings: Unpacker | None = None
    cache: Derived = dataclasses.field(default_factory=Derived)


def _unchanged_1_to_2(data: dict[str, Any], strings: Unpacker | None) -> dict[str, Any]:
    """Schema 2.0 only added fields derived from the others (``Compile.key``,
    ``Kernel.id``, ``Node.kernels``, ...): ``from_json`` derives them after reading."""
    return data


def _unchanged_2_to_3(data: dict[str, Any], strings: Unpacker | None) -> dict[str, Any]:
    """Schema 3.0 added more derived facts (``GraphBreak.user_frames``,
    ``Compile.resumes``, ...) beside the compact form: ``from_json`` derives them after
    reading, with the same ``link.derive`` live capture and trace loading use."""
    return data


def _computed_out_3_to_4(data: dict[str, Any], strings: Unpacker | None) -> dict[str, Any]:
    """Schema 4.0 keeps out of the file what is computed on first read: graph nodes and
    parse errors, guard lists, kernels' user lines and lowered-line maps are dropped
    (the reader computes them again from the texts). The module stacks the top-level
    nodes of a graph carried become its ``module_stacks``, so a live capture's stacks
    (which its text does not hold) read back as they were."""
    items = strings.items if strings is not None else _same
    text = strings.text if strings is not None else _same

    def graph(g: Any) -> None:
        if not isinstance(g, dict):
            return
        g.pop("parse_error", None)
        stacks = {}
        for n in items(g.pop("nodes", None) or []):
            if isinstance(n, dict) and not text(n.get("module", "")) and n.get("module_stack"):
                stacks[text(n["name"])] = [text(m) for m in items(n["module_stack"])]
        if stacks:
            g["module_stacks"] = stacks

    def each(d: dict[str, Any], key: str) -> list[Any]:
        if key not in d:
            return []
        found = d[key] = items(d[key]) or []
        return [v for v in found if isinstance(v, dict)]

    for c in each(data, "compiles"):
        for g in (c.get("graphs") or {}).values():
            graph(g)
        if isinstance(c.get("guards"), dict):
            c["guards"].pop("guards", None)
        for oc in each(c, "output_code"):
            for g in (oc.get("graphs") or {}).values():
                graph(g)
            for k in each(oc, "kernels"):
                k.pop("user_lines", None)
                for v in each(k, "variants"):
                    for stage in each(v, "stages"):
                        stage.pop("source_lines", None)
    return data


def _same(value: Any) -> Any:
    return value


# _UPGRADES[n] turns a major-version-n dict into a major-version-(n+1) dict (given the
# string table of a compact document).
_UPGRADES: dict[int, typing.Callable[[dict[str, Any], Unpacker | None], dict[str, Any]]] = {
    1: _unchanged_1_to_2,
    2: _unchanged_2_to_3,
    3: _computed_out_3_to_4,
}


def to_dict(value: Any) -> Any:
    """Plain JSON types for a dataclass tree (tuples become lists)."""
    return _plain(value, compact=False)


def _plain(value: Any, *, compact: bool) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if not compact:
            names = [n for n, _ in _defaults(type(value))]
        else:
            # a field left out reads back as its default
            names = [
                n for n, d in _defaults(type(value)) if d is _NO_DEFAULT or getattr(value, n) != d
            ]
        out = {name: _plain(getattr(value, name), compact=compact) for name in names}
        if isinstance(value, Bytecode):
            for name in _DECOMPILED:  # decompiles a live capture's frame not read yet
                found = getattr(value, name)
                if found is not None or not compact:
                    out[name] = found
        if compact and isinstance(value, Schedule):
            schedule_spans(value, out["fused"])
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(v, compact=compact) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v, compact=compact) for k, v in value.items()}
    return value


_NO_DEFAULT = object()
_DEFAULTS: dict[type, tuple[tuple[str, Any], ...]] = {}


def _defaults(cls: type) -> tuple[tuple[str, Any], ...]:
    """(field name, default value or ``_NO_DEFAULT``) for each field of a dataclass that
    the file holds (not its ``derived`` handle)."""
    if cls not in _DEFAULTS:
        _DEFAULTS[cls] = tuple(
            (
                f.name,
                f.default
                if f.default is not dataclasses.MISSING
                else f.default_factory()
                if f.default_factory is not dataclasses.MISSING
                else _NO_DEFAULT,
            )
            for f in dataclasses.fields(cls)
            if not is_derived(f)
        )
    return _DEFAULTS[cls]


def to_json(exp: Exploration, *, indent: int | None = None, compact: bool = True) -> str:
    """``{"schema_version": [major, minor], "strings": [...], "exploration": {...}}`` as
    text; ``compact=False`` writes every value in place and plain, as schema 2.0 did
    (larger; for a reader that greps the file, or passes it on within one machine).

    Example:
        >>> import compiler
        >>> text = to_json(compiler.Exploration(source="live"))
        >>> text[:27]
        '{"schema_version": [4, 4], '
    """
    if not compact:
        plain = {"schema_version": list(SCHEMA_VERSION), "exploration": to_dict(exp)}
        return json.dumps(plain, indent=indent, ensure_ascii=False)
    strings, data = pack(_plain(exp, compact=True))
    doc = {"schema_version": list(SCHEMA_VERSION), "strings": strings, "exploration": data}
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
    reading = _Reading(unknown=[])
    if (major, minor) >= _COMPACT_SINCE:
        strings = doc.get("strings", [])
        if not isinstance(strings, list):
            raise TraceFormatError("the 'strings' entry of a compact Exploration is not a list")
        reading.strings = Unpacker(strings)
    try:
        while major < SCHEMA_VERSION[0]:
            data = _UPGRADES[major](data, reading.strings)
            major, minor = major + 1, 0
        exp = _build(Exploration, data, "exploration", reading)
    except ValueError as exc:
        msg = f"a compact Exploration JSON document is damaged: {exc}. Write it again."
        raise TraceFormatError(msg) from exc
    if not isinstance(exp, Exploration):
        raise TraceFormatError("the 'exploration' entry does not describe an Exploration")
    # ids and links derived again; what is computed on first read gets its recipes
    compiles = tuple(derive(list(exp.compiles), reading.cache))
    unknown = tuple(exp.unknown_keys) + tuple(reading.unknown)
    return dataclasses.replace(exp, compiles=compiles, unknown_keys=unknown)


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls, vars(model))
    return _HINTS[cls]


def _build(tp: Any, value: Any, path: str, reading: _Reading) -> Any:
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        options = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None:
            return None
        return _build(options[0], value, path, reading)
    if origin is tuple:
        (item, *_rest) = typing.get_args(tp)
        if reading.strings is not None:
            value = reading.strings.items(value)
        return tuple(_build(item, v, f"{path}[{i}]", reading) for i, v in enumerate(value))
    if origin is dict:
        _key, item = typing.get_args(tp)
        return {k: _build(item, v, f"{path}.{k}", reading) for k, v in value.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _build_dataclass(tp, value, path, reading)
    if tp is str and reading.strings is not None and not isinstance(value, str):
        return reading.strings.text(value)
    if tp is float and isinstance(value, int):
        return float(value)
    return value


def _build_dataclass(tp: type, value: Any, path: str, reading: _Reading) -> Any:
    if not isinstance(value, dict):
        raise TraceFormatError(f"{path}: expected an object, found {type(value).__name__}")
    if tp is Schedule and reading.strings is not None:
        value = _schedule_texts(value, path, reading)
    hints = _hints(tp)
    kwargs = {}
    if tp is Bytecode:
        found = tuple(_build(str | None, value.get(k), f"{path}.{k}", reading) for k in _DECOMPILED)
        if found != (None, None):
            kwargs["derived"] = reading.cache.known(found)
        value = {k: v for k, v in value.items() if k not in _DECOMPILED}
    for key, v in value.items():
        if key not in hints or key == "derived":
            reading.unknown.append(f"{path}.{key}")
            continue
        kwargs[key] = _build(hints[key], v, f"{path}.{key}", reading)
    try:
        built = tp(**kwargs)
    except TypeError as exc:
        raise TraceFormatError(f"{path}: cannot build {tp.__name__}: {exc}") from exc
    return built


def _schedule_texts(value: dict[str, Any], path: str, reading: _Reading) -> dict[str, Any]:
    """A compact schedule with each fused node's ``[start, end]`` turned back into its
    text, cut from the schedule's ``post_fusion``."""
    if reading.strings is None:
        return value
    fused = reading.strings.items(value.get("fused"))
    if not isinstance(fused, list) or not any(
        isinstance(f, dict) and isinstance(f.get("text"), list) for f in fused
    ):
        return value
    post = _build(str | None, value.get("post_fusion"), f"{path}.post_fusion", reading)
    nodes = [
        {**f, "text": fused_text(post, f["text"], f"{path}.fused[{i}].text")}
        if isinstance(f, dict) and isinstance(f.get("text"), list)
        else f
        for i, f in enumerate(fused)
    ]
    return {**value, "post_fusion": post, "fused": nodes}
