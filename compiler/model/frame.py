"""What Dynamo recorded of a frame: bytecode, guards, graph breaks, recompile reasons."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compiler.model._lazy import _derived_on_read
from compiler.model.base import _FROZEN, SourceLoc


@dataclass(**_FROZEN)
class Bytecode:
    """A frame's bytecode before and after Dynamo, as ``dis`` prints it.

    ``decompiled`` is best-effort source for the transformed code; when the
    decompiler fails, ``decompile_error`` says why. A live capture decompiles on first
    read of either (``Bytecode.deferred``): decompiling costs time in the user's
    compile, and most views never show it.
    """

    code_name: str
    original: str | None = None
    transformed: str | None = None
    source: str | None = None
    decompiled: str | None = None
    decompile_error: str | None = None
    # schema 2.0: the user source line (in the frame's file) of each line of
    # ``original``/``transformed`` (``dis`` text split on newlines); None where none.
    original_lines: tuple[int | None, ...] = ()
    transformed_lines: tuple[int | None, ...] = ()

    @classmethod
    def deferred(
        cls, *, decompile: Callable[[], tuple[str | None, str | None]], **fields: Any
    ) -> Bytecode:
        """Bytecode whose ``decompiled`` and ``decompile_error`` come from
        ``decompile()``, called once, when either is first read; ``fields`` are the others.

        Example:
            >>> b = Bytecode.deferred(code_name="f", decompile=lambda: ("def f(): pass", None))
            >>> b.decompiled
            'def f(): pass'
        """

        def decompile_once() -> tuple[str | None, str | None]:
            try:
                return decompile()
            except Exception as exc:  # a view reading .decompiled must get text, not a crash
                return None, f"{type(exc).__name__}: {exc}"

        bytecode = cls(**fields)
        _defer_bytecode(bytecode, decompile_once)
        return bytecode


_defer_bytecode = _derived_on_read(Bytecode, "decompiled", "decompile_error")


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

    A loaded trace parses ``guards`` from ``tree`` on first read (``Guards.deferred``):
    a large model has tens of thousands of guards, and most views never list them.
    """

    tree: str
    guards: tuple[Guard, ...] = ()
    symbolic: tuple[str, ...] = ()

    @classmethod
    def deferred(
        cls, *, tree: str, symbolic: tuple[str, ...], parse: Callable[[], tuple[Guard, ...]]
    ) -> Guards:
        """Guards whose ``guards`` come from ``parse()``, called once, on first read."""
        guards = cls(tree=tree, symbolic=symbolic)
        _defer_guards(guards, lambda: (parse(),))
        return guards


_defer_guards = _derived_on_read(Guards, "guards")


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
