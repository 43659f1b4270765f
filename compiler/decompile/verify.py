"""Check decompiled source against what it claims: run it in place of the original code.

``check(program)`` compiles the program with ``backend="eager"`` and records Dynamo's
transformed bytecode of every frame and resume function, decompiles each, then runs the
program again without torch.compile with every recorded frame's function running its
*decompiled* code (``function.__code__`` swapped for the time of one call): the compiled
graphs, the resume functions and the eager code between them run as the decompiled source
says. The outputs must equal those of a plain eager run. Nothing here mocks torch: the
graphs are the ones Dynamo compiled, called from the decompiled source.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import CellType, CodeType, FunctionType
from typing import Any

from compiler import _compat
from compiler.decompile import DecompileError, as_function, decompile
from compiler.parse.words.names import DYNAMO_CALL_PREFIXES

__all__ = ["Check", "FrameCheck", "check"]


@dataclass(frozen=True, kw_only=True, slots=True)
class FrameCheck:
    """One transformed frame: its decompiled source, or why there is none."""

    code_name: str
    source: str | None
    error: str | None
    # what the transformed bytecode calls by name: Dynamo's compiled graphs
    # (``__compiled_fn_*``) and resume functions (``__resume_at_*``)
    dynamo_names: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class Check:
    """Every frame Dynamo transformed while the program ran, and whether the program,
    run on the decompiled code, gave the eager program's outputs (None: not run, ``why``
    says why)."""

    frames: tuple[FrameCheck, ...]
    behaves: bool | None
    why: str = ""
    # the code names of frames whose decompiled code the run could not put in place (no
    # function, cell or enclosing function holds their code object; ``why`` says so):
    # ``behaves`` is then about the other frames
    unchecked: tuple[str, ...] = ()

    @property
    def decompiled(self) -> int:
        return sum(f.source is not None for f in self.frames)


def check(
    build: Callable[[], Callable[[], Any]],
    *,
    seed: int = 0,
    decompiler: Callable[[CodeType], str] = decompile,
) -> Check:
    """Decompile every frame a program's compiled run transforms, then run the program
    eagerly on the decompiled code and compare with a plain eager run.

    ``build()`` makes the program afresh (same seed, same state) and returns the callable
    that runs it; the program compiles what it compiles with ``backend="eager"``. The
    eager runs are the same callable under ``torch.compiler.set_stance("force_eager")``.
    ``decompiler`` is ours by default; another one (depyf's ``decompile``) is checked the
    same way, its exceptions counted as frames it could not decompile.

    Example:
        >>> import torch
        >>> def f(x):
        ...     print("a break")
        ...     return x + 1
        >>> x = torch.ones(2)
        >>> c = check(lambda: lambda: torch.compile(f, backend="eager")(x))
        a break
        a break
        a break
        >>> (c.decompiled, len(c.frames), c.behaves)
        (2, 2, True)
    """
    import torch

    pairs: list[tuple[CodeType, CodeType]] = []
    torch.compiler.reset()

    def hook(original: CodeType, transformed: CodeType) -> None:
        pairs.append((original, transformed))

    handle = _compat.register_bytecode_hook(hook)
    try:
        with _seeded(seed):
            build()()
    finally:
        handle.remove()
    frames, swaps = [], {}
    if decompiler is decompile:  # a function a frame makes runs its transformed code
        decompiler = functools.partial(decompile, nested=dict(pairs))
    for original, transformed in pairs:
        names = tuple(
            n for n in transformed.co_names if n.startswith(DYNAMO_CALL_PREFIXES)
        )
        found = FrameCheck(code_name=original.co_name, source=None, error=None, dynamo_names=names)
        try:
            source = str(decompiler(transformed))
        except DecompileError as exc:
            frames.append(dataclasses.replace(found, error=str(exc)))
            continue
        except Exception as exc:  # another decompiler's failure: a frame it cannot write
            frames.append(dataclasses.replace(found, error=f"{type(exc).__name__}: {exc}"))
            continue
        frames.append(dataclasses.replace(found, source=source))
        swaps[original] = (source, transformed)  # a recompile: the last one compiled
    if len(swaps) < len({o for o, _ in pairs}):
        return Check(frames=tuple(frames), behaves=None, why="a frame did not decompile")
    eager = torch.compiler.set_stance("force_eager")
    with _seeded(seed), eager:
        expected = build()()
    unchecked: list[str] = []  # code names, and below the reasons
    reasons: list[str] = []
    done = functools.partial(Check, frames=tuple(frames))
    try:
        with _seeded(seed), torch.compiler.set_stance("force_eager"):
            run = build()  # built first: its functions exist to be swapped
            with _swapped(swaps, unchecked, reasons):
                got = run()
    except _CannotSwap as exc:
        return done(behaves=None, why=str(exc), unchecked=tuple(unchecked))
    except Exception as exc:  # the decompiled code raised where the original did not
        why = f"the decompiled code raised {type(exc).__name__}: {exc}"
        return done(behaves=False, why=why, unchecked=tuple(unchecked))
    if len(unchecked) == len(swaps):
        return done(behaves=None, why="; ".join(reasons), unchecked=tuple(unchecked))
    try:
        torch.testing.assert_close(got, expected, equal_nan=True)
    except AssertionError as exc:
        return done(behaves=False, why=str(exc), unchecked=tuple(unchecked))
    return done(behaves=True, why="; ".join(reasons), unchecked=tuple(unchecked))


class _CannotSwap(Exception):
    pass


@contextlib.contextmanager
def _seeded(seed: int) -> Iterator[None]:
    import torch

    state = torch.random.get_rng_state(), random.getstate()
    torch.manual_seed(seed)
    random.seed(seed)
    try:
        yield
    finally:
        torch.random.set_rng_state(state[0])
        random.setstate(state[1])


@contextlib.contextmanager
def _swapped(
    swaps: dict[CodeType, tuple[str, CodeType]], unchecked: list[str], reasons: list[str]
) -> Iterator[None]:
    """Every function whose code is a key runs the decompiled code instead, for the block;
    so does every function made later from a closure cell holding that code (Dynamo makes
    a resume function with a closure from such a cell at each call), or from a code
    constant (``MAKE_FUNCTION``): the enclosing function's code gets the decompiled code
    among its constants. A code that another decompiled frame makes a function of is
    decompiled inside that frame's source already. A code none of these reach (a function
    made and dropped before the block) is named in ``unchecked``, the reason in
    ``reasons``."""
    undo: list[Callable[[], None]] = []
    inside = {c for _, t in swaps.values() for c in _nested_codes(t)}
    # every holder is found before any is changed (one function may make two of them)
    makers = _makers({id(o) for o in swaps})
    owners = {original: _holders(original, makers.get(id(original), [])) for original in swaps}
    try:
        for original, (source, transformed) in swaps.items():
            functions, cells, enclosing = owners[original]
            if original in inside and not functions and not cells:
                continue
            if not functions and not cells and not enclosing:
                unchecked.append(original.co_name)
                reasons.append(
                    f"{original.co_name} not checked: no function, cell or enclosing function "
                    "holds its code (its function is made and dropped during a run)"
                )
                continue
            empty = tuple(None for _ in original.co_freevars)
            code = as_function(source, transformed, {}, empty).__code__
            if code.co_freevars != original.co_freevars:  # the closure must fit
                raise _CannotSwap(
                    f"the decompiled {original.co_name} reads free variables "
                    f"{code.co_freevars}, the original {original.co_freevars}"
                )
            for fn in functions:
                undo.append(functools.partial(setattr, fn, "__code__", fn.__code__))
                fn.__code__ = code
            for cell in cells:
                undo.append(functools.partial(setattr, cell, "cell_contents", original))
                cell.cell_contents = code
            for fn in enclosing:  # its code as it is now: another swap may have changed it
                outer = fn.__code__
                consts = tuple(code if c is original else c for c in outer.co_consts)
                undo.append(functools.partial(setattr, fn, "__code__", outer))
                fn.__code__ = outer.replace(co_consts=consts)
        yield
    finally:
        for step in reversed(undo):
            step()


def _holders(
    original: CodeType, makers: list[FunctionType]
) -> tuple[list[FunctionType], list[CellType], list[FunctionType]]:
    """The functions running ``original``, the cells holding it, and the functions whose
    code holds it among its constants (they make a function of it when they run)."""
    held = gc.get_referrers(original)
    functions = [f for f in held if isinstance(f, FunctionType)]
    return functions, [c for c in held if isinstance(c, CellType)], makers


def _makers(wanted: set[int]) -> dict[int, list[FunctionType]]:
    """id of a wanted code -> the functions whose code holds it as a constant. Every
    function is looked at: gc stops tracking a tuple of code objects and strings (nothing
    in it can make a cycle), so ``gc.get_referrers`` does not find a code's ``co_consts``."""
    found: dict[int, list[FunctionType]] = {}
    for obj in gc.get_objects():
        # ``type``, not ``isinstance``: a dead weak proxy raises on its ``__class__``;
        # a function that is itself swapped writes its nested functions in its source
        if type(obj) is FunctionType and id(obj.__code__) not in wanted:
            for c in obj.__code__.co_consts:
                if id(c) in wanted and isinstance(c, CodeType):
                    found.setdefault(id(c), []).append(obj)
    return found


def _nested_codes(code: CodeType) -> Iterator[CodeType]:
    for c in code.co_consts:
        if isinstance(c, CodeType):
            yield c
            yield from _nested_codes(c)
