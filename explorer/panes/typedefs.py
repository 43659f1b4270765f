"""JSDoc typedefs of the pane and index classes: the Python-to-JS contract, written.

``explorer/static/panes/typedefs.js`` holds ``typedefs()``; ``tests/test_panes.py``
regenerates and compares. After changing a class in ``explorer/panes/types.py`` run::

    python -c "from explorer.panes import typedefs; print(typedefs(), end='')" \
        > explorer/static/panes/typedefs.js
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

from . import index_types
from . import types as pane_types
from .kinds import KINDS

_SCALARS = {str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"}


def _js(tp: Any) -> str:
    if tp in _SCALARS:
        return _SCALARS[tp]
    if dataclasses.is_dataclass(tp):
        return tp.__name__
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (types.UnionType, typing.Union):
        return "(" + "|".join(_js(a) for a in args) + ")"
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return f"{_js(args[0])}[]"
        return "[" + ", ".join(_js(a) for a in args) + "]"
    if origin is dict:
        return f"Object<string, {_js(args[1])}>"
    raise TypeError(f"no JSDoc type for {tp!r}")


def _classes() -> list[type]:
    """The pane and index classes, and the compiler's classes they carry as they are
    (``compiler.KernelTiming``)."""
    todo = [
        v
        for module in (pane_types, index_types)
        for v in vars(module).values()
        if isinstance(v, type) and dataclasses.is_dataclass(v) and v.__module__ == module.__name__
    ]
    todo.extend(k.cls for k in KINDS)  # a kind's class may live beside its builder
    out: set[type] = set()  # a set: ``Pane`` names PaneHead again
    while todo:
        cls = todo.pop()
        if cls in out:
            continue
        out.add(cls)
        for hint in typing.get_type_hints(cls).values():
            todo.extend(t for t in _named(hint) if dataclasses.is_dataclass(t))
    return sorted(out, key=lambda c: c.__name__)


def _named(tp: Any) -> list[Any]:
    """``tp`` and every type named inside it (``tuple[KernelInfo, ...] | None``)."""
    return [tp, *(t for a in typing.get_args(tp) for t in _named(a))]


def typedefs() -> str:
    """The typedefs file text, one ``@typedef`` per pane/index class, sorted by name.

    Example:
        >>> "@typedef {object} GraphPane" in typedefs()
        True
    """
    lines = [
        "// @ts-check",
        "// GENERATED from explorer/panes/types.py by explorer.panes.typedefs();",
        "// do not edit. The Python-to-JS contract of the explorer's panes and index.",
        "",
    ]
    for cls in _classes():
        hints = typing.get_type_hints(cls)
        lines.append("/**")
        lines.append(f" * @typedef {{object}} {cls.__name__}")
        for f in dataclasses.fields(cls):
            lines.append(f" * @property {{{_js(hints[f.name])}}} {f.name}")
        lines.append(" */")
    kinds = "|".join(k.cls.__name__ for k in KINDS)
    lines.append(f"/** @typedef {{{kinds}}} Pane */")
    lines.append("")
    lines.append("export {}; // a module: other files take these types with @import")
    lines.append("")
    return "\n".join(lines)
