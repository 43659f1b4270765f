"""Fields computed on first read inside frozen dataclasses."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

_T = TypeVar("_T")


class _Deferred:
    """What a deferred object's first derived slot holds until one of them is read."""

    __slots__ = ("parse",)

    def __init__(self, parse: Callable[[], tuple[Any, ...]]) -> None:
        self.parse = parse


class _ParsedOnRead:
    """Slot wrapper for fields computed from another field on first read (``Graph.nodes``
    and ``parse_error`` from ``text``; ``Guards.guards`` from ``tree``): the first read
    of any of them runs the deferred parse and stores every result in its slot (frozen
    dataclasses forbid ``setattr``, not slot writes)."""

    def __init__(self, slots: tuple[Any, ...], index: int) -> None:
        self.slots = slots
        self.slot = slots[index]

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self.slot.__get__(obj, owner)
        value = self.slots[0].__get__(obj, owner)
        if isinstance(value, _Deferred):
            for slot, result in zip(self.slots, value.parse(), strict=True):
                slot.__set__(obj, result)
        return self.slot.__get__(obj, owner)

    def __set__(self, obj: Any, value: Any) -> None:
        self.slot.__set__(obj, value)


def _derived_on_read(
    cls: type, *names: str
) -> Callable[[Any, Callable[[], tuple[Any, ...]]], None]:
    """Make ``names`` (fields of slotted ``cls``) computable on first read; returns the
    function that defers them on one instance: ``defer(obj, parse)``, where ``parse()``
    returns their values in the order of ``names``."""
    slots = tuple(cls.__dict__[name] for name in names)
    for i, name in enumerate(names):
        setattr(cls, name, _ParsedOnRead(slots, i))

    def defer(obj: Any, parse: Callable[[], tuple[Any, ...]]) -> None:
        slots[0].__set__(obj, _Deferred(parse))

    return defer


def replace_lazily(obj: _T, **changes: Any) -> _T:
    """``dataclasses.replace(obj, **changes)`` that leaves fields computed on first read
    (``Graph.nodes``, ``Kernel.user_lines``, ...) uncomputed: the copy computes them
    when it is read, as ``obj`` would have.

    Example:
        >>> g = Graph.deferred(stage="s", text="", parse=lambda: ((), "empty"))
        >>> replace_lazily(g, stage="t").parse_error
        'empty'
    """
    cls = type(obj)
    copy = cls.__new__(cls)
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        slot = cls.__dict__[f.name]
        slot = slot.slot if isinstance(slot, _ParsedOnRead) else slot
        slot.__set__(copy, changes[f.name] if f.name in changes else slot.__get__(obj, cls))
    return copy
