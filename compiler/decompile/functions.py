"""Functions the code makes, generators and 3.12's inlined comprehensions.

``MAKE_FUNCTION`` over a nested code constant (a ``def`` or lambda of the user's, a
comprehension's or generator expression's function before 3.12, a resume function torch
2.11's Dynamo makes with a closure) becomes a nested ``def``, or a ``lambda``, decompiled in
turn. A generator's ``yield`` is written as one. Python 3.12 inlines a comprehension into
its function (PEP 709): ``GET_ITER``, the comprehension variable saved with
``LOAD_FAST_AND_CLEAR``, the new list, ``FOR_ITER``; it becomes a ``for`` loop that fills a
named list, and the variable's restore after it is dropped (the loop's variable stays
bound after the loop, where the comprehension's would have been restored).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from types import CodeType

from compiler.decompile import ops
from compiler.decompile.containers import ContainerOps
from compiler.decompile.ops import Instr
from compiler.decompile.stack import Arm, DecompileError, SymList, Value, const, name
from compiler.decompile.tidy import is_temporary

__all__ = ["FunctionOps"]

_STORES = ("STORE_FAST", "STORE_DEREF", "STORE_NAME")


class FunctionOps(ContainerOps):
    """The opcodes above, for ``Machine``, which runs the ``for`` loops."""

    instrs: list[Instr]
    nested: Mapping[CodeType, CodeType]
    saved: set[int]  # ids of the nodes LOAD_FAST_AND_CLEAR pushed

    def _loop(self, iterable: Value, head: Instr, arm: Arm) -> int:
        raise NotImplementedError  # Machine's

    def restores(self, v: Value, target: str) -> bool:
        """Whether storing ``v`` in ``target`` only restores what a comprehension saved."""
        return id(v.node) in self.saved and isinstance(v.node, ast.Name) and v.node.id == target

    def op_LOAD_FAST_AND_CLEAR(self, ins: Instr, arm: Arm) -> None:
        # the comprehension's variable, saved to be restored after it: pure and reading no
        # name, so that the loop's stores to the variable never make it be evaluated
        node = ast.Name(id=ops.local_name(ins.argval), ctx=ast.Load())
        self.saved.add(id(node))
        arm.stack.append(Value(node, pure=True))

    def op_FOR_ITER(self, ins: Instr, arm: Arm) -> int:
        """A loop whose iterator GET_ITER made further back (3.12's inlined comprehension;
        a comprehension's own function, whose argument is the iterator)."""
        iterator = self.pop(arm)
        for i, slot in enumerate(arm.stack):  # what the body fills is a named container
            if isinstance(slot, SymList) and slot.name is None:
                arm.stack[i] = self.escape(arm, slot)
            elif isinstance(slot, Value) and slot.fresh:
                arm.stack[i] = self.spill(arm, slot)
        node = iterator.node
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "iter"
            and len(node.args) == 1
        ):
            node = node.args[0]  # ``for v in iter(x)`` is ``for v in x``
        return self._loop(Value(node), ins, arm)

    def op_RETURN_GENERATOR(self, ins: Instr, arm: Arm) -> None:
        arm.stack.append(const(None))  # popped at once: the generator starts here

    def op_YIELD_VALUE(self, ins: Instr, arm: Arm) -> None:
        v = self.pop(arm)
        self.emit(arm, ast.Expr(value=ast.Yield(value=v.node)))
        arm.stack.append(const(None))  # what is sent in: a generator expression drops it

    def op_MAKE_FUNCTION(self, ins: Instr, arm: Arm) -> int:
        """A nested ``def`` (or ``lambda``) of the code constant, decompiled in turn, with
        its defaults; its closure must be the cells of the names it reads, which the
        nested ``def`` then closes over by itself."""
        at = ins.index + 1
        if sys.version_info >= (3, 13):  # the attributes follow as SET_FUNCTION_ATTRIBUTE
            flags = 0
            while at < len(self.instrs) and self.instrs[at].opname == "SET_FUNCTION_ATTRIBUTE":
                flags |= int(self.instrs[at].arg or 0)
                at += 1
        else:
            flags = int(ins.arg or 0)
        if sys.version_info < (3, 11):
            self.pop(arm)  # the qualified name
        made = self.pop(arm)
        if not (isinstance(made.node, ast.Constant) and isinstance(made.node.value, CodeType)):
            raise DecompileError(f"MAKE_FUNCTION of no code constant at offset {ins.offset}")
        code: CodeType = made.node.value
        closure = self.pop(arm) if flags & 0x08 else None
        if flags & 0x04:
            self.pop(arm)  # annotations: the nested def is written without them
        kwdefaults = self.pop(arm) if flags & 0x02 else None
        defaults = self.pop(arm) if flags & 0x01 else None
        _check_closure(code, closure)
        written = self.nested.get(code, code)
        if written.co_freevars != code.co_freevars:
            raise DecompileError(f"the transformed {code.co_name} reads other free variables")
        fn = _nested_def(written, self.nested)
        if defaults is not None:
            fn.args.defaults = _elements(defaults.node)
        if kwdefaults is not None:
            fn.args.kw_defaults = _keyword_defaults(fn.args, kwdefaults.node)
        body = fn.body
        if code.co_name == "<lambda>" and len(body) == 1 and isinstance(body[0], ast.Return):
            value = body[0].value or ast.Constant(None)
            arm.stack.append(Value(ast.Lambda(args=fn.args, body=value)))
            return at
        store = self.instrs[at] if at < len(self.instrs) else None
        if store is not None and store.opname in _STORES:
            fn.name, at = store.argval, at + 1  # ``def g`` rather than ``_v1 = ...; g = _v1``
        else:  # its own name (a resume function's reads best), ``_genexpr`` for <genexpr>
            fn.name = self.fresh_name(_def_name(code))
        self.emit(arm, fn, writes=frozenset({fn.name}))
        if fn.name != _store_name(store):
            arm.stack.append(name(fn.name))
        return at


def _store_name(ins: Instr | None) -> str | None:
    if ins is None or ins.opname not in _STORES:
        return None
    return str(ins.argval)


def _def_name(code: CodeType) -> str:
    if code.co_name.isidentifier():
        return code.co_name
    return "_" + "".join(c for c in code.co_name if c.isalnum() or c == "_")


def _nested_def(code: CodeType, nested: Mapping[CodeType, CodeType]) -> ast.FunctionDef:
    from compiler.decompile import function_def  # the package decompiles; this module runs

    try:
        fn = function_def(code, nested)
    except DecompileError as exc:  # say which function: the frame's own code may be fine
        raise DecompileError(f"the nested function {code.co_name}: {exc}") from exc
    # the nested def's temporaries, renamed so that the enclosing def's tidy leaves them be
    suffix = "_" + _def_name(code).lstrip("_")
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and is_temporary(node.id):
            node.id += suffix
    return fn


def _check_closure(code: CodeType, closure: Value | None) -> None:
    """The closure tuple must hold the cells of the very names the code reads freely:
    then a nested ``def`` in the decompiled source closes over the same variables."""
    free = code.co_freevars
    if closure is None:
        if free:
            raise DecompileError(f"the nested {code.co_name} reads {free} with no closure")
        return
    cells = closure.node.elts if isinstance(closure.node, ast.Tuple) else None
    names = [
        c.value.value.body.id
        for c in cells or []
        if isinstance(c, ast.Subscript)
        and isinstance(c.value, ast.Attribute)
        and isinstance(c.value.value, ast.Lambda)
        and isinstance(c.value.value.body, ast.Name)
    ]
    if cells is None or tuple(names) != free:
        raise DecompileError(
            f"the nested {code.co_name}'s closure is not the cells of {free}, the names it reads"
        )


def _elements(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.Tuple):
        return list(node.elts)
    if isinstance(node, ast.Constant) and isinstance(node.value, tuple):
        return [ast.Constant(value=v) for v in node.value]
    raise DecompileError("a nested function's defaults that are not a tuple")


def _keyword_defaults(args: ast.arguments, node: ast.expr) -> list[ast.expr | None]:
    if not isinstance(node, ast.Dict):
        raise DecompileError("a nested function's keyword defaults that are not a dict")
    given = {}
    for k, v in zip(node.keys, node.values, strict=True):
        if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
            raise DecompileError("a nested function's keyword default without a name")
        given[k.value] = v
    return [given.get(a.arg) for a in args.kwonlyargs]
