"""``observe``: how the explorer watches the user's program, changing nothing of theirs and
breaking nothing of theirs. Every entry point that runs the user's code (``explore``,
``%%compile``, ``try_fixes``, ``compare``, ``explore_export``, ``explore_aoti``; the live
worker through ``explore``) does it inside one ``Observation``:

- its compiles go beside the process's own: ``compiled`` compiles with a backend of its
  own (``CompileSpec.compile_fresh``), every compiled call of the block compiles with a
  backend of the block's (``own_compiles``), torch's eager marks are lifted from the
  observed code and put back, Dynamo's record of seen sizes is set aside, and on exit the
  block's cache entries are dropped; nothing resets the process unless ``reset=True``;
- ``extra_calls`` saves what the target reaches before calls the user did not make and
  puts it back after (``compiler.capture.state``);
- ``boundary`` is where the explorer's own failures stop (recording hooks, parsing,
  linking, profiling, timing, restoring): each becomes a ``StageError`` with its
  traceback, and the user's run goes on as a plain run would.

The observation's state (the fresh compiles to drop, what was lifted, the saved state)
lives in it, not in the module: two observations never share anything.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compiler._compat import converted_codes
from compiler.capture.state import Snapshot, compiled_reachable, recompile_user_code, snapshot
from compiler.model import Exploration, StageError

if TYPE_CHECKING:
    from compiler._compat import OwnCompiles
    from compiler.capture.spec import CompileSpec

__all__ = ["Boundary", "Observation", "observe"]

_COMPILER = Path(__file__).resolve().parent.parent


class Boundary:
    """Where the explorer's own failures stop: each is kept as a ``StageError`` (the stage,
    one sentence, the traceback) and nothing of it reaches the user's program.

    ``stage`` names what was being done; where the failure came from a room of
    ``compiler/`` other than ``capture`` (``parse``, ``link``, ``profile``, ``gpu``,
    ``advise``), the error names that room. A failure repeated (a hook called per event)
    is kept once, with how often it happened.

    Example:
        >>> boundary = Boundary()
        >>> with boundary.guard("timing"):
        ...     _ = 1 / 0
        >>> [(e.stage, e.traceback.splitlines()[-1]) for e in boundary.take()]
        [('timing', 'ZeroDivisionError: division by zero')]
    """

    def __init__(self) -> None:
        self._errors: dict[tuple[str, str], tuple[StageError, int]] = {}

    def caught(self, stage: str, exc: BaseException) -> None:
        """Keep ``exc``, raised by the explorer's own ``stage`` step."""
        error = StageError.caught(_room_of(exc) or stage, exc)
        key = (error.stage, error.message)
        first, times = self._errors.get(key, (error, 0))
        self._errors[key] = (first, times + 1)

    @contextlib.contextmanager
    def guard(self, stage: str) -> Iterator[None]:
        """Run the block; an ``Exception`` it raises is kept, not raised. Only for blocks
        that run none of the user's code (the user's exceptions must pass)."""
        try:
            yield
        except Exception as exc:
            self.caught(stage, exc)

    def hook(self, stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` as a callback torch calls while the user's code runs (a log handler, the
        bytecode hook): a failure of it is kept and the callback returns None."""

        @functools.wraps(fn)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                self.caught(stage, exc)
                return None

        return guarded

    @contextlib.contextmanager
    def around(self, stage: str, manager: contextlib.AbstractContextManager[Any]) -> Iterator[Any]:
        """The block inside ``manager`` (the explorer's own, such as a profiler) where it can
        be entered: where entering fails the block runs without it (and yields None); where
        leaving fails, the block's own outcome (its value, or what the user's code raised)
        stands and the failure is kept."""
        try:
            value = manager.__enter__()
        except Exception as exc:
            self.caught(stage, exc)
            yield None
            return
        try:
            yield value
        except BaseException:
            try:
                suppressed = manager.__exit__(*sys.exc_info())
            except Exception as exc:
                self.caught(stage, exc)
                suppressed = False
            if not suppressed:
                raise
        else:
            try:
                manager.__exit__(None, None, None)
            except Exception as exc:
                self.caught(stage, exc)

    def take(self) -> list[StageError]:
        """The failures kept so far (and forgotten here), each once."""
        found = self.kept()
        self._errors.clear()
        return found

    def kept(self) -> list[StageError]:
        """The failures kept so far, each once (still kept)."""
        return [
            error if times == 1 else dataclasses.replace(
                error, message=f"{error.message} It happened {times} times."
            )
            for error, times in self._errors.values()
        ]  # fmt: skip


def _room_of(exc: BaseException) -> str:
    """The room of ``compiler/`` (other than ``capture``) of the innermost of our frames
    ``exc`` passed through: ``parse``, ``profile``, ... ("" where there is none)."""
    room = ""
    tb = exc.__traceback__
    while tb is not None:
        path = Path(tb.tb_frame.f_code.co_filename)
        if _COMPILER in path.parents:
            part = path.relative_to(_COMPILER).parts[0].removesuffix(".py")
            room = "" if part in ("capture", "_compat") else part
        tb = tb.tb_next
    return {"advise": "advisor", "gpu": "timing"}.get(room, room)


class Observation:
    """One observation of the user's program (``observe`` makes it; use it as a context
    manager). Read ``notes`` and call ``finish`` on the Exploration after the block."""

    def __init__(
        self,
        target: Any,
        inputs: tuple[Any, ...] = (),
        kwargs: Mapping[str, Any] | None = None,
        *,
        wrap: bool = True,
        reset: bool = False,
        isolate: bool = True,
        boundary: Boundary | None = None,
    ) -> None:
        self.target, self.inputs, self.kwargs = target, inputs, dict(kwargs or {})
        self.wrap, self.reset, self.isolate = wrap, reset, isolate
        self.boundary = boundary or Boundary()
        self.notes: list[str] = []
        self.own: OwnCompiles | None = None
        self._fresh: list[tuple[Any, object]] = []
        self._exit = contextlib.ExitStack()
        self._converted: list[Any] = []  # held: their ids stay theirs until the exit

    def __enter__(self) -> Observation:
        if self.reset:
            import torch

            torch.compiler.reset()
            return self
        with self.boundary.guard("isolation"):
            self._converted = converted_codes()
        if self.isolate:
            try:
                self.own = self._exit.enter_context(self._own_compiles())
            except Exception as exc:  # torch's internals moved: record, observe without
                self.boundary.caught("isolation", exc)
        return self

    def __exit__(self, *exc_info: object) -> None:
        for compiled, _ in list(self._fresh):
            self.evict(compiled)
        try:
            self._exit.close()
        except Exception as exc:
            self.boundary.caught("restore", exc)
        with self.boundary.guard("isolation"):
            now = {id(code) for code in converted_codes()}
            if any(id(code) not in now for code in self._converted):
                self.notes.append(
                    "Dynamo was reset during this capture by torch itself (strict torch.export "
                    "resets Dynamo, with or without the explorer): functions compiled before it "
                    "compile again on their next call."
                )
        self._converted = []
        if self.own is not None and self.own.failed:
            self.notes.append(
                "Putting the process back after the capture was incomplete: "
                + "; ".join(self.own.failed)
                + "."
            )
        if self.own is not None and self.own.marks_undone:
            self.notes.append(
                f"{self.own.marks_undone} code(s) the capture failed or skipped to compile were "
                "marked by torch to run eagerly; the marks were taken back after the capture, so "
                "the process compiles them as it did before."
            )

    def compiled(self, spec: CompileSpec, fn: Any) -> Any:
        """``fn`` compiled as ``spec`` says, beside the user's compiles (a backend equal to
        no other, its own recompile region), its entries dropped when the block ends (or
        by ``evict``). With ``reset=True`` it is a plain ``torch.compile``."""
        if self.reset or spec.backend is None:
            return spec.compile(fn)
        try:
            compiled, backend = spec.compile_fresh(fn)
        except Exception as exc:  # torch's internals moved: a plain compile, said so
            self.boundary.caught("isolation", exc)
            return spec.compile(fn)
        self._fresh.append((compiled, backend))
        return compiled

    def evict(self, compiled: Any) -> int:
        """Drop the cache entries of a ``compiled`` result now (0 for anything else)."""
        from compiler import _compat

        for i, (held, backend) in enumerate(self._fresh):
            if held is compiled:
                del self._fresh[i]
                with self.boundary.guard("restore"):
                    return _compat.evict_backend(backend)
                return 0
        return 0

    @contextlib.contextmanager
    def extra_calls(self) -> Iterator[Snapshot | None]:
        """Around calls of the target the user did not make (timing, classifying a
        failure, a fix): the state the target reaches is saved first and put back after,
        also when the block raises. None where saving failed (kept in ``boundary``)."""
        saved: Snapshot | None = None
        with self.boundary.guard("restore"):
            saved = snapshot(self.target, *self.inputs, **self.kwargs)
        try:
            yield saved
        finally:
            if saved is not None:
                with self.boundary.guard("restore"):
                    saved.restore()

    def finish(self, exploration: Exploration) -> Exploration:
        """``exploration`` with the observation's notes and the failures it kept, and each
        recompile's failed guard keyed by the path of the ``Source`` Dynamo built for it
        (``RecompileReason.source``)."""
        if self.own is not None and self.own.guard_paths:
            with self.boundary.guard("guard sources"):
                exploration = _with_guard_sources(exploration, self.own.guard_paths)
        errors = self.boundary.take()
        if not self.notes and not errors:
            return exploration
        return dataclasses.replace(
            exploration,
            notes=(*exploration.notes, *self.notes),
            errors=(*exploration.errors, *errors),
        )

    @contextlib.contextmanager
    def _own_compiles(self) -> Iterator[OwnCompiles]:
        """The block's compiles beside the process's own (``_compat.own_compiles``, the one
        use of it). Without that switch (an older torch), a ``wrap=False`` target's compiled
        functions have their entries dropped first and rebuilt by the run, as the notes say."""
        from compiler import _compat

        reached = [self.target] if self.wrap else compiled_reachable(self.target, *self.inputs)
        codes = [code for obj in reached for code in _compat.compiled_codes(obj)]
        with _compat.own_compiles(codes) as own:
            if not own.active and not self.wrap:
                dropped = recompile_user_code(reached)
                if dropped:
                    self.notes.append(
                        f"Dynamo's cache entries of {', '.join(dropped)} (compiled before this "
                        "capture) were dropped first so that their compiles are recorded; the "
                        "target's run compiled them again with their own backend, and later "
                        "calls use those."
                    )
            if own.active and not own.own_region:
                self.notes.append(
                    "This torch has no recompile regions (isolate_recompiles, torch 2.13+): the "
                    "capture's compiles of code the process compiled before are recompiles of "
                    "it and count toward its recompile limit; the process's own entries are kept."
                )
            if own.lacking:
                self.notes.append(
                    f"This torch lacks {', '.join(own.lacking)}, which the capture needs to "
                    "compile beside the process's own compiles: it recorded what the run "
                    "compiled without that isolation, and reset nothing."
                )
            if own.unmarked:
                self.notes.append(
                    f"torch had marked {', '.join(sorted(set(own.unmarked)))} to run eagerly "
                    "(an earlier compile of it failed or was skipped, e.g. called without "
                    "tensors); the mark was lifted for this capture and put back after it."
                )
            yield own


def _with_guard_sources(exploration: Exploration, guard_paths: Mapping[str, str]) -> Exploration:
    """Each recompile reason of ``exploration`` with the path of the guard it names, read
    from the live capture's guards (``OwnCompiles.guard_paths``), where one matches."""
    from compiler.parse.guards.recompiles import live_source
    from compiler.parse.guards.sources import printed_key

    paths: dict[str, str] = {}
    for text, path in guard_paths.items():
        paths.setdefault(printed_key(text), path)
    compiles = tuple(
        dataclasses.replace(c, recompile_reasons=tuple(
            dataclasses.replace(r, source=live_source(r.reason, paths) or r.source)
            for r in c.recompile_reasons
        )) if c.recompile_reasons else c
        for c in exploration.compiles
    )  # fmt: skip
    return dataclasses.replace(exploration, compiles=compiles)


def observe(
    target: Any,
    inputs: tuple[Any, ...] = (),
    kwargs: Mapping[str, Any] | None = None,
    *,
    wrap: bool = True,
    reset: bool = False,
    isolate: bool = True,
    boundary: Boundary | None = None,
) -> Observation:
    """An observation of ``target`` run on ``inputs`` (see the module's text).

    Args:
        target, inputs, kwargs: what the user's program calls; the state ``extra_calls``
            saves is what they reach.
        wrap: the explorer compiles ``target`` itself (its code's eager mark is lifted), or
            ``target`` calls compiled code itself (the marks of what it reaches are).
        reset: reset Dynamo for the whole process first (the user asked for it); nothing
            is then isolated or dropped.
        isolate: give every compiled call of the block a backend of its own. Off where the
            explorer's own compiles are the only ones and their calls are timed (``compare``:
            the switch costs a little on every compiled call).
        boundary: where its failures are kept, to share one between observations (the
            runs of ``try_fixes``); by default its own, which ``finish`` reports.

    Example:
        >>> import torch
        >>> from compiler.capture.spec import CompileSpec
        >>> f = torch.compile(torch.sin, backend="eager")
        >>> _ = f(torch.ones(2))
        >>> with observe(torch.sin, (torch.ones(2),)) as obs:
        ...     g = obs.compiled(CompileSpec(backend="eager"), torch.sin)
        ...     _ = g(torch.ones(2)), f(torch.ones(2))
        >>> obs.own.active, obs.finish(Exploration(source="live")).errors
        (True, ())
    """
    return Observation(target, inputs, kwargs, wrap=wrap, reset=reset, isolate=isolate,
                       boundary=boundary)  # fmt: skip

