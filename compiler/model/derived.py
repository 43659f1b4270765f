"""What an Exploration computes on first read, in one cache you can see.

The model's classes are plain data: every field holds its value. A few things cost
time to compute and most views never show them: a graph's FX nodes with their links
(``Graph.nodes``, ``Graph.parse_error``), a guard tree's list (``Guards.guards``), the
decompiled source of a live capture (``Bytecode.decompiled``,
``Bytecode.decompile_error``), Triton's lowered-line maps (``LoweredStage.source_lines``)
and a kernel's user lines (``Kernel.user_lines``). Each of those is a read-only property,
not a field: it asks its object's ``derived`` field (a ``Later``) for its value, and the
``Later`` asks its ``Derived``, the one cache of a capture or load, which runs the recipe
the compiler gave it once, keeps the value and counts what it computed.

So ``==``, ``dataclasses.replace``, ``copy.copy`` and ``to_json``, which only look at
fields (``derived`` is left out of equality, repr and JSON), never compute anything,
and a copy made with ``replace`` reads the value its original reads. Who registers what:
``compiler/link/derive.py`` (graphs, guards, user lines, lowered-line maps) and
``compiler/trace/build.py`` (live decompiling); ``compiler/store/serialize.py`` for
decompiled text read from a file.

Example:
    >>> cache = Derived()
    >>> later = cache.later("graph", lambda: ((), None))
    >>> later.get(), later.get(), cache.counts["graph"]
    (((), None), ((), None), 1)
"""

from __future__ import annotations

import itertools
import types
from collections import Counter
from collections.abc import Callable
from typing import Any


class Derived:
    """The values of one capture or load that are computed when first read.

    ``counts[kind]`` says how many values of a kind (``graph``, ``guards``,
    ``decompile``, ``lowered_lines``, ``user_lines``) were computed; ``pending()`` how
    many are still waiting for a reader. A recipe runs once: its value is kept, and the
    recipe (with what it holds on to) let go.
    """

    def __init__(self) -> None:
        self._keys = itertools.count()
        self._recipes: dict[int, tuple[str, Callable[[], Any]]] = {}
        self._values: dict[int, Any] = {}
        self.counts: Counter[str] = Counter()

    def later(self, kind: str, recipe: Callable[[], Any]) -> Later:
        """A handle on ``recipe()``, run when the handle is first read."""
        key = next(self._keys)
        self._recipes[key] = (kind, recipe)
        return Later(cache=self, key=key)

    def known(self, value: Any) -> Later:
        """A handle on a value already at hand (read from a file, built by hand)."""
        key = next(self._keys)
        self._values[key] = value
        return Later(cache=self, key=key)

    def value(self, key: int) -> Any:
        """The value of ``key``: computed now if this is its first read."""
        if key in self._values:
            return self._values[key]
        kind, recipe = self._recipes[key]
        value = self._values[key] = recipe()  # a recipe that raises is run again next time
        del self._recipes[key]
        self.counts[kind] += 1
        return value

    def pending(self) -> Counter[str]:
        """How many values of each kind nobody has read yet."""
        return Counter(kind for kind, _ in self._recipes.values())


class Later:
    """One value of a ``Derived`` cache: what a model object's ``derived`` field holds.

    Not a dataclass: it is a handle, not data, and stays out of the schema listing."""

    __slots__ = ("cache", "key")

    def __init__(self, *, cache: Derived, key: int) -> None:
        self.cache = cache
        self.key = key

    def get(self) -> Any:
        """The value, computed on the first read of any handle on it."""
        return self.cache.value(self.key)


# The metadata of a model class's ``derived`` field (a ``Later`` or None, declared
# ``compare=False, repr=False``): ``compiler/store/serialize.py`` leaves it out of JSON.
DERIVED = types.MappingProxyType({"derived": True})


def is_derived(f: Any) -> bool:
    """Whether dataclass field ``f`` is a ``derived`` handle, not data."""
    return bool(f.metadata.get("derived"))
