"""The view as a typed, lazy projection of an Exploration.

``build_index(exp)`` is all the explorer's first paint needs; ``build_pane(exp, compile,
pane)`` builds one pane, when the user opens it, by the pure ``build_<kind>`` function of
its kind (``KINDS``, the one table of kinds); ``pane_json`` turns either into the JSON
data the browser reads. Nothing here tokenises text or lays out graphs: the browser does
that for the panes it shows.

Example:
    >>> import torch, compiler
    >>> exp = compiler.explore(torch.sin, torch.randn(4), backend="eager")
    >>> index = build_index(exp)
    >>> pane = build_pane(exp, index.compiles[0].key, "dynamo_output_graph")
    >>> pane.kind, [pane.ops[i] for i in pane.nodes.op]
    ('graph', ['placeholder', 'call_function', 'output'])
"""

from __future__ import annotations

import dataclasses
import gc
import operator
import types as pytypes
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from compiler import Exploration
from compiler.link.ids import (
    COMPILE_TIME,
    CUDAGRAPHS,
    FINDINGS,
    MEMORY,
    NUMERICS,
    PROFILE,
    RANKS,
)

from .frame import PaneNotFound, find_compile
from .index import build_index, kept_selection, pane_refs
from .index_types import Index
from .kinds import KINDS, PaneKind, kind_of, renderers_js
from .labels import STAGE_LABELS
from .typedefs import typedefs
from .types import Pane

__all__ = [
    "KINDS",
    "STAGE_LABELS",
    "Index",
    "Pane",
    "PaneKind",
    "PaneNotFound",
    "build_index",
    "build_pane",
    "kept_selection",
    "no_gc",
    "pane_json",
    "renderers_js",
    "typedefs",
]


def build_pane(exp: Exploration, compile_key: str | None, pane_id: str) -> Pane:
    """Build pane ``pane_id`` of compile ``compile_key`` (any compile for ``findings``).

    Raises:
        PaneNotFound: when the compile has no such pane.
    """
    if pane_id in (FINDINGS, RANKS, PROFILE, COMPILE_TIME, MEMORY, CUDAGRAPHS, NUMERICS):
        return kind_of(pane_id).build(exp, compile_key, pane_id)
    c = find_compile(exp, compile_key or "")
    ref = next((r for r in pane_refs(c) if r.id == pane_id), None)
    if ref is None:
        msg = f"compile {compile_key} has no pane {pane_id!r}"
        raise PaneNotFound(msg)
    return kind_of(ref.kind).build(exp, c.key, pane_id)


@contextmanager
def no_gc() -> Iterator[None]:
    """Pause Python's cyclic GC while panes are built: they allocate millions of small
    objects next to a large Exploration, and each full collection walks all of it
    (measured: converting a 12-layer GPT-2's panes took 3.3 s with GC, 0.4 s without).
    Nothing built here holds a reference cycle."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def pane_json(value: Any) -> Any:
    """A pane or the index as plain JSON types (tuples become lists).

    One converter per class, planned from its field types once.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _converter(type(value))(value)
    return _generic(value)


def _generic(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _converter(type(value))(value)
    if isinstance(value, (tuple, list)):
        return [_generic(v) for v in value]
    if isinstance(value, dict):
        return {k: _generic(v) for k, v in value.items()}
    return value


_CONVERTERS: dict[type, Callable[[Any], dict[str, Any]]] = {}
_PLAIN = (str, int, float, bool, type(None))


def _plain(tp: Any) -> bool:
    args = typing.get_args(tp)
    union = typing.get_origin(tp) in (pytypes.UnionType, typing.Union)
    return tp in _PLAIN or (union and all(a in _PLAIN for a in args))


def _field_converter(tp: Any) -> Callable[[Any], Any] | None:
    """None where the value is already JSON (a scalar, or a union of scalars)."""
    if _plain(tp):
        return None
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is tuple and all(a is Ellipsis or _plain(a) for a in args):
        return list
    if origin is dict and all(_plain(a) for a in args):
        return dict
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _converter(tp)  # straight to its planned converter: graph nodes by thousands
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        inner = _field_converter(args[0])
        if inner is not None:
            # map runs in C where inner is a builtin (list, dict): a graph's node columns
            return lambda v: list(map(inner, v))
    return _generic


def _converter(cls: type) -> Callable[[Any], dict[str, Any]]:
    """One converter per class, planned from its field types once."""
    got = _CONVERTERS.get(cls)
    if got is None:
        hints = typing.get_type_hints(cls)
        names = [f.name for f in dataclasses.fields(cls)]
        convs = [(n, c) for n in names if (c := _field_converter(hints[n])) is not None]
        # one C-level read of every field, then only the non-JSON fields converted in
        # place (key order kept): graph panes convert thousands of nodes
        read = operator.attrgetter(*names)
        if len(names) == 1:
            one = read

            def read(value: Any) -> tuple[Any, ...]:
                return (one(value),)

        def got(value: Any) -> dict[str, Any]:
            out = dict(zip(names, read(value), strict=True))
            for name, conv in convs:
                out[name] = conv(out[name])
            return out

        _CONVERTERS[cls] = got
    return got
