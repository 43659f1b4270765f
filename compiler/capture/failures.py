"""The one wording of a failure, for every entry point (``explore``, ``explore_cell``,
``%%compile``); the one check of how to compile is ``CompileSpec.check`` (``spec.py``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from compiler import _compat
from compiler.errors import CompileError, ExploreError, InputError
from compiler.link.user_code import (
    compiled_files,
    error_location,
    innermost_user_frame,
    is_user_file,
)
from compiler.model import Exploration, Options, SourceLoc


def classify_failure(
    exc: BaseException,
    *,
    target: str,
    options: Options,
    exploration: Exploration,
    rerun_eagerly: Callable[[], object] | None = None,
    cell: str = "",
) -> ExploreError:
    """What an exception raised while compiled code ran means, as an ``ExploreError``:
    the one wording of a failure, for ``explore``, ``explore_cell`` and ``%%compile``.

    ``CompileError`` when torch.compile itself failed: a graph break under
    ``fullgraph`` (``stage="dynamo"``), a dimension marked dynamic that the code
    specialised (``"dynamic"``), the backend (``"backend"``), or Dynamo on code
    that runs eagerly (``"run"``); ``InputError`` when the user's code raised
    (``"run"``) or, checked with ``rerun_eagerly`` when given, fails without
    torch.compile too (``"inputs"``). The message names the user line it happened at
    (``failure_location``). The error's ``exploration`` is ``exploration`` with the
    message recorded as a ``StageError``.

    Args:
        exc: what the compiled call raised.
        target: the name to show for what was compiled (``describe_target``).
        options: how it was compiled (``fullgraph``, ``backend``, ``wrapped``).
        exploration: what was recorded before the failure.
        rerun_eagerly: runs the target without torch.compile; omit it where running
            the code again would repeat its side effects.
        cell: the file name of the notebook cell that ran, if one did: the message
            then speaks of the cell, and of its lines as ``line N of the cell``.

    Example:
        >>> err = classify_failure(ValueError("boom"), target="f", options=Options(),
        ...                        exploration=Exploration(source="live"))
        >>> type(err).__name__, err.stage, str(err).split(".")[0]
        ('InputError', 'run', 'f raised ValueError: boom')
    """
    where = _at(failure_location(exc, exploration), cell)
    ran = "the cell" if cell else target
    first_line = _first_line(exc)
    # the notebook shows what was recorded under the cell; from Python it is on the error
    kept = "" if cell else " The stages recorded before the failure are on .exploration."

    def error(kind: type[ExploreError], stage: str, msg: str) -> ExploreError:
        return kind(msg, exploration=_with_error(exploration, stage, msg), stage=stage)

    if options.fullgraph and _compat.is_graph_break_error(exc):
        msg = (
            f"fullgraph=True, but Dynamo hit a graph break{where}: {first_line}. "
            "Remove fullgraph=True to let torch.compile split the graph there, or change the "
            f"code so Dynamo can trace it.{kept}"
        )
        return error(CompileError, "dynamo", msg)
    if _compat.is_backend_failure(exc):
        msg = (
            f"the {options.backend!r} backend failed while compiling {target}{where}: "
            f"{first_line}. Try backend='aot_eager' to see whether the problem is in "
            f"AOTAutograd or in the backend.{kept}"
        )
        return error(CompileError, "backend", msg)
    if _compat.is_constraint_violation(exc):
        msg = (
            f"a dimension marked dynamic was specialised while compiling {target}{where}: "
            f"{first_line.rstrip('.')}. The code branches on (or needs) that size, so it "
            "cannot stay symbolic: use torch._dynamo.maybe_mark_dynamic instead of "
            f"mark_dynamic, or remove the mark.{kept}"
        )
        return error(CompileError, "dynamic", msg)
    if not _compat.is_dynamo_error(exc):
        # torch.compile ran the user's code and it raised: report it as theirs, without
        # running it again (a second run would repeat its prints and side effects).
        msg = (
            f"{ran} raised {type(exc).__name__}{where}: {first_line}. The error comes from "
            f"your code as it ran with torch.compile; fix it and run again.{kept}"
        )
        return error(InputError, "run", msg)
    if rerun_eagerly is not None:
        try:
            rerun_eagerly()
        except Exception as eager_exc:
            compiled = compiled_files(exploration.compiles)
            eager_where = _at(innermost_user_frame(eager_exc.__traceback__, compiled), cell)
            msg = (
                f"{ran} fails on these inputs even without torch.compile: "
                f"{type(eager_exc).__name__}{eager_where}: {_first_line(eager_exc)}. "
                f"Fix the inputs or the code so that it runs eagerly first.{kept}"
            )
            return error(InputError, "inputs", msg)
    eager_note = ". It runs eagerly, so the failure comes from torch.compile"
    msg = (
        f"{ran} raised {type(exc).__name__} under torch.compile{where}: {first_line}"
        f"{eager_note if rerun_eagerly is not None else ''}.{kept}"
    )
    return error(CompileError, "run", msg)


def failure_location(exc: BaseException, exploration: Exploration) -> SourceLoc | None:
    """The user line a failure happened at: the last graph break's, else the last user
    frame Dynamo names (``from user code:``), else the innermost user frame of the
    traceback (``is_user_file``); None if there is none.

    Example:
        >>> failure_location(ValueError("boom"), Exploration(source="live")) is None
        True
    """
    if exploration.graph_breaks and exploration.graph_breaks[-1].location is not None:
        return exploration.graph_breaks[-1].location
    compiled = compiled_files(exploration.compiles)
    loc = error_location(exc)
    if loc is not None and is_user_file(loc.filename, compiled):
        return loc
    return innermost_user_frame(exc.__traceback__, compiled)


def _at(loc: SourceLoc | None, cell: str) -> str:
    if loc is None:
        return ""
    return f" at line {loc.line} of the cell" if cell and loc.filename == cell else f" at {loc}"


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [""])[0]


def _with_error(exploration: Exploration, stage: str, message: str) -> Exploration:
    from compiler.model import StageError

    return dataclasses.replace(
        exploration, errors=(*exploration.errors, StageError(stage=stage, message=message))
    )
