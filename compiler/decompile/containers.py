"""Opcodes that compute: operators, comparisons, subscripts, displays, f-strings and
unpacking, for Python 3.10 to 3.13."""

from __future__ import annotations

import ast

from compiler.decompile import ops
from compiler.decompile.ops import Instr
from compiler.decompile.stack import (
    Arm,
    DecompileError,
    Null,
    Slot,
    StackBase,
    SymList,
    Value,
    attr,
    call,
    const,
    derived,
    import_,
    name,
    names_of,
)


class ContainerOps(StackBase):
    """The computing opcodes, as methods ``op_<OPNAME>(ins, arm)``."""

    def _binary(self, arm: Arm, symbol: str) -> None:
        right = self.pop(arm)
        left = self.pop(arm)
        if symbol.endswith("=") and symbol[:-1] in ops.INPLACE_FUNCTION:
            fn = ops.INPLACE_FUNCTION[symbol[:-1]]
            node = call(attr(import_("operator"), fn), [left.node, right.node])
            arm.stack.append(derived(node, left, right))
            return
        if symbol not in ops.BINARY:
            raise DecompileError(f"an unknown operator {symbol!r}")
        binop = ast.BinOp(left=left.node, op=ops.BINARY[symbol](), right=right.node)
        arm.stack.append(derived(binop, left, right))

    def op_BINARY_OP(self, ins: Instr, arm: Arm) -> None:
        self._binary(arm, ins.argrepr)

    def op_COMPARE_OP(self, ins: Instr, arm: Arm) -> None:
        symbol = str(ins.argval)
        if symbol.startswith("bool("):  # 3.13 writes the bool coercion into the name
            symbol = symbol[5:-1]
        self._compare(arm, ops.COMPARE[symbol]())

    def op_IS_OP(self, ins: Instr, arm: Arm) -> None:
        self._compare(arm, ast.IsNot() if ins.arg else ast.Is())

    def op_CONTAINS_OP(self, ins: Instr, arm: Arm) -> None:
        self._compare(arm, ast.NotIn() if ins.arg else ast.In())

    def _compare(self, arm: Arm, op: ast.cmpop) -> None:
        right = self.pop(arm)
        left = self.pop(arm)
        node = ast.Compare(left=left.node, ops=[op], comparators=[right.node])
        arm.stack.append(derived(node, left, right))

    # --- subscripts -------------------------------------------------------------------
    def op_BINARY_SUBSCR(self, ins: Instr, arm: Arm) -> None:
        key = self.pop(arm)
        (slot,) = self.pop_slots(arm, 1)
        at = _constant_key(key)
        if isinstance(slot, SymList) and slot.name is None and at is not None:
            try:
                found = slot.items[at]
            except IndexError as exc:
                raise DecompileError(f"a constant index out of range: {exc}") from exc
            arm.stack.append(SymList(list(found)) if isinstance(found, list) else found)
            return
        container = self.item(arm, slot) if isinstance(slot, SymList) else slot
        if not isinstance(container, Value):
            raise DecompileError("a subscript of NULL")
        node = ast.Subscript(value=container.node, slice=_as_slice(key), ctx=ast.Load())
        arm.stack.append(derived(node, container, key))

    def op_BINARY_SLICE(self, ins: Instr, arm: Arm) -> None:
        container, start, end = self.pops(arm, 3)
        key = ast.Slice(lower=_or_none(start.node), upper=_or_none(end.node))
        node = ast.Subscript(value=container.node, slice=key, ctx=ast.Load())
        arm.stack.append(derived(node, container, start, end))

    def op_STORE_SUBSCR(self, ins: Instr, arm: Arm) -> None:
        value_slot, slot, key_slot = self.pop_slots(arm, 3)
        if isinstance(slot, SymList) and slot.name is None and isinstance(key_slot, Value):
            at = _constant_key(key_slot)
            items = self._items(arm, value_slot) if isinstance(at, slice) else None
            if isinstance(at, int) or items is not None:
                try:
                    slot.items[at] = items if isinstance(at, slice) else self.item(arm, value_slot)  # type: ignore[index,assignment]
                except (IndexError, ValueError) as exc:
                    raise DecompileError(f"a constant store out of range: {exc}") from exc
                return
        value, container, key = (self._as_value(arm, s) for s in (value_slot, slot, key_slot))
        target = ast.Subscript(value=container.node, slice=_as_slice(key), ctx=ast.Store())
        self.emit(arm, ast.Assign(targets=[target], value=value.node, lineno=0))

    def op_STORE_SLICE(self, ins: Instr, arm: Arm) -> None:
        value, container, start, end = self.pops(arm, 4)
        key = ast.Slice(lower=_or_none(start.node), upper=_or_none(end.node))
        target = ast.Subscript(value=container.node, slice=key, ctx=ast.Store())
        self.emit(arm, ast.Assign(targets=[target], value=value.node, lineno=0))

    def op_DELETE_SUBSCR(self, ins: Instr, arm: Arm) -> None:
        key = self.pop(arm)
        (slot,) = self.pop_slots(arm, 1)
        at = _constant_key(key)
        if isinstance(slot, SymList) and slot.name is None and at is not None:
            try:
                del slot.items[at]
            except IndexError as exc:
                raise DecompileError(f"a constant delete out of range: {exc}") from exc
            return
        container = self._as_value(arm, slot)
        target = ast.Subscript(value=container.node, slice=_as_slice(key), ctx=ast.Del())
        self.emit(arm, ast.Delete(targets=[target]))

    def op_BUILD_SLICE(self, ins: Instr, arm: Arm) -> None:
        parts = self.pops(arm, int(ins.arg or 2))
        node = call(ast.Name(id="slice", ctx=ast.Load()), [p.node for p in parts])
        arm.stack.append(Value(node, pure=all(p.pure for p in parts), fresh=True))

    # --- displays -----------------------------------------------------------------------
    def op_BUILD_TUPLE(self, ins: Instr, arm: Arm) -> None:
        parts = self.pops(arm, int(ins.arg or 0))
        node = ast.Tuple(elts=[p.node for p in parts], ctx=ast.Load())
        arm.stack.append(_display(node, parts))

    def op_BUILD_LIST(self, ins: Instr, arm: Arm) -> None:
        slots = self.pop_slots(arm, int(ins.arg or 0))
        self.settle(arm)  # the items are evaluated now: so is everything below them
        arm.stack.append(SymList([self.item(arm, s) for s in slots]))

    def op_BUILD_SET(self, ins: Instr, arm: Arm) -> None:
        parts = self.pops(arm, int(ins.arg or 0))
        node: ast.expr = ast.Set(elts=[p.node for p in parts])
        if not parts:  # ``{}`` is a dict
            node = call(ast.Name(id="set", ctx=ast.Load()), [])
        arm.stack.append(_display(node, parts, mutable=True))

    def op_BUILD_MAP(self, ins: Instr, arm: Arm) -> None:
        parts = self.pops(arm, 2 * int(ins.arg or 0))
        keys = [p.node for p in parts[0::2]]
        values = [p.node for p in parts[1::2]]
        node = ast.Dict(keys=list[ast.expr | None](keys), values=values)
        arm.stack.append(_display(node, parts, mutable=True))

    def op_BUILD_CONST_KEY_MAP(self, ins: Instr, arm: Arm) -> None:
        keys = self.pop(arm)
        values = self.pops(arm, int(ins.arg or 0))
        if not isinstance(keys.node, ast.Constant):
            raise DecompileError("BUILD_CONST_KEY_MAP without constant keys")
        names = keys.node.value
        if not isinstance(names, tuple):
            raise DecompileError("BUILD_CONST_KEY_MAP without a tuple of keys")
        key_nodes: list[ast.expr | None] = [ast.Constant(k) for k in names]
        node = ast.Dict(keys=key_nodes, values=[v.node for v in values])
        arm.stack.append(_display(node, values, mutable=True))

    def op_BUILD_STRING(self, ins: Instr, arm: Arm) -> None:
        parts = self.pops(arm, int(ins.arg or 0))
        pieces: list[ast.expr] = []
        for p in parts:
            pieces += p.node.values if isinstance(p.node, ast.JoinedStr) else [p.node]
        arm.stack.append(derived(ast.JoinedStr(values=pieces), *parts))

    def op_LIST_EXTEND(self, ins: Instr, arm: Arm) -> None:
        self._grow(ins, arm, starred=True, method="extend")

    def op_LIST_APPEND(self, ins: Instr, arm: Arm) -> None:
        self._grow(ins, arm, starred=False, method="append")

    def op_SET_UPDATE(self, ins: Instr, arm: Arm) -> None:
        self._grow(ins, arm, starred=True, method="update")

    def op_SET_ADD(self, ins: Instr, arm: Arm) -> None:
        self._grow(ins, arm, starred=False, method="add")

    def _grow(self, ins: Instr, arm: Arm, *, starred: bool, method: str) -> None:
        (item_slot,) = self.pop_slots(arm, 1)
        at = len(arm.stack) - int(ins.arg or 1)
        target = arm.stack[at]
        if isinstance(target, SymList) and target.name is None:
            known = self._items(arm, item_slot) if starred else [self.item(arm, item_slot)]
            if known is not None:
                target.items += known
                return
        if isinstance(target, SymList):
            target = self.escape(arm, target)  # still on the stack: a named list now
            arm.stack[at] = target
        if not isinstance(target, Value):
            raise DecompileError(f"{ins.opname} on NULL")
        item = self._as_value(arm, item_slot)
        if target.fresh and isinstance(target.node, ast.List | ast.Set | ast.Tuple):
            # grow the display itself: ``[a, *b]``; its other slots stay unevaluated
            added: list[ast.expr]
            if starred and item.fresh and isinstance(item.node, ast.List | ast.Tuple):
                added = list(item.node.elts)
            elif starred:
                added = [ast.Starred(value=item.node, ctx=ast.Load())]
            else:
                added = [item.node]
            node = type(target.node)(elts=[*target.node.elts, *added])
            if isinstance(node, ast.List | ast.Tuple):
                node.ctx = ast.Load()
            pure = target.pure and item.pure and not starred
            arm.stack[at] = Value(node, pure=pure, fresh=True, names=names_of(target, item))
            return
        target = self.spill(arm, target)
        arm.stack[at] = target
        self.emit(arm, ast.Expr(value=call(attr(target.node, method), [item.node])))

    def op_DICT_UPDATE(self, ins: Instr, arm: Arm) -> None:
        item = self.pop(arm)
        at = len(arm.stack) - int(ins.arg or 1)
        target = arm.stack[at]
        if isinstance(target, Value) and target.fresh and isinstance(target.node, ast.Dict):
            node = ast.Dict(keys=[*target.node.keys, None], values=[*target.node.values, item.node])
            arm.stack[at] = Value(node, fresh=True, names=names_of(target, item))
            return
        if not isinstance(target, Value):
            raise DecompileError("DICT_UPDATE on NULL")
        target = self.spill(arm, target)
        arm.stack[at] = target
        self.emit(arm, ast.Expr(value=call(attr(target.node, "update"), [item.node])))

    op_DICT_MERGE = op_DICT_UPDATE

    def op_MAP_ADD(self, ins: Instr, arm: Arm) -> None:
        key, value = self.pops(arm, 2)
        at = len(arm.stack) - int(ins.arg or 1)
        target = arm.stack[at]
        if not isinstance(target, Value):
            raise DecompileError("MAP_ADD on NULL")
        target = self.spill(arm, target)
        arm.stack[at] = target
        store = ast.Subscript(value=target.node, slice=key.node, ctx=ast.Store())
        self.emit(arm, ast.Assign(targets=[store], value=value.node, lineno=0))

    def _as_value(self, arm: Arm, slot: Slot) -> Value:
        if isinstance(slot, SymList):
            return self.escape(arm, slot)
        if isinstance(slot, Null):
            raise DecompileError("NULL where a value was expected")
        return slot

    def _items(self, arm: Arm, slot: Slot) -> list[Value | SymList] | None:
        """The items of what is being spread (``*x``) where they are known, else None."""
        if isinstance(slot, SymList) and slot.name is None:
            return list(slot.items)
        node = slot.node if isinstance(slot, Value) else None
        if isinstance(node, ast.Constant) and isinstance(node.value, tuple):
            return [const(c) for c in node.value]
        if isinstance(slot, Value) and slot.fresh and isinstance(slot.node, ast.Tuple | ast.List):
            if any(isinstance(e, ast.Starred) for e in slot.node.elts):
                return None
            return [self.item(arm, Value(e, pure=_pure_node(e))) for e in slot.node.elts]
        return None

    def op_LIST_TO_TUPLE(self, ins: Instr, arm: Arm) -> None:
        v = self.pop(arm)
        if v.fresh and isinstance(v.node, ast.List):
            node = ast.Tuple(elts=v.node.elts, ctx=ast.Load())
            arm.stack.append(Value(node, pure=v.pure, fresh=True, names=v.names))
            return
        arm.stack.append(derived(call(ast.Name(id="tuple", ctx=ast.Load()), [v.node]), v))

    def op_CALL_INTRINSIC_1(self, ins: Instr, arm: Arm) -> None:
        if ins.argrepr == "INTRINSIC_LIST_TO_TUPLE":
            self.op_LIST_TO_TUPLE(ins, arm)
        elif ins.argrepr == "INTRINSIC_UNARY_POSITIVE":
            v = self.pop(arm)
            arm.stack.append(derived(ast.UnaryOp(op=ast.UAdd(), operand=v.node), v))
        else:
            raise DecompileError(f"no rule for CALL_INTRINSIC_1 {ins.argrepr}")

    # --- f-strings ------------------------------------------------------------------------
    def op_FORMAT_VALUE(self, ins: Instr, arm: Arm) -> None:
        flags = int(ins.arg or 0)
        spec = self.pop(arm) if flags & 4 else None
        v = self.pop(arm)
        conversion = {0: -1, 1: ord("s"), 2: ord("r"), 3: ord("a")}[flags & 3]
        self._formatted(arm, v, conversion, spec)

    def op_CONVERT_VALUE(self, ins: Instr, arm: Arm) -> None:
        v = self.pop(arm)
        conversion = {1: ord("s"), 2: ord("r"), 3: ord("a")}[int(ins.arg or 1)]
        arm.stack.append(Value(v.node, names=v.names, conversion=conversion))

    def op_FORMAT_SIMPLE(self, ins: Instr, arm: Arm) -> None:
        v = self.pop(arm)
        self._formatted(arm, v, v.conversion, None)

    def op_FORMAT_WITH_SPEC(self, ins: Instr, arm: Arm) -> None:
        spec = self.pop(arm)
        v = self.pop(arm)
        self._formatted(arm, v, v.conversion, spec)

    def _formatted(self, arm: Arm, v: Value, conversion: int, spec: Value | None) -> None:
        format_spec = None
        if spec is not None:
            values = spec.node.values if isinstance(spec.node, ast.JoinedStr) else [spec.node]
            format_spec = ast.JoinedStr(values=values)
        part = ast.FormattedValue(value=v.node, conversion=conversion, format_spec=format_spec)
        arm.stack.append(derived(ast.JoinedStr(values=[part]), v))

    # --- unpacking ------------------------------------------------------------------------
    def op_UNPACK_SEQUENCE(self, ins: Instr, arm: Arm) -> None:
        self._unpack(arm, int(ins.arg or 0), None)

    def op_UNPACK_EX(self, ins: Instr, arm: Arm) -> None:
        n = int(ins.arg or 0)
        self._unpack(arm, (n & 0xFF) + 1 + (n >> 8), n & 0xFF)

    def _unpack(self, arm: Arm, count: int, star_at: int | None) -> None:
        source = self.pop(arm)
        temps = [self.temp() for _ in range(count)]
        elts: list[ast.expr] = []
        for i, t in enumerate(temps):
            target: ast.expr = ast.Name(id=t, ctx=ast.Store())
            elts.append(ast.Starred(value=target, ctx=ast.Store()) if i == star_at else target)
        tuple_ = ast.Tuple(elts=elts, ctx=ast.Store())
        self.emit(arm, ast.Assign(targets=[tuple_], value=source.node, lineno=0))
        arm.stack += [name(t) for t in reversed(temps)]


def _display(node: ast.expr, parts: list[Value], *, mutable: bool = False) -> Value:
    """A fresh display; pure when its parts are (a list is mutable: never pure, or a
    copy of it would be a second list)."""
    pure = not mutable and all(p.pure for p in parts)
    return Value(node, pure=pure, fresh=True, names=names_of(*parts))


def _pure_node(node: ast.expr) -> bool:
    return all(
        isinstance(n, ast.Name | ast.Constant | ast.Tuple | ast.expr_context)
        for n in ast.walk(node)
    )


def _constant_key(key: Value) -> int | slice | None:
    """The key as Python would see it, where it is a constant int or a slice of them."""
    node = key.node
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return int(node.value)
    sliced = _as_slice(key)
    if isinstance(sliced, ast.Slice):
        parts = [sliced.lower, sliced.upper, sliced.step]
        values = [p.value if isinstance(p, ast.Constant) else p for p in parts]
        if all(v is None or type(v) is int for v in values):
            return slice(*values)
    return None


def _as_slice(key: Value) -> ast.expr:
    """``slice(a, b)`` made by BUILD_SLICE reads back as ``a:b`` inside brackets."""
    node = key.node
    made_by_build_slice = (
        key.fresh
        and isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "slice"
        and 2 <= len(node.args) <= 3
    )
    if made_by_build_slice:
        assert isinstance(node, ast.Call)
        lower, upper, *step = node.args
        return ast.Slice(
            lower=_or_none(lower),
            upper=_or_none(upper),
            step=_or_none(step[0]) if step else None,
        )
    return node


def _or_none(node: ast.expr) -> ast.expr | None:
    return None if isinstance(node, ast.Constant) and node.value is None else node
