"""JSDoc typedefs of the pane and index classes: the Python-to-JS contract, written.

``explorer/static/panes/typedefs.js`` holds ``typedefs()`` and ``typedefs_costs.js``
``typedefs("costs")``; ``tests/test_panes.py`` regenerates and compares. After changing a
pane class run::

    python -c "from explorer.panes import typedefs; print(typedefs(), end='')" \
        > explorer/static/panes/typedefs.js
    python -c "from explorer.panes import typedefs; print(typedefs('costs'), end='')" \
        > explorer/static/panes/typedefs_costs.js
"""

from __future__ import annotations

import dataclasses
import sys
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
    # a kind's classes may live beside its builder: every class of each kind's module
    homes = {sys.modules[k.build.__module__] for k in KINDS}
    todo = [
        v
        for module in (pane_types, index_types, *homes)
        for v in vars(module).values()
        if isinstance(v, type) and dataclasses.is_dataclass(v) and v.__module__ == module.__name__
    ]
    todo.extend(k.cls for k in KINDS)
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


COSTS_FILE = "typedefs_costs.js"


def _in_costs(cls: type) -> bool:
    """Whether ``cls`` is a class of the cost panes (``explorer/panes/costs``), whose
    typedefs have a file of their own (``typedefs_costs.js``) to keep each under 600 lines."""
    return cls.__module__.startswith(f"{__package__}.costs")


def _block(cls: type) -> list[str]:
    hints = typing.get_type_hints(cls)
    lines = ["/**", f" * @typedef {{object}} {cls.__name__}"]
    lines += [f" * @property {{{_js(hints[f.name])}}} {f.name}" for f in dataclasses.fields(cls)]
    return [*lines, " */"]


def typedefs(part: str = "panes") -> str:
    """A typedefs file's text, one ``@typedef`` per class, sorted by name: ``"panes"``
    (``typedefs.js``: the pane and index classes, and each cost pane's class by name, so
    that every module imports its types from one file) or ``"costs"``
    (``typedefs_costs.js``: the cost panes' classes in full).

    Example:
        >>> "@typedef {object} GraphPane" in typedefs()
        True
        >>> "@typedef {object} CompileTimePane" in typedefs("costs")
        True
    """
    lines = [
        "// @ts-check",
        "// GENERATED from explorer/panes/types.py by explorer.panes.typedefs();",
        "// do not edit. The Python-to-JS contract of the explorer's panes and index.",
        "",
    ]
    classes = _classes()
    if part == "costs":
        own = [c for c in classes if _in_costs(c)]
        used = sorted(
            {
                t.__name__
                for c in own
                for hint in typing.get_type_hints(c).values()
                for t in _named(hint)
                if dataclasses.is_dataclass(t) and not _in_costs(t)
            }
        )
        if used:
            lines.append(f'/** @import {{ {", ".join(used)} }} from "./typedefs.js" */')
        for cls in own:
            lines += _block(cls)
        lines += ["", "export {}; // a module: typedefs.js names these types for the others", ""]
        return "\n".join(lines)
    for cls in classes:
        if _in_costs(cls):
            name = cls.__name__
            lines.append(f'/** @typedef {{import("./{COSTS_FILE}").{name}}} {name} */')
        else:
            lines += _block(cls)
    kinds = "|".join(k.cls.__name__ for k in KINDS)
    lines.append(f"/** @typedef {{{kinds}}} Pane */")
    lines.append("")
    lines.append("export {}; // a module: other files take these types with @import")
    lines.append("")
    return "\n".join(lines)
