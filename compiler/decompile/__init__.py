"""Our decompiler for the code Dynamo writes: Python 3.10 to 3.13 bytecode back to source.

Dynamo replaces a frame's bytecode with code that calls the compiled graph, unpacks its
outputs, restores side effects and, at a graph break, runs the eager part and calls the
resume function. ``decompile`` writes that code as a ``def`` that parses and, compiled
in the frame's globals (``as_function``), computes what the transformed code computes.
It reads the straight-line, branching and ``for``-loop code Dynamo generates; what it
cannot write (a ``while`` loop, a constant with no source form) raises ``DecompileError``
with the reason. A function the code makes (``MAKE_FUNCTION`` over a nested code constant:
a ``def`` or lambda of the user's, a resume function Dynamo makes with a closure) is
decompiled too and written as a nested ``def``. ``verify.check`` runs a program on the
decompiled code.
"""

from __future__ import annotations

import ast
import sys
import textwrap
from collections.abc import Mapping
from types import CodeType, FunctionType
from typing import Any

from compiler.decompile import ops
from compiler.decompile.machine import DecompileError, Machine
from compiler.decompile.tidy import readable_builtins, readable_imports, tidy

__all__ = ["DecompileError", "as_function", "decompile", "function_name"]


def decompile(code: CodeType, *, nested: Mapping[CodeType, CodeType] | None = None) -> str:
    """Source of a ``def`` that does what ``code`` does.

    ``nested`` maps a code object the code makes a function of to the code to write for
    it instead (Dynamo's transformed code of that function's frame: ``verify`` checks it).

    Example:
        >>> def f(x):
        ...     y = x + 1
        ...     return y * 2 if x else y
        >>> print(decompile(f.__code__))
        def f(x):
            y = x + 1
            if x:
                return y * 2
            else:
                return y
    """
    try:
        return _decompile(code, nested or {})
    except DecompileError:
        raise
    except Exception as exc:  # a rule that does not fit this bytecode: say which
        raise DecompileError(
            f"decompiler bug on {code.co_name}: {type(exc).__name__}: {exc}"
        ) from exc


def _decompile(code: CodeType, nested: Mapping[CodeType, CodeType]) -> str:
    source = ast.unparse(ast.fix_missing_locations(function_def(code, nested)))
    try:
        ast.parse(source)
    except SyntaxError as exc:  # a rule above wrote something Python does not read
        raise DecompileError(f"the decompiled source does not parse: {exc}") from exc
    return source


def function_def(code: CodeType, nested: Mapping[CodeType, CodeType]) -> ast.FunctionDef:
    """The tidied ``def`` of ``code`` as a syntax tree (a nested function's too)."""
    machine = Machine(code, nested)
    signature = ops.signature(code)
    params = {a.arg for a in ast.walk(signature) if isinstance(a, ast.arg)}
    # unparse and parse again: the machine shares nodes between the arms of an ``if``,
    # and tidy rewrites nodes in place
    written = ast.unparse(ast.Module(body=machine.body(), type_ignores=[]))
    body = ast.parse(written).body
    if machine.globals_written:
        body.insert(0, ast.Global(names=sorted(machine.globals_written)))
    extra: dict[str, Any] = {"type_params": []} if sys.version_info >= (3, 12) else {}
    fn = ast.FunctionDef(
        name=function_name(code),
        args=signature,
        body=body,
        decorator_list=[],
        returns=None,
        lineno=1,
        **extra,
    )
    readable_imports(fn)
    readable_builtins(fn)
    fn.body = tidy(fn.body, params)
    return fn


def function_name(code: CodeType) -> str:
    """The name the decompiled ``def`` gets: the code's own, where it is an identifier."""
    return code.co_name if code.co_name.isidentifier() else "_decompiled"


def as_function(
    source: str, code: CodeType, globals_: dict[str, Any], closure: tuple[Any, ...] = ()
) -> FunctionType:
    """The decompiled ``source`` of ``code`` as a function running in ``globals_`` (the
    frame's globals, which hold Dynamo's compiled graphs and resume functions), with the
    values of ``code``'s free variables from ``closure`` (cells or plain values).

    Example:
        >>> def f(x):
        ...     return x + 1
        >>> as_function(decompile(f.__code__), f.__code__, {})(1)
        2
    """
    filename = f"<decompiled {code.co_name}>"
    free = code.co_freevars
    namespace: dict[str, Any] = {}
    if not free:
        exec(compile(source, filename, "exec"), globals_, namespace)
        found: FunctionType = namespace[function_name(code)]
        return found
    values = [getattr(c, "cell_contents", c) for c in closure]
    inner = textwrap.indent(source, "    ")
    outer = f"def __outer({', '.join(free)}):\n{inner}\n    return {function_name(code)}\n"
    tree = ast.parse(outer)
    inner_def = tree.body[0].body[0]  # type: ignore[attr-defined]
    stored = {
        n.id
        for n in ast.walk(inner_def)
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) and n.id in free
    }
    if stored:
        inner_def.body.insert(0, ast.Nonlocal(names=sorted(stored)))
    # read every free variable in code that never runs, so the function's closure has the
    # original's cells, in the original's (sorted) order
    names = ast.Tuple(elts=[ast.Name(id=n, ctx=ast.Load()) for n in free], ctx=ast.Load())
    inner_def.body.append(ast.If(test=ast.Constant(False), body=[ast.Expr(names)], orelse=[]))
    exec(compile(ast.fix_missing_locations(tree), filename, "exec"), globals_, namespace)
    made: FunctionType = namespace["__outer"](*values)
    return made
