"""What an Exploration computes on first read, in one cache you can see.

The model's classes are plain data: every field holds its value. A few things cost
time to compute and most views never show them: a graph's FX nodes with their links
(``Graph.nodes``, ``Graph.parse_error``, ``Graph.file_comments``), a guard tree's list
(``Guards.guards``), the decompiled source of a live capture (``Bytecode.decompiled``,
``Bytecode.decompile_error``), Triton's lowered-line maps (``LoweredStage.source_lines``),
a kernel's user lines (``Kernel.user_lines``) and an autotuning candidate's config
(``AutotuneChoice.config``); the views read these instead of reading torch's text.
Each of those is a read-only property, not a field: it asks its object's ``derived``
field (a ``Later``) for its value, and the ``Later`` asks its ``Derived``, the one cache
of a capture or load, which runs the recipe the compiler gave it once, keeps the value
and counts what it computed.

So ``==``, ``dataclasses.replace``, ``copy.copy`` and ``to_json``, which only look at
fields (``derived`` is left out of equality, repr and JSON), never compute anything,
and a copy made with ``replace`` reads the value its original reads. Who registers what:
``compiler/link/derive.py`` (graphs with their file comments, guards, user lines,
lowered-line maps, autotuning configs) and ``compiler/trace/build.py`` (live
decompiling); ``compiler/store/serialize.py`` for
decompiled text read from a file.

What is judged from a whole Exploration (``Exploration.findings()``, the ranks'
``compiler.divergence``, ``compiler.memory``) is a value of a ``Derived`` too, the one
in the Exploration's own ``derived`` field, by name (``Derived.named``): an Exploration
made with ``replace`` is another exploration, so it starts with an empty one and judges
again.

Example:
    >>> cache = Derived()
    >>> later = cache.later("graph", lambda: ((), None))
    >>> later.get(), later.get(), cache.counts["graph"]
    (((), None), ((), None), 1)
"""

from __future__ import annotations

import itertools
import threading
import types
from collections import Counter
from collections.abc import Callable
from typing import Any


class Derived:
    """The values of one capture or load that are computed when first read.

    ``counts[kind]`` says how many values of a kind (``graph``, ``guards``,
    ``decompile``, ``lowered_lines``, ``user_lines``, ``autotune_config``, ``findings``,
    ``divergence``) were computed; ``pending()`` how many are still waiting for a
    reader. A recipe runs once: its value is kept, and the recipe (with what it holds on
    to) let go.

    Safe across threads (live recompile reads one Exploration from the compile thread,
    the diff and the widget's pane requests): when several threads ask for a value at
    once, one runs its recipe and the others wait for its value, each value behind a
    gate of its own. A recipe may read other values of the same cache (a graph's links
    read another graph), in any thread; one that reads its own value, even through
    others, is a ``RecursionError`` in one thread, as it always was.
    """

    def __init__(self) -> None:
        self._keys = itertools.count()
        self._recipes: dict[int, tuple[str, Callable[[], Any]]] = {}
        self._values: dict[int, Any] = {}
        self._names: dict[str, int] = {}
        # guards the dicts above and ``counts``; never held while a recipe runs
        self._lock = threading.Lock()
        # key -> (its gate, the thread running its recipe), while a recipe runs
        self._running: dict[int, tuple[threading.Lock, int]] = {}
        self.counts: Counter[str] = Counter()

    def __copy__(self) -> Derived:
        # a copy of a model object reads the values its original reads (as ``replace``
        # does), so copies share the one cache instead of copying its lock
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Derived:
        return self

    def later(self, kind: str, recipe: Callable[[], Any]) -> Later:
        """A handle on ``recipe()``, run when the handle is first read."""
        with self._lock:
            key = next(self._keys)
            self._recipes[key] = (kind, recipe)
        return Later(cache=self, key=key)

    def known(self, value: Any) -> Later:
        """A handle on a value already at hand (read from a file, built by hand)."""
        with self._lock:
            key = next(self._keys)
            self._values[key] = value
        return Later(cache=self, key=key)

    def named(self, name: str, recipe: Callable[[], Any]) -> Later:
        """The handle on this cache's one value called ``name`` (its kind too): the
        first call registers ``recipe``, later calls get that handle back.

        Example:
            >>> cache = Derived()
            >>> cache.named("answer", lambda: 42).get(), cache.named("answer", int).get()
            (42, 42)
        """
        with self._lock:
            key = self._names.get(name)
            if key is None:
                key = self._names[name] = next(self._keys)
                self._recipes[key] = (name, recipe)
        return Later(cache=self, key=key)

    def value(self, key: int) -> Any:
        """The value of ``key``: computed now if this is its first read."""
        try:
            return self._values[key]
        except KeyError:
            pass
        me = threading.get_ident()
        while True:
            with self._lock:
                if key in self._values:
                    return self._values[key]
                running = self._running.get(key)
                if running is None:
                    gate = threading.Lock()
                    gate.acquire()
                    self._running[key] = (gate, me)
                    kind, recipe = self._recipes[key]
                    break
                gate, runner = running
                if runner == me:
                    what = self._recipes[key][0]
                    raise RecursionError(f"the recipe of a {what} value reads that value")
            with gate:  # wait for the thread running the recipe, then look again
                pass
        try:
            value = recipe()
        except BaseException:  # a recipe that raises is run again next time
            with self._lock:
                del self._running[key]
            gate.release()
            raise
        with self._lock:
            self._values[key] = value
            del self._recipes[key], self._running[key]
            self.counts[kind] += 1
        gate.release()
        return value

    def pending(self) -> Counter[str]:
        """How many values of each kind nobody has read yet."""
        with self._lock:
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
