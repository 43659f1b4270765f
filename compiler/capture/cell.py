"""``explore_cell``: run a notebook cell's code with what it compiles recorded.

Two cell shapes:

- a snippet of tensor code (``target=None``) is compiled as a function of the notebook
  variables it reads, godbolt-style: tensors, modules and numbers it reads become the
  function's parameters, its assignments go back to the notebook and its last
  expression is the cell's value (``snippet.py``);
- a cell that defines functions or ``nn.Module`` classes and calls them runs as it is,
  with ``target`` (a function, an ``nn.Module`` or an ``nn.Module`` class, defined in
  the cell or earlier) compiled while the cell runs, then put back.

The caller parses the cell and keeps its source where tracebacks, ``inspect`` and
Dynamo find it (IPython's compiler cache does, under the cell's file name); it may hand
in how to compile and run code (IPython's ``shell.compile`` and ``shell.ev``), so the
cell runs as any other cell of the notebook does.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import CodeType
from typing import Any

from compiler.capture.explore import record_run
from compiler.capture.observe import Observation, observe
from compiler.capture.snippet import OUT_SLOT, UNBOUND, snippet_function
from compiler.capture.spec import CompileSpec
from compiler.errors import TargetError
from compiler.model import Exploration

__all__ = ["CellRun", "definitions", "explore_cell"]


@dataclass(frozen=True, kw_only=True, slots=True)
class CellRun:
    """What a cell left: the Exploration of its compiles and its last value.

    ``has_value``: the cell ends in an expression, whose value is ``value`` (the
    cell's result, to show as a notebook shows a cell's last value).
    """

    exploration: Exploration
    value: Any = None
    has_value: bool = False


def definitions(tree: ast.Module) -> dict[str, int]:
    """Top-level def/class names of the cell, each with the index of its last definition.

    Example:
        >>> definitions(ast.parse("def f(): pass\\nclass A: pass\\nf()"))
        {'f': 0, 'A': 1}
    """
    defs: dict[str, int] = {}
    for i, stmt in enumerate(tree.body):
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defs.pop(stmt.name, None)
            defs[stmt.name] = i
    return defs


def explore_cell(
    tree: ast.Module,
    filename: str,
    namespace: dict[str, Any],
    *,
    target: str | None = None,
    name: str = "cell",
    spec: CompileSpec | None = None,
    reset: bool = False,
    decompile: bool = True,
    compile_code: Callable[[ast.Module | ast.Expression, str, str], CodeType] = compile,
    run_code: Callable[[CodeType], Any] | None = None,
) -> CellRun:
    """Run a cell's code with every compile it triggers recorded.

    Args:
        tree: the cell's statements (IPython syntax already translated).
        filename: the file name the cell's source is kept under (``linecache``).
        namespace: the notebook's variables; the cell reads and assigns them.
        target: the name to compile while the cell runs; None compiles the cell itself
            as a function of what it reads (its name is then ``name``).
        spec: how to compile (default: ``CompileSpec()``, torch.compile's defaults).
        reset, decompile: as in ``explore``. Without ``reset`` every compile of the
            cell's run (the cell or its target, and compiled functions or modules of
            earlier cells that the cell calls) uses a backend of its own and its cache
            entries are dropped after the cell (one observation,
            ``compiler.capture.observe``), so functions compiled earlier keep theirs
            untouched and do not compile again; torch's eager mark on the target after a
            failed compile is lifted for the cell and put back, and Dynamo's record of
            seen sizes is set aside for the cell. The cell runs once (classifying a
            failure runs it again eagerly, its state saved and put back). What capture
            changes (log handlers, a few config flags, a bytecode hook) is restored after
            the cell, also when it raises; a failure of the explorer's own work is in the
            Exploration's errors, never in the cell's run.
        compile_code: compiles a module or expression (``compile``'s arguments).
        run_code: runs a compiled module or expression and returns its value (by
            default ``eval`` in ``namespace``).

    Returns:
        The Exploration and the cell's last value.

    Raises:
        OptionError: unknown backend, mode or Inductor option (nothing ran).
        TargetError: ``target`` is missing or not a function, module or module class.
        InputError, CompileError: the cell failed (``classify_failure``, speaking of
            the cell and its lines); ``.exploration`` holds what was recorded before.

    Example:
        >>> import torch
        >>> ns = {"torch": torch, "x": torch.ones(3)}
        >>> run = explore_cell(ast.parse("y = x.sin()\\ny + 1"), "<cell>", ns,
        ...                    spec=CompileSpec(backend="eager"))
        >>> run.exploration.compiles[0].code_name, run.has_value, "y" in ns
        ('cell', True, True)
    """
    import torch

    how = (spec or CompileSpec()).check()
    opts = how.record()
    keep_caches = how.keep_caches
    run = run_code or (lambda code: eval(code, namespace))
    # as exec and eval would: the snippet's function reads its builtins from its globals
    namespace.setdefault("__builtins__", builtins)
    if target is None:
        fn, params, bound, has_value = snippet_function(tree, filename, name, namespace,
                                                        compile_code)  # fmt: skip
        args = [namespace[p] for p in params]
        device = next((a.device.type for a in args if isinstance(a, torch.Tensor)), "")
        namespace.pop(OUT_SLOT, None)
        try:
            with observe(fn, tuple(args), wrap=True, reset=reset) as obs:
                compiled = obs.compiled(how, fn)

                def eagerly() -> object:
                    # classifying a failure calls the cell again
                    with obs.extra_calls(), torch.no_grad():
                        return fn(*args)

                exploration = record_run(
                    lambda: compiled(*args), target=name, options=opts, keep_caches=keep_caches,
                    decompile=decompile, device=device, rerun_eagerly=eagerly, cell=filename,
                    boundary=obs.boundary,
                )  # fmt: skip
        finally:
            out = namespace.pop(OUT_SLOT, None)
        exploration = obs.finish(exploration)
        if out is None:  # nothing ran (Dynamo skipped the frame and so did the cell)
            return CellRun(exploration=exploration)
        value, values = out
        namespace.update((k, v) for k, v in zip(bound, values, strict=True) if v is not UNBOUND)
        return CellRun(exploration=exploration, value=value, has_value=has_value)

    split = definitions(tree).get(target, -1) + 1
    head, tail = tree.body[:split], tree.body[split:]
    last = tail.pop() if tail and isinstance(tail[-1], ast.Expr) else None
    assert last is None or isinstance(last, ast.Expr)
    codes = [compile_code(ast.Module(part, []), filename, "exec") for part in (head, tail)]
    last_code = compile_code(ast.Expression(last.value), filename, "eval") if last else None
    result: list[Any] = []

    def run_cell() -> None:
        run(codes[0])
        with _compiled(target, namespace, how, obs):
            run(codes[1])
            if last_code is not None:
                result.append(run(last_code))

    compiled_target = namespace.get(target)
    if isinstance(compiled_target, type):  # a module class: its forward is compiled
        compiled_target = getattr(compiled_target, "forward", None)
    if not callable(compiled_target):  # not defined yet: the cell defines it
        compiled_target = run_cell
    with observe(compiled_target, (), wrap=True, reset=reset) as obs:
        exploration = record_run(run_cell, target=target, options=opts, keep_caches=keep_caches,
                                 decompile=decompile, cell=filename,
                                 boundary=obs.boundary)  # fmt: skip
    return CellRun(exploration=obs.finish(exploration), value=result[0] if result else None,
                   has_value=bool(result))  # fmt: skip


@contextlib.contextmanager
def _compiled(
    target: str, ns: dict[str, Any], spec: CompileSpec, obs: Observation
) -> Iterator[None]:
    """``ns[target]`` compiled with torch.compile while the block runs, then as it was
    (the observation's compile, its cache entries dropped)."""
    import torch

    if target not in ns:
        msg = f"{target} is not defined: define it in the cell or an earlier one, then run again."
        raise TargetError(msg)
    obj = ns[target]
    if isinstance(obj, type) and issubclass(obj, torch.nn.Module):
        had_own = "forward" in obj.__dict__
        original = obj.__dict__.get("forward")
        compiled_forward = obs.compiled(spec, obj.forward)
        obj.forward = compiled_forward
        try:
            yield
        finally:
            obs.evict(compiled_forward)
            if had_own:
                obj.forward = original  # type: ignore[assignment]
            else:
                del obj.forward
        return
    if isinstance(obj, type) or not callable(obj):
        what = "class that is not an nn.Module" if isinstance(obj, type) else type(obj).__name__
        msg = f"{target} is a {what}; compile a function, an nn.Module or an nn.Module class."
        raise TargetError(msg)
    compiled = obs.compiled(spec, obj)
    ns[target] = compiled
    try:
        yield
    finally:
        obs.evict(compiled)
        if ns.get(target) is compiled:
            ns[target] = obj
