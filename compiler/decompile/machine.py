"""A symbolic stack machine: runs bytecode on expressions instead of values.

Each stack slot holds the Python expression that computed it (an ``ast`` node). An
instruction with an effect (a store, a call whose result is dropped, a return) becomes a
statement. A conditional jump becomes an ``if``/``else`` whose two arms run on, each with
its own copy of the stack, to their own ``return`` (code after a merge is written in both
arms). ``GET_ITER``/``FOR_ITER`` becomes a ``for`` loop (Dynamo restores a dict with one);
other loops raise ``DecompileError``: Dynamo does not transform a frame whose loop breaks
the graph. Where an expression would be evaluated
later, or more than once, than the bytecode evaluated it (a COPY, a SWAP, a statement
between), it is first assigned to a temporary ``_vN``; ``tidy`` inlines what it can again.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from dataclasses import replace
from types import CodeType
from typing import Any, cast

from compiler.decompile import ops
from compiler.decompile.functions import FunctionOps
from compiler.decompile.ops import Instr
from compiler.decompile.stack import (
    END,
    NULL,
    Arm,
    DecompileError,
    Null,
    Slot,
    SymList,
    Value,
    assign,
    attr,
    call,
    const,
    derived,
    name,
)

__all__ = ["DecompileError", "Machine"]

_BRANCH_BUDGET = 20_000  # instructions run across all arms; beyond it, give up
_JUMPS = frozenset(
    {"JUMP_FORWARD", "JUMP_ABSOLUTE", "JUMP", "JUMP_NO_INTERRUPT", "JUMP_BACKWARD"}
    | {"JUMP_BACKWARD_NO_INTERRUPT"}
)
# what a for loop keeps on the stack below its item: never written out
_ITERATOR = Value(ast.Name(id="_iterator", ctx=ast.Load()), pure=True)


class Machine(FunctionOps):
    """Decompiles one code object's body into statements."""

    def __init__(self, code: CodeType, nested: Mapping[CodeType, CodeType] | None = None) -> None:
        super().__init__(code)
        self.code = code
        self.nested = nested or {}  # a nested code constant -> the code to write for it
        self.saved = set()
        self.instrs = ops.instructions(code)
        self.budget = _BRANCH_BUDGET
        self.globals_written: set[str] = set()
        self.loops: list[tuple[int, int]] = []  # (FOR_ITER index, exit index), innermost last
        cells = set(code.co_cellvars) | set(code.co_freevars)
        self.cells = cells if sys.version_info >= (3, 13) else set()

    def body(self) -> list[ast.stmt]:
        return self._run(0, Arm(stack=[]))

    # --- running ----------------------------------------------------------------
    def _run(self, index: int, arm: Arm) -> list[ast.stmt]:
        while index < len(self.instrs):
            self.budget -= 1
            if self.budget < 0:
                raise DecompileError("too many branches to write out")
            if self.loops and index in (self.loops[-1][0], self.loops[-1][1]):
                # back to the loop's head, or out past its end, from inside its body
                done = ast.Continue() if index == self.loops[-1][0] else ast.Break()
                self.emit(arm, done)
                return arm.body
            ins = self.instrs[index]
            nxt = self._step(ins, arm)
            if nxt is END:
                return arm.body
            index = nxt if isinstance(nxt, int) else index + 1
        raise DecompileError("the code runs off its end")

    def _branch(
        self, arm: Arm, test: ast.expr, then: tuple[int, list[Slot]], other: tuple[int, list[Slot]]
    ) -> None:
        """``if test:`` running on at ``then``, ``else:`` at ``other`` (index, stack)."""
        self.settle(arm)
        yes = self._run(then[0], Arm(stack=list(then[1])))
        no = self._run(other[0], Arm(stack=list(other[1])))
        arm.body.append(ast.If(test=test, body=yes or [ast.Pass()], orelse=no))

    def _step(self, ins: Instr, arm: Arm) -> int | object | None:
        op = ins.opname
        if op in ops.NO_OPS:
            return None
        handler = getattr(self, f"op_{op}", None)
        if handler is not None:
            result: int | object | None = handler(ins, arm)
            return result
        if op.startswith(("BINARY_", "INPLACE_")) and op.split("_", 1)[1] in ops.BINARY_3_10:
            symbol = ops.BINARY_3_10[op.split("_", 1)[1]]
            self._binary(arm, symbol + ("=" if op.startswith("INPLACE_") else ""))
            return None
        if op in ops.UNARY:
            v = self.pop(arm)
            arm.stack.append(derived(ast.UnaryOp(op=ops.UNARY[op](), operand=v.node), v))
            return None
        if op.startswith(("POP_JUMP_", "JUMP_IF_")):
            return self._conditional(ins, arm)
        if op in _JUMPS:
            if ins.target is None:
                raise DecompileError(f"{op} at offset {ins.offset} has no target")
            if ins.target <= ins.index and not (self.loops and ins.target == self.loops[-1][0]):
                raise DecompileError(f"a loop other than ``for`` (jump back at {ins.offset})")
            return ins.target
        raise DecompileError(f"no rule for {op} at offset {ins.offset}")

    def op_GET_ITER(self, ins: Instr, arm: Arm) -> int | None:
        """``for item in iterable:``, the body up to the jump back to FOR_ITER; where
        FOR_ITER comes later (3.12's inlined comprehension) or never (the iterator is a
        comprehension function's argument), ``iter(iterable)`` for what follows."""
        head = self.instrs[ins.index + 1] if ins.index + 1 < len(self.instrs) else None
        iterable = self.pop(arm)
        if head is None or head.opname != "FOR_ITER":
            node = call(ast.Name(id="iter", ctx=ast.Load()), [iterable.node])
            arm.stack.append(derived(node, iterable))
            return None
        return self._loop(iterable, head, arm)

    def _loop(self, iterable: Value, head: Instr, arm: Arm) -> int:
        if head.target is None:
            raise DecompileError(f"FOR_ITER at offset {head.offset} has no target")
        self.settle(arm)
        item = self.temp()
        self.loops.append((head.index, head.target))
        try:
            body = self._run(head.index + 1, Arm(stack=[*arm.stack, _ITERATOR, name(item)]))
        finally:
            self.loops.pop()
        if body and isinstance(body[-1], ast.Continue):
            body.pop()
        target = ast.Name(id=item, ctx=ast.Store())
        loop = ast.For(
            target=target, iter=iterable.node, body=body or [ast.Pass()], orelse=[], lineno=0
        )
        arm.body.append(loop)
        if ops.NULL_AFTER_CALLABLE:  # 3.13: the exhausted loop leaves the iterator to pop
            arm.stack.append(_ITERATOR)
        return head.target

    def _conditional(self, ins: Instr, arm: Arm) -> object:
        op, jump = ins.opname, ins.target
        if jump is None or (jump <= ins.index and not (self.loops and jump == self.loops[-1][0])):
            raise DecompileError(f"a loop other than ``for`` ({op} at offset {ins.offset})")
        v = self.pop(arm)
        nxt = ins.index + 1
        if op.startswith("JUMP_IF_"):  # 3.10/3.11: the jump keeps the value on the stack
            self.settle(arm)
            v = self.spill(arm, v)
            kept = [*arm.stack, v]
            if "TRUE" in op:
                self._branch(arm, v.node, (jump, kept), (nxt, arm.stack))
            else:
                self._branch(arm, v.node, (nxt, arm.stack), (jump, kept))
            return END
        if op.endswith("_NONE"):
            is_op: ast.cmpop = ast.IsNot() if op.endswith("_NOT_NONE") else ast.Is()
            test = ast.Compare(left=v.node, ops=[is_op], comparators=[ast.Constant(None)])
            self._branch(arm, test, (jump, arm.stack), (nxt, arm.stack))
        elif op.endswith("_TRUE"):
            self._branch(arm, v.node, (jump, arm.stack), (nxt, arm.stack))
        else:
            self._branch(arm, v.node, (nxt, arm.stack), (jump, arm.stack))
        return END

    # --- loads and stores -----------------------------------------------------------
    def op_LOAD_CONST(self, ins: Instr, arm: Arm) -> None:
        if isinstance(ins.argval, CodeType):  # for MAKE_FUNCTION: never written itself
            arm.stack.append(Value(ast.Constant(value=cast(Any, ins.argval)), pure=True))
            return
        arm.stack.append(const(ins.argval))

    def op_RETURN_CONST(self, ins: Instr, arm: Arm) -> object:
        self.emit(arm, ast.Return(value=const(ins.argval).node))
        return END

    def op_LOAD_FAST(self, ins: Instr, arm: Arm) -> None:
        if ins.opname == "LOAD_FAST" and ins.argval in self.cells:
            # 3.13 compiles LOAD_CLOSURE to LOAD_FAST of the cell's slot: the cell itself
            # (a cell's value is read with LOAD_DEREF in every version)
            self.op_LOAD_CLOSURE(ins, arm)
            return
        arm.stack.append(name(ops.local_name(ins.argval)))

    op_LOAD_FAST_CHECK = op_LOAD_FAST
    op_LOAD_DEREF = op_LOAD_FAST
    op_LOAD_CLASSDEREF = op_LOAD_FAST
    op_LOAD_NAME = op_LOAD_FAST

    def op_LOAD_CLOSURE(self, ins: Instr, arm: Arm) -> None:
        # the cell itself, which source cannot name but can reach: the closure of a
        # lambda that reads the variable is the variable's own cell (later stores reach
        # it, and it may still be empty), so ``(lambda: x).__closure__[0]``. It is pure
        # and reads no value, so it may be written later than the bytecode loaded it
        reader = ast.Lambda(args=_no_arguments(), body=name(ins.argval).node)
        node = ast.Subscript(value=attr(reader, "__closure__"), slice=ast.Constant(0))
        arm.stack.append(Value(node, pure=True))

    def op_LOAD_FAST_LOAD_FAST(self, ins: Instr, arm: Arm) -> None:
        first, second = ins.argval
        arm.stack += [name(first), name(second)]

    def op_STORE_FAST(self, ins: Instr, arm: Arm) -> None:
        self._store(arm, ops.local_name(ins.argval), self.pop(arm))

    op_STORE_DEREF = op_STORE_FAST
    op_STORE_NAME = op_STORE_FAST

    def op_STORE_GLOBAL(self, ins: Instr, arm: Arm) -> None:
        self.globals_written.add(ins.argval)  # declared ``global`` at the top of the def
        self.op_STORE_FAST(ins, arm)

    def op_STORE_FAST_STORE_FAST(self, ins: Instr, arm: Arm) -> None:
        first, second = ins.argval
        self._store(arm, first, self.pop(arm))
        self._store(arm, second, self.pop(arm))

    def op_STORE_FAST_LOAD_FAST(self, ins: Instr, arm: Arm) -> None:
        stored, loaded = ins.argval
        self._store(arm, stored, self.pop(arm))
        arm.stack.append(name(loaded))

    def _store(self, arm: Arm, target: str, v: Value) -> None:
        if self.restores(v, target):
            return  # a comprehension's variable back as it was: the loop's stays
        self.emit(arm, assign(target, v.node), writes=frozenset({target}))

    def op_DELETE_FAST(self, ins: Instr, arm: Arm) -> None:
        target = ast.Name(id=ins.argval, ctx=ast.Del())
        self.emit(arm, ast.Delete(targets=[target]), writes=frozenset({ins.argval}))

    op_DELETE_DEREF = op_DELETE_FAST
    op_DELETE_NAME = op_DELETE_FAST

    def op_LOAD_GLOBAL(self, ins: Instr, arm: Arm) -> None:
        with_null = sys.version_info >= (3, 11) and bool((ins.arg or 0) & 1)
        self._push_callable(arm, name(ins.argval), with_null)

    def _push_callable(self, arm: Arm, v: Value, with_null: bool) -> None:
        if with_null and not ops.NULL_AFTER_CALLABLE:
            arm.stack.append(NULL)
        arm.stack.append(v)
        if with_null and ops.NULL_AFTER_CALLABLE:
            arm.stack.append(NULL)

    def op_LOAD_ATTR(self, ins: Instr, arm: Arm) -> None:
        obj = self.pop(arm)
        method = sys.version_info >= (3, 12) and bool((ins.arg or 0) & 1)
        self._push_callable(arm, derived(attr(obj.node, ins.argval), obj), method)

    def op_LOAD_METHOD(self, ins: Instr, arm: Arm) -> None:
        obj = self.pop(arm)
        self._push_callable(arm, derived(attr(obj.node, ins.argval), obj), True)

    def op_LOAD_SUPER_ATTR(self, ins: Instr, arm: Arm) -> None:
        super_, cls, self_ = self.pops(arm, 3)
        sup = call(super_.node, [cls.node, self_.node])
        self._push_callable(arm, Value(attr(sup, ins.argval)), bool((ins.arg or 0) & 1))

    def op_STORE_ATTR(self, ins: Instr, arm: Arm) -> None:
        obj = self.pop(arm)
        v = self.pop(arm)
        target = ast.Attribute(value=obj.node, attr=ins.argval, ctx=ast.Store())
        self.emit(arm, ast.Assign(targets=[target], value=v.node, lineno=0))

    def op_DELETE_ATTR(self, ins: Instr, arm: Arm) -> None:
        obj = self.pop(arm)
        target = ast.Attribute(value=obj.node, attr=ins.argval, ctx=ast.Del())
        self.emit(arm, ast.Delete(targets=[target]))

    def op_LOAD_ASSERTION_ERROR(self, ins: Instr, arm: Arm) -> None:
        arm.stack.append(name("AssertionError"))

    def op_IMPORT_NAME(self, ins: Instr, arm: Arm) -> None:
        level, fromlist = self.pops(arm, 2)
        args = [ast.Constant(ins.argval), call(ast.Name(id="globals", ctx=ast.Load()), [])]
        node = call(ast.Name(id="__import__", ctx=ast.Load()), [*args, ast.Constant(None)])
        node.args += [fromlist.node, level.node]
        arm.stack.append(Value(node))

    def op_IMPORT_FROM(self, ins: Instr, arm: Arm) -> None:
        module = self.spill(arm, self.pop(arm))
        arm.stack.append(module)
        arm.stack.append(derived(attr(module.node, ins.argval), module))

    # --- the stack's own shuffles -----------------------------------------------------
    def op_POP_TOP(self, ins: Instr, arm: Arm) -> None:
        slot = arm.stack.pop()
        if isinstance(slot, Value) and not slot.pure:
            self.emit(arm, ast.Expr(value=slot.node))

    def op_PUSH_NULL(self, ins: Instr, arm: Arm) -> None:
        arm.stack.append(NULL)

    def op_COPY(self, ins: Instr, arm: Arm) -> None:
        self._copy(arm, int(ins.arg or 1), ins)

    def op_DUP_TOP(self, ins: Instr, arm: Arm) -> None:
        self._copy(arm, 1, ins)

    def op_DUP_TOP_TWO(self, ins: Instr, arm: Arm) -> None:
        self._copy(arm, 2, None)
        self._copy(arm, 2, None)

    def _copy(self, arm: Arm, depth: int, ins: Instr | None) -> None:
        self.settle(arm)  # a copy must not evaluate its expression twice
        arm.stack.append(arm.stack[-depth])

    def op_SWAP(self, ins: Instr, arm: Arm) -> None:
        n = int(ins.arg or 2)
        self.settle(arm)  # the stack's order is the order its slots were evaluated in
        arm.stack[-1], arm.stack[-n] = arm.stack[-n], arm.stack[-1]

    def op_ROT_TWO(self, ins: Instr, arm: Arm) -> None:
        self._rotate(arm, 2)

    def op_ROT_THREE(self, ins: Instr, arm: Arm) -> None:
        self._rotate(arm, 3)

    def op_ROT_FOUR(self, ins: Instr, arm: Arm) -> None:
        self._rotate(arm, 4)

    def op_ROT_N(self, ins: Instr, arm: Arm) -> None:
        self._rotate(arm, int(ins.arg or 0))

    def _rotate(self, arm: Arm, n: int) -> None:
        self.settle(arm)
        top = arm.stack.pop()
        arm.stack.insert(len(arm.stack) - n + 1, top)

    # --- calls ----------------------------------------------------------------------
    def op_KW_NAMES(self, ins: Instr, arm: Arm) -> None:
        # 3.11's dis leaves argval unset for KW_NAMES: the names are a constant tuple
        arm.kw_names = tuple(self.code.co_consts[int(ins.arg or 0)])

    def op_CALL(self, ins: Instr, arm: Arm) -> None:
        n = int(ins.arg or 0)
        names, arm.kw_names = arm.kw_names, ()
        self._call_with(arm, self.pops(arm, n), names, with_null=True)

    op_CALL_METHOD = op_CALL

    def op_CALL_KW(self, ins: Instr, arm: Arm) -> None:
        names = self.pop(arm)
        if not isinstance(names.node, ast.Constant):
            raise DecompileError("CALL_KW without a constant tuple of names")
        args = self.pops(arm, int(ins.arg or 0))
        self._call_with(arm, args, _names_tuple(names.node.value), with_null=True)

    def op_CALL_FUNCTION(self, ins: Instr, arm: Arm) -> None:
        self._call_with(arm, self.pops(arm, int(ins.arg or 0)), (), with_null=False)

    def op_CALL_FUNCTION_KW(self, ins: Instr, arm: Arm) -> None:
        names = self.pop(arm)
        if not isinstance(names.node, ast.Constant):
            raise DecompileError("CALL_FUNCTION_KW without a constant tuple of names")
        args = self.pops(arm, int(ins.arg or 0))
        self._call_with(arm, args, _names_tuple(names.node.value), with_null=False)

    def _call_with(
        self, arm: Arm, args: list[Value], kw: tuple[str, ...], *, with_null: bool
    ) -> None:
        if with_null:
            first, second = (
                s if not isinstance(s, SymList) else self.escape(arm, s)
                for s in self.pop_slots(arm, 2)
            )
            if isinstance(first, Null) and isinstance(second, Value):
                fn = second
            elif isinstance(second, Null) and isinstance(first, Value):
                fn = first
            elif isinstance(first, Value) and isinstance(second, Value):
                fn, args = first, [second, *args]  # a method and its self
            else:
                raise DecompileError("a call with no callable")
        else:
            fn = self.pop(arm)
        split = len(args) - len(kw)
        keywords = [ast.keyword(arg=k, value=v.node) for k, v in zip(kw, args[split:], strict=True)]
        node = ast.Call(func=fn.node, args=[a.node for a in args[:split]], keywords=keywords)
        arm.stack.append(Value(node))

    def op_CALL_FUNCTION_EX(self, ins: Instr, arm: Arm) -> None:
        kwargs = self.pop(arm) if (ins.arg or 0) & 1 else None
        (args_slot,) = self.pop_slots(arm, 1)
        if isinstance(args_slot, SymList) and args_slot.name is None:
            # a splat copies the list: its items are the arguments
            items = [self.escape(arm, i) if isinstance(i, SymList) else i for i in args_slot.items]
            args = Value(ast.List(elts=[i.node for i in items], ctx=ast.Load()), fresh=True)
        else:
            if isinstance(args_slot, Null):
                raise DecompileError("CALL_FUNCTION_EX without arguments")
            args = self.escape(arm, args_slot) if isinstance(args_slot, SymList) else args_slot
        (top,) = self.pop_slots(arm, 1)
        if isinstance(top, Null):  # 3.13: callable, NULL, args
            fn = self.pop(arm)
        else:
            fn = self.escape(arm, top) if isinstance(top, SymList) else top
            if sys.version_info >= (3, 11) and arm.stack and isinstance(arm.stack[-1], Null):
                arm.stack.pop()
        positional: list[ast.expr]
        if args.fresh and isinstance(args.node, ast.List | ast.Tuple):
            positional = list(args.node.elts)
        else:
            positional = [ast.Starred(value=args.node, ctx=ast.Load())]
        keywords = []
        if kwargs is not None:
            node = kwargs.node
            if (
                kwargs.fresh
                and isinstance(node, ast.Dict)
                and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys)
            ):
                for k, v in zip(node.keys, node.values, strict=True):
                    assert isinstance(k, ast.Constant) and isinstance(k.value, str)
                    keywords.append(ast.keyword(arg=k.value, value=v))
            else:
                keywords.append(ast.keyword(arg=None, value=node))
        arm.stack.append(Value(ast.Call(func=fn.node, args=positional, keywords=keywords)))

    def op_RETURN_VALUE(self, ins: Instr, arm: Arm) -> object:
        v = self.pop(arm)
        self.emit(arm, ast.Return(value=v.node))
        return END

    def op_RAISE_VARARGS(self, ins: Instr, arm: Arm) -> object:
        n = int(ins.arg or 0)
        got = self.pops(arm, n)
        exc = got[0].node if n >= 1 else None
        cause = got[1].node if n == 2 else None
        self.emit(arm, ast.Raise(exc=exc, cause=cause))
        return END

    def op_BEFORE_WITH(self, ins: Instr, arm: Arm) -> None:
        # the normal path only: __enter__ now, and the __exit__(None, None, None) call the
        # bytecode makes later; the exception handlers are reached through the
        # exception table, which this machine never follows
        mgr = self.spill(arm, self.pop(arm))
        arm.stack.append(replace(mgr, node=attr(mgr.node, "__exit__")))
        arm.stack.append(Value(call(attr(mgr.node, "__enter__"), [])))

    def op_SETUP_WITH(self, ins: Instr, arm: Arm) -> None:
        self.op_BEFORE_WITH(ins, arm)


def _no_arguments() -> ast.arguments:
    return ast.arguments(
        posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]
    )


def _names_tuple(value: object) -> tuple[str, ...]:
    if not (isinstance(value, tuple) and all(isinstance(v, str) for v in value)):
        raise DecompileError("keyword names that are not a tuple of strings")
    return value
