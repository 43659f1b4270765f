"""The symbolic stack's slots and the rules every opcode family shares.

A slot holds the Python expression that computed it (an ``ast`` node). Before a statement
is written, every slot the statement could change (an impure expression, or one that
reads a name the statement writes) is assigned to a temporary first, so expressions are
evaluated in the order the bytecode evaluated them.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from types import CodeType
from typing import Any


class DecompileError(Exception):
    """The bytecode uses something the decompiler does not write as source."""


@dataclass(frozen=True, slots=True)
class Value:
    """A stack slot: the expression that computes it.

    ``pure``: evaluating it has no effect and reads only names and constants, so it may be
    evaluated later or twice. ``fresh``: a list, tuple, set or dict display that nothing
    else refers to, so LIST_EXTEND and friends may grow the display itself.
    """

    node: ast.expr
    pure: bool = False
    fresh: bool = False
    names: frozenset[str] = frozenset()
    conversion: int = -1  # 3.13's CONVERT_VALUE before FORMAT_SIMPLE


class Null:
    """The NULL that 3.11+ pushes beside a callable."""

    def __repr__(self) -> str:
        return "NULL"


NULL = Null()


@dataclass(eq=False)
class SymList:
    """A list the code built and still only shuffles: its items are known, and every
    reference to it on the stack is this one object, so COPY, SWAP, subscripts and
    slices with constant keys, ``extend`` and ``del`` are carried out here rather than
    written as statements. Dynamo builds the values of a frame's stack this way before a
    resume call. Once the list escapes (stored, passed, compared) it becomes a real list:
    a display, or a temporary when something else still refers to it (``name``)."""

    items: list[Value | SymList]
    name: str | None = None


Slot = Value | Null | SymList


def name(n: str) -> Value:
    return Value(ast.Name(id=n, ctx=ast.Load()), pure=True, names=frozenset({n}))


def const(c: Any) -> Value:
    if _literal(c):
        return Value(ast.Constant(value=c), pure=True)
    written = _torch_constant(c)
    if written is None:
        raise DecompileError(f"a constant of type {type(c).__name__} has no source form")
    return Value(written, pure=True, names=frozenset({"torch"}))


def _torch_constant(c: Any) -> ast.expr | None:
    """``torch.device('cpu')``, ``torch.float32``, ``torch.Size([2, 3])``: the torch values
    Dynamo puts among a code's constants, written so that they evaluate to an equal value."""
    import torch

    if isinstance(c, torch.device):
        text = f"torch.device({str(c)!r})"
    elif isinstance(c, torch.dtype):
        text = str(c)  # 'torch.float32'
    elif isinstance(c, torch.Size):
        text = f"torch.Size({list(c)!r})"
    else:
        return None
    node = ast.parse(text, mode="eval").body
    return node


def _literal(c: Any) -> bool:
    if isinstance(c, tuple | frozenset):
        return all(_literal(x) for x in c)
    return c is None or c is Ellipsis or isinstance(c, int | float | complex | str | bytes)


def _values(sym: SymList) -> list[Value]:
    return [i for i in sym.items if isinstance(i, Value)]


def names_of(*values: Value) -> frozenset[str]:
    return frozenset().union(*(v.names for v in values))


@dataclass
class Arm:
    """One path through the code: its stack and the statements it has written."""

    stack: list[Slot]
    body: list[ast.stmt] = field(default_factory=list)
    kw_names: tuple[str, ...] = ()


class StackBase:
    """Temporaries, spills and the stack operations every opcode uses."""

    def __init__(self, code: CodeType) -> None:
        taken = set(code.co_varnames) | set(code.co_names) | set(code.co_cellvars)
        self.taken = taken | set(code.co_freevars)
        self.counter = 0

    # --- the stack --------------------------------------------------------------
    def temp(self) -> str:
        while True:
            self.counter += 1
            candidate = f"_v{self.counter}"
            if candidate not in self.taken:
                self.taken.add(candidate)
                return candidate

    def fresh_name(self, wanted: str) -> str:
        """``wanted``, or ``wanted`` with a number where the code uses that name."""
        candidate, n = wanted, 1
        while candidate in self.taken:
            n += 1
            candidate = f"{wanted}{n}"
        self.taken.add(candidate)
        return candidate

    def spill(self, arm: Arm, value: Value) -> Value:
        """The value as a name: assigned to a temporary unless it is one already."""
        if isinstance(value.node, ast.Name | ast.Constant):
            return value
        t = self.temp()
        arm.body.append(assign(t, value.node))
        return name(t)

    def settle(self, arm: Arm, writes: frozenset[str] = frozenset()) -> None:
        """Evaluate, in stack order, every slot that a statement could change."""
        for i, slot in enumerate(arm.stack):
            if isinstance(slot, Value) and (not slot.pure or slot.names & writes):
                arm.stack[i] = self.spill(arm, slot)
            elif isinstance(slot, SymList) and writes:
                self._settle_items(arm, slot, writes, set())

    def _settle_items(self, arm: Arm, sym: SymList, writes: frozenset[str], seen: set[int]) -> None:
        if sym.name is not None or id(sym) in seen:
            return
        seen.add(id(sym))
        for k, item in enumerate(sym.items):
            if isinstance(item, SymList):
                self._settle_items(arm, item, writes, seen)
            elif item.names & writes:
                sym.items[k] = self.spill(arm, item)

    def item(self, arm: Arm, slot: Slot) -> Value | SymList:
        """A slot as a list item: evaluated now (an item may be read twice)."""
        if isinstance(slot, Null):
            raise DecompileError("NULL where a value was expected")
        if isinstance(slot, SymList):
            return slot if slot.name is None else name(slot.name)
        return slot if slot.pure else self.spill(arm, slot)

    def escape(self, arm: Arm, sym: SymList) -> Value:
        """The list as an expression: a display, or a name where it is shared."""
        if sym.name is not None:
            return name(sym.name)
        node = ast.List(elts=[self._rendered(arm, i) for i in sym.items], ctx=ast.Load())
        if not self._shared(arm, sym):
            return Value(node, fresh=True, names=names_of(*_values(sym)))
        sym.name = self.temp()
        arm.body.append(assign(sym.name, node))
        return name(sym.name)

    def _rendered(self, arm: Arm, item: Value | SymList) -> ast.expr:
        return self.escape(arm, item).node if isinstance(item, SymList) else item.node

    @staticmethod
    def _shared(arm: Arm, sym: SymList) -> bool:
        """Whether anything on the stack still reaches ``sym``."""
        seen: set[int] = set()
        todo = [s for s in arm.stack if isinstance(s, SymList)]
        while todo:
            here = todo.pop()
            if here is sym:
                return True
            if id(here) in seen or here.name is not None:
                continue
            seen.add(id(here))
            todo += [i for i in here.items if isinstance(i, SymList)]
        return False

    def emit(self, arm: Arm, stmt: ast.stmt, writes: frozenset[str] = frozenset()) -> None:
        self.settle(arm, writes)
        arm.body.append(stmt)

    def pop(self, arm: Arm) -> Value:
        if not arm.stack:
            raise DecompileError("the stack runs out")
        slot = arm.stack.pop()
        if isinstance(slot, Null):
            raise DecompileError("NULL where a value was expected")
        if isinstance(slot, SymList):
            return self.escape(arm, slot)
        return slot

    def pop_slots(self, arm: Arm, n: int) -> list[Slot]:
        """The top ``n`` slots as they are (a SymList stays one), bottom first."""
        if n > len(arm.stack):
            raise DecompileError("the stack runs out")
        got = arm.stack[len(arm.stack) - n :]
        del arm.stack[len(arm.stack) - n :]
        return got

    def pops(self, arm: Arm, n: int) -> list[Value]:
        got = [self.pop(arm) for _ in range(n)]
        return got[::-1]


END = object()


def derived(node: ast.expr, *parts: Value) -> Value:
    """An expression made of ``parts``: never pure (an attribute load or an operator can
    run user code), but it reads the names they read."""
    return Value(node, pure=False, names=names_of(*parts))


def assign(target: str, value: ast.expr) -> ast.Assign:
    return ast.Assign(targets=[ast.Name(id=target, ctx=ast.Store())], value=value, lineno=0)


def attr(node: ast.expr, field_name: str) -> ast.Attribute:
    return ast.Attribute(value=node, attr=field_name, ctx=ast.Load())


def call(fn: ast.expr, args: list[ast.expr]) -> ast.Call:
    return ast.Call(func=fn, args=args, keywords=[])


def import_(module: str) -> ast.expr:
    return call(ast.Name(id="__import__", ctx=ast.Load()), [ast.Constant(module)])


def not_(node: ast.expr) -> ast.expr:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return node.operand
    return ast.UnaryOp(op=ast.Not(), operand=node)
