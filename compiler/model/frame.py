"""What Dynamo recorded of a frame: bytecode, guards, graph breaks, recompile reasons."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from compiler.model.base import _FROZEN, SourceLoc
from compiler.model.derived import DERIVED, Derived, Later


@dataclass(**_FROZEN)
class Bytecode:
    """A frame's bytecode before and after Dynamo, as ``dis`` prints it.

    ``decompiled`` is best-effort source for the transformed code; when the
    decompiler fails, ``decompile_error`` says why. Both are properties read through
    ``derived``: a live capture decompiles on the first read of either (decompiling
    costs time in the user's compile, and most views never show it); a trace or a file
    gives them as they were recorded. JSON still holds them: ``to_json`` reads them
    (a live capture's code object is gone once its process ends).
    """

    code_name: str
    original: str | None = None
    transformed: str | None = None
    source: str | None = None
    # schema 2.0: the user source line (in the frame's file) of each line of
    # ``original``/``transformed`` (``dis`` text split on newlines); None where none.
    original_lines: tuple[int | None, ...] = ()
    transformed_lines: tuple[int | None, ...] = ()
    derived: Later | None = field(default=None, compare=False, repr=False, metadata=DERIVED)

    @property
    def decompiled(self) -> str | None:
        """The decompiled transformed code, or None (decompiled on first read)."""
        return self._decompiled()[0]

    @property
    def decompile_error(self) -> str | None:
        """Why there is no decompiled source, or None (decompiled on first read)."""
        return self._decompiled()[1]

    def _decompiled(self) -> tuple[str | None, str | None]:
        if self.derived is None:
            return None, None
        found: tuple[str | None, str | None] = self.derived.get()
        return found


def decompile_later(
    cache: Derived, decompile: Callable[[], tuple[str | None, str | None]]
) -> Later:
    """``cache``'s handle on (decompiled source, error) from ``decompile()``; a decompiler
    that raises gives an error, so a view reading ``decompiled`` gets text, not a crash.

    Example:
        >>> b = Bytecode(code_name="f",
        ...              derived=decompile_later(Derived(), lambda: ("def f(): pass", None)))
        >>> b.decompiled
        'def f(): pass'
    """

    def decompile_once() -> tuple[str | None, str | None]:
        try:
            return decompile()
        except Exception as exc:
            return None, f"{type(exc).__name__}: {exc}"

    return cache.later("decompile", decompile_once)


@dataclass(**_FROZEN)
class Guard:
    """One guard from the guard tree: its type, expression and tree position."""

    kind: str
    expr: str
    depth: int
    line: int
    origin: str = ""


@dataclass(**_FROZEN)
class Guards:
    """The guard tree text Dynamo printed, plus its guards as a list.

    ``guards`` is a property parsed from ``tree`` on first read, through ``derived``
    (a large model has tens of thousands of guards, and most views never list them).
    """

    tree: str
    symbolic: tuple[str, ...] = ()
    derived: Later | None = field(default=None, compare=False, repr=False, metadata=DERIVED)

    @property
    def guards(self) -> tuple[Guard, ...]:
        """The guards of ``tree``, in order (parsed on first read)."""
        if self.derived is None:
            return ()
        found: tuple[Guard, ...] = self.derived.get()
        return found


@dataclass(**_FROZEN)
class GraphBreak:
    """Why Dynamo stopped tracing, where in user code, and what torch suggests."""

    reason: str
    summary: str
    location: SourceLoc | None = None
    hints: tuple[str, ...] = ()
    user_stack: tuple[SourceLoc, ...] = ()
    documentation: str = ""
    text: str = ""
    # schema 3.0 (derived, compiler/link/user_code.py): for each frame of ``user_stack``,
    # whether it is the user's compiled code (a frame in the file of a compiled frame,
    # not in torch or this package, not the caller such as pytest or runpy).
    user_frames: tuple[bool, ...] = ()


@dataclass(**_FROZEN)
class RecompileReason:
    """A failed guard that caused a recompile, e.g. ``tensor 'x' size mismatch``."""

    previous: str
    reason: str
    text: str
    # schema 4.4: the path the failed guard's Dynamo ``Source`` reads
    # (``self.param_groups[0]['lr']``), from a live capture; "" from a trace, whose
    # printed guard is read instead (``compiler.parse.guards.recompiles.guard_source``)
    source: str = ""
