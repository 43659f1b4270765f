"""The sources of Dynamo's guards in a live capture, read from the ``Source`` objects
Dynamo built (``torch._guards.Guard.originating_source``, ``torch._dynamo.source``), not
from how a torch version prints them.

A cause is keyed on the path a guard reads (``self.param_groups[0]['lr']``). torch 2.11
prints that guard inside ``___as_tensor(...).item()``, 2.13 bare; the ``Source`` chain is
the same structure on both: an attribute, an item and a dict item above a local. The path
is spelt as ``compiler.parse.guards.sources.source_name`` spells a printed source, so a
live capture and a trace of the same program give the same key.

Dynamo hands a compile's guards to ``Hooks.guard_export_fn`` once they are built (each
``Guard`` then carries the code it checks, ``code_list``); ``export_hook`` chains a reader
in front of the user's hook there (``code_cache.own_compiles`` installs it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

# Sources that only convert, wrap or mark the value of the one below (``base``): the path
# is the base's. Named by class: each exists on 2.11, 2.13 and 2.14.1 (``torch._dynamo.
# source``), and a class a torch lacks or adds is simply not in this set.
_TRANSPARENT = frozenset({
    "NNModuleSource", "UnspecializedNNModuleSource", "UnspecializedBuiltinNNModuleSource",
    "FSDPNNModuleSource", "OptimizerSource", "FloatTensorSource", "CallMethodItemSource",
    "ConvertIntSource", "NumpyTensorSource", "SkipGuardSource", "DynamicScalarSource",
})  # fmt: skip
# Sources that read an item of the one below: ``base[index]``
_ITEM = frozenset({
    "GetItemSource", "ListGetItemSource", "TupleIteratorGetItemSource", "DictGetItemSource",
    "DictSubclassGetItemSource",
})  # fmt: skip
_ATTR = frozenset({"AttrSource", "ParamBufferSource", "UnspecializedParamBufferSource",
                   "GenericAttrSource"})  # fmt: skip
_ROOT = {"LocalSource": "local_name", "GlobalSource": "global_name",
         "GlobalWeakRefSource": "global_name"}  # fmt: skip


def source_path(source: Any) -> str | None:
    """The path a Dynamo ``Source`` reads, walking its ``base`` chain: a frame's local or
    global (``LocalSource``, ``GlobalSource``), attributes (``AttrSource``), items
    (``GetItemSource``, ``DictGetItemSource``) and the wrappers that only convert what
    they read (``FloatTensorSource``, ``CallMethodItemSource``, module and optimizer
    sources). None for a source of any other kind (the caller then reads the printed
    guard).

    Example:
        >>> from torch._dynamo.source import AttrSource, DictGetItemSource, GetItemSource
        >>> from torch._dynamo.source import LocalSource
        >>> groups = AttrSource(LocalSource("self"), "param_groups")
        >>> source_path(DictGetItemSource(GetItemSource(groups, 0), "lr"))
        "self.param_groups[0]['lr']"
    """
    parts: list[str] = []
    for _ in range(64):  # a chain is short; a cycle is no source we know
        kind = type(source).__name__
        if kind in _ROOT:
            name = getattr(source, _ROOT[kind], None)
            return name + "".join(reversed(parts)) if isinstance(name, str) else None
        base = getattr(source, "base", None)
        if base is None:
            return None
        if kind in _ATTR:
            member = getattr(source, "member", None)
            if not isinstance(member, str):
                return None
            parts.append(f".{member}")
        elif kind in _ITEM:
            index = getattr(source, "index", None)
            if getattr(source, "index_is_slice", False) or not isinstance(
                index, (int, str, float, bool)
            ):
                return None  # a slice or a key that is itself a source
            parts.append(f"[{index!r}]")
        elif kind not in _TRANSPARENT:
            return None
        source = base
    return None


@dataclasses.dataclass(frozen=True, slots=True)
class GuardSource:
    """One guard Dynamo built: the texts torch prints for it (its checks, ``code_list``,
    and its source's printed name) and the path its ``Source`` reads (``source_path``)."""

    texts: tuple[str, ...]
    path: str


def guard_sources(guards: Iterable[Any]) -> list[GuardSource]:
    """What ``source_path`` reads for each of a compile's guards that has a source it knows
    (``guards``: the ``GuardsSet`` Dynamo hands to ``guard_export_fn``)."""
    out = []
    for guard in guards:
        source = getattr(guard, "originating_source", None)
        path = source_path(source) if source is not None else None
        if not path:
            continue
        name = getattr(source, "name", "")
        name = name() if callable(name) else name  # a method before 2.13, a property after
        texts = (*(getattr(guard, "code_list", None) or ()), *([name] if name else []))
        out.append(GuardSource(tuple(str(t) for t in texts), path))
    return out


def export_hook(hooks: Any, sink: Callable[[list[GuardSource]], None],
                failed: Callable[[Exception], None]) -> Any:  # fmt: skip
    """``hooks`` (Dynamo's ``Hooks`` of a compiled call) with a ``guard_export_fn`` that
    gives ``sink`` each compile's guard sources, then calls the user's own hook if there
    was one. Reading never fails the compile: a failure of the reader goes to ``failed``
    and the reasons of that compile keep their printed keys."""
    theirs = getattr(hooks, "guard_export_fn", None)

    def export(guards: Any) -> None:
        try:
            sink(guard_sources(guards))
        except Exception as exc:  # observing must not fail the user's compile
            failed(exc)
        if theirs is not None:
            theirs(guards)

    try:
        return dataclasses.replace(hooks, guard_export_fn=export)
    except Exception:
        return hooks
