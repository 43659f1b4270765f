"""The notebook's state, sent to the live compile worker as data.

An edit runs in a worker process (``compiler.live.session`` says why), so what the edited
source uses from the notebook must cross to it: the helpers and globals it names, the
module instance it edits with its weights and buffers, the class whose method it patches.
They cross as one file written by ``torch.save`` with ``cloudpickle`` as its pickler:

- notebook-defined functions and classes (``__main__``'s, which no other process can
  import) go by value, with the globals they use, as cloudpickle does;
- importable objects (``torch``, ``transformers``' classes, the user's own modules) go by
  reference and the worker imports them;
- tensors, parameters and buffers go as torch serialises them, into a file on
  ``/dev/shm`` that the worker maps (``torch.load(mmap=True)``): a 12-layer GPT-2's 500 MB
  are written once and read without a copy.

The file is written again only when what it holds changed (a new object under a name, a
tensor changed in place, a submodule swapped): an edit of the source alone sends the source.
What cannot be pickled (a lock, an open file, a generator) is a ``CrossingError`` naming the
variable and the attribute path that holds it.

Example:
    >>> import torch
    >>> box = StateBox()
    >>> ns = {"w": torch.ones(3)}
    >>> ref = box.pack({"w": ns["w"]})
    >>> box.pack({"w": ns["w"]}) == ref   # nothing changed: the same file
    True
    >>> box.close()
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import types
from collections.abc import Iterator, Mapping
from typing import Any

import cloudpickle
import torch

_SHM = "/dev/shm"
_DEPTH = 4  # how deep the search for what cannot be pickled goes
_MODULE_DICTS = frozenset({"_parameters", "_buffers", "_modules"})  # stamped by their tensors


class CrossingError(ValueError):
    """A value the edit needs cannot be sent to the worker (it does not pickle)."""


class StateBox:
    """The file of state the worker reads; rewritten only when the state changed.

    The file is removed from its folder as soon as it is written and reached through this
    process's open descriptor (``/proc/PID/fd/N``): nothing is left on ``/dev/shm`` when
    the kernel dies, however it dies. Where there is no ``/proc``, the file stays until
    ``discard_except`` or ``close``.
    """

    def __init__(self) -> None:
        self.path: str | None = None
        self._stamp: Any = None
        # held so that the ids in the stamp stay unique while it is in use
        self._values: dict[str, Any] = {}
        self._written: dict[str, tuple[int, str]] = {}  # ref -> (descriptor, file path)

    def pack(
        self, values: Mapping[str, Any], labels: Mapping[str, str] | None = None
    ) -> str | None:
        """A reference the worker opens (a path, then ``?`` and a name unique to this
        content) to a file holding ``values``; None when empty. Raises CrossingError,
        which names a value by its key, or by ``labels[key]`` (the notebook's variable)."""
        values = dict(values)
        if not values:
            return None
        stamp = _stamp_all(values)
        if self.path is not None and stamp == self._stamp:
            return self.path
        where = _SHM if os.access(_SHM, os.W_OK) else None
        fd, path = tempfile.mkstemp(prefix="tce-live-", suffix=".pt", dir=where)
        try:
            with os.fdopen(fd, "wb", closefd=False) as out:
                torch.save(values, out, pickle_module=cloudpickle)
        except Exception as exc:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(path)
            raise CrossingError(_why_not(values, dict(labels or {}), exc)) from exc
        through = f"/proc/{os.getpid()}/fd/{fd}"
        if os.path.exists(through):
            os.unlink(path)  # the descriptor keeps it: the kernel's end is the file's end
            ref = f"{through}?{os.path.basename(path)}"  # a descriptor number is reused
        else:
            ref = f"{path}?{os.path.basename(path)}"
        self.path, self._stamp, self._values = ref, stamp, values
        self._written[ref] = (fd, path)
        return ref

    def discard_except(self, keep: str | None) -> None:
        """Let go of the files this box wrote before ``keep``: called once no request can
        still name them (a worker that mapped one keeps its pages until it lets go)."""
        for ref in [r for r in self._written if r != keep]:
            fd, path = self._written.pop(ref)
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(path)
        if self.path != keep:  # so that the next pack writes the state again
            self.path, self._stamp, self._values = None, None, {}

    def close(self) -> None:
        """Let go of the files."""
        self.discard_except(None)


def file_of(ref: str) -> str:
    """The path to open for a reference ``StateBox.pack`` made."""
    return ref.partition("?")[0]


def _stamp_all(values: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple((name, _stamp(value, 0)) for name, value in sorted(values.items()))


def _stamp(value: Any, depth: int) -> Any:
    """What changes when ``value`` would pickle differently, cheaply: ids, and the version
    counters torch bumps on every in-place change of a tensor."""
    if isinstance(value, torch.nn.Module):
        tensors = [*value.parameters(), *value.buffers()]
        # every module's plain attributes too: `blk.k = 3` or `blk.lock = Lock()` changes it
        attrs = tuple(tuple(id(v) for k, v in vars(m).items() if k not in _MODULE_DICTS)
                      for m in value.modules())  # fmt: skip
        return (id(value), tuple(id(m) for m in value.modules()), attrs,
                tuple((id(t), t._version) for t in tensors))  # fmt: skip
    if isinstance(value, torch.Tensor):
        return (id(value), value._version)
    if isinstance(value, types.FunctionType) and depth < _DEPTH and _by_value(value):
        # a notebook helper goes with the globals it names: a changed global changes it
        names = value.__code__.co_names
        used = tuple((n, _stamp(value.__globals__[n], depth + 1)) for n in names
                     if n in value.__globals__)  # fmt: skip
        return (id(value), used)
    return id(value)


def _by_value(fn: types.FunctionType) -> bool:
    return getattr(fn, "__module__", None) in (None, "__main__", "__live__")


def _why_not(values: Mapping[str, Any], labels: Mapping[str, str], exc: Exception) -> str:
    for name, value in values.items():
        if not _pickles(value):
            path, culprit, reason = _deepest(value, labels.get(name, name), 0)
            return (
                f"{path} ({type(culprit).__module__}.{type(culprit).__qualname__}) cannot be "
                f"sent to the live compile worker: {reason}. The worker is another process "
                "and gets the notebook's state as data; keep such objects out of what the "
                "edited code uses (make them inside the function, or leave them off the "
                "module)."
            )
    return f"the notebook's state could not be sent to the live compile worker: {exc}"


def _pickles(value: Any) -> bool:
    try:
        cloudpickle.dumps(value)
    except Exception:
        return False
    return True


def _deepest(value: Any, path: str, depth: int) -> tuple[str, Any, str]:
    """The innermost part of ``value`` that does not pickle, as (path, object, reason)."""
    if depth < _DEPTH:
        for sub, child in _children(value, path):
            if not _pickles(child):
                return _deepest(child, sub, depth + 1)
    try:
        cloudpickle.dumps(value)
    except Exception as exc:
        return path, value, str(exc)
    return path, value, "it does not pickle"


def _children(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, types.FunctionType) and _by_value(value):
        # a notebook function crosses with the globals it names
        for name in value.__code__.co_names:
            if name in value.__globals__:
                yield f"{name} (a global that {path} uses)", value.__globals__[name]
    if isinstance(value, torch.nn.Module):
        for name, child in value.named_children():
            yield f"{path}.{name}", child
    if isinstance(value, dict):
        for key, child in value.items():
            yield f"{path}[{key!r}]", child
    elif isinstance(value, (list, tuple)):
        for i, child in enumerate(value):
            yield f"{path}[{i}]", child
    # a module's _modules/_parameters/_buffers are covered by named_children above
    skip = _MODULE_DICTS if isinstance(value, torch.nn.Module) else frozenset()
    for name, child in getattr(value, "__dict__", {}).items():
        if name not in skip:
            yield f"{path}.{name}", child


__all__ = ["CrossingError", "StateBox", "file_of"]
