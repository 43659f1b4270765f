"""Make the machine's statements read like code a person would write, meaning unchanged.

The machine assigns an expression to a temporary wherever evaluation order could
otherwise change; most of those temporaries are used once, by the next statement, before
anything else is evaluated, and can go back inline. Dynamo's own ``tmp_N`` locals are
treated the same way. Each rewrite here keeps the order in which expressions with effects
(calls, subscripts) are evaluated.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator

from compiler.parse.words.names import imported_module, is_builtins_dict, is_dynamo_temporary


def is_own_temporary(name: str) -> bool:
    """Whether ``name`` is one of the decompiler's own temporaries (``_v3``), which go
    back inline where they can.

    Example:
        >>> is_own_temporary("_v3"), is_own_temporary("_v")
        (True, False)
    """
    digits = name.removeprefix("_v")
    return digits != name and digits.isascii() and digits.isdecimal()


def is_temporary(name: str) -> bool:
    """Whether ``name`` is a temporary no user wrote: ours, or Dynamo's ``tmp_N`` (which
    stay, since its enter/exit pairs read better as two statements, unless nothing reads
    them).

    Example:
        >>> is_temporary("tmp_2"), is_temporary("x")
        (True, False)
    """
    return is_own_temporary(name) or is_dynamo_temporary(name)


_EFFECT, _BARRIER = "effect", "barrier"
_PURE_NODES = (
    ast.Name,
    ast.Constant,
    ast.Tuple,
    ast.List,
    ast.Starred,
    ast.Slice,
    ast.expr_context,
)


def tidy(body: list[ast.stmt], params: set[str]) -> list[ast.stmt]:
    """The statements with temporaries inlined, dead stores dropped and displays folded."""
    for _ in range(50):
        counts = _counts(body)
        changed = (
            _inline(body, counts, params)
            or _propagate_copies(body, counts, params)
            or _drop_dead(body, counts, params)
        )
        changed = _fold_subscripts(body) or _merge_unpacking(body, counts) or changed
        changed = _spread_keywords(body) or _drop_self_assignments(body) or changed
        changed = _unpack_in_for(body, counts) or changed
        if not changed:
            break
    return body


def readable_imports(fn: ast.FunctionDef) -> None:
    """``__import_torch_dot__dynamo_dot_utils.x`` reads ``torch._dynamo.utils.x``, with an
    ``import torch._dynamo.utils`` at the top of the function (the same module object)."""
    used = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
    locals_ = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
    stored = {
        n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    modules: dict[str, str] = {}
    for n in sorted(used):
        module = imported_module(n)
        if module:
            modules[n] = module
    roots = {m.split(".")[0] for m in modules.values()}
    if not modules or roots & (locals_ | stored):
        return  # a local of that name would be shadowed: keep Dynamo's names
    for node in ast.walk(fn):
        for field, value in ast.iter_fields(node):
            if isinstance(value, ast.Name) and value.id in modules:
                setattr(node, field, _dotted(modules[value.id]))
            elif isinstance(value, list):
                value[:] = [
                    _dotted(modules[v.id]) if isinstance(v, ast.Name) and v.id in modules else v
                    for v in value
                ]
    imports = [ast.Import(names=[ast.alias(name=m)]) for m in sorted(set(modules.values()))]
    fn.body[:0] = imports


def readable_builtins(fn: ast.FunctionDef) -> None:
    """``__builtins_dict___9['print']`` reads ``builtins.print`` (the same object)."""
    names = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
    if "builtins" in names:
        return
    found = False
    for node in ast.walk(fn):
        for field, value in ast.iter_fields(node):
            items = value if isinstance(value, list) else [value]
            for k, item in enumerate(items):
                if (
                    isinstance(item, ast.Subscript)
                    and isinstance(item.ctx, ast.Load)
                    and isinstance(item.value, ast.Name)
                    and is_builtins_dict(item.value.id)
                    and isinstance(item.slice, ast.Constant)
                    and isinstance(item.slice.value, str)
                    and item.slice.value.isidentifier()
                ):
                    new = _dotted(f"builtins.{item.slice.value}")
                    if isinstance(value, list):
                        value[k] = new
                    else:
                        setattr(node, field, new)
                    found = True
    if found:
        fn.body.insert(0, ast.Import(names=[ast.alias(name="builtins")]))


def _dotted(path: str) -> ast.expr:
    first, *rest = path.split(".")
    node: ast.expr = ast.Name(id=first, ctx=ast.Load())
    for part in rest:
        node = ast.Attribute(value=node, attr=part, ctx=ast.Load())
    return node


def _blocks(body: list[ast.stmt]) -> Iterator[list[ast.stmt]]:
    yield body
    for stmt in body:
        if isinstance(stmt, ast.If | ast.For):
            yield from _blocks(stmt.body)
            yield from _blocks(stmt.orelse)


def _counts(body: list[ast.stmt]) -> Counter[tuple[str, str]]:
    """(name, 'load' | 'store' | 'del') -> how often, over the whole function."""
    counts: Counter[tuple[str, str]] = Counter()
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name):
                kind = {ast.Load: "load", ast.Store: "store", ast.Del: "del"}[type(node.ctx)]
                counts[(node.id, kind)] += 1
    return counts


def _single_assign(stmt: ast.stmt) -> tuple[str, ast.expr] | None:
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
    ):
        return stmt.targets[0].id, stmt.value
    return None


def _pure(node: ast.expr) -> bool:
    """Evaluating it reads names and constants only: it may move past effects."""
    return all(isinstance(n, _PURE_NODES) for n in ast.walk(node))


def _movable(node: ast.expr) -> bool:
    """Pure, or attribute loads on names too (``builtins.print``, ``self.lin``): moved
    past statements that do not assign those names. An attribute whose value a call in
    between changes would read differently; Dynamo's code between a load and its use is
    its own bookkeeping (subscripts of graph outputs, ``del``), which changes none."""
    return all(
        isinstance(n, ast.Name | ast.Constant | ast.Attribute | ast.expr_context)
        for n in ast.walk(node)
    )


def _reads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _events(node: ast.AST | None) -> Iterator[tuple[str, str]]:
    """What evaluating ``node`` does, in order: ('name', id) loads and ('effect', '')
    once a call or a subscript has run; ('barrier', '') where order is not plain."""
    if node is None or isinstance(node, ast.Constant | ast.expr_context):
        return
    if isinstance(node, ast.Name):
        if isinstance(node.ctx, ast.Load):
            yield "name", node.id
    elif isinstance(node, ast.Call):
        for part in [node.func, *node.args, *(k.value for k in node.keywords)]:
            yield from _events(part)
        yield _EFFECT, ""
    elif isinstance(node, ast.Subscript):
        yield from _events(node.value)
        yield from _events(node.slice)
        if isinstance(node.ctx, ast.Load):
            yield _EFFECT, ""
    elif isinstance(node, ast.Attribute | ast.Starred | ast.FormattedValue):
        yield from _events(node.value)
    elif isinstance(node, ast.BinOp):
        yield from _events(node.left)
        yield from _events(node.right)
    elif isinstance(node, ast.UnaryOp):
        yield from _events(node.operand)
    elif isinstance(node, ast.Compare):
        for part in [node.left, *node.comparators]:
            yield from _events(part)
    elif isinstance(node, ast.Tuple | ast.List | ast.Set):
        for part in node.elts:
            yield from _events(part)
    elif isinstance(node, ast.Dict):
        for key, item in zip(node.keys, node.values, strict=True):
            yield from _events(key)
            yield from _events(item)
    elif isinstance(node, ast.JoinedStr):
        for part in node.values:
            yield from _events(part)
    elif isinstance(node, ast.Slice):
        for bound in (node.lower, node.upper, node.step):
            yield from _events(bound)
    else:
        yield _BARRIER, ""


def _statement_events(stmt: ast.stmt) -> Iterator[tuple[str, str]]:
    """The evaluated part of a statement, in order (an ``if`` evaluates its test only)."""
    if isinstance(stmt, ast.Assign):
        yield from _events(stmt.value)
        for target in stmt.targets:
            yield from _events(target)
    elif isinstance(stmt, ast.Expr | ast.Return):
        yield from _events(stmt.value)
    elif isinstance(stmt, ast.If):
        yield from _events(stmt.test)
    elif isinstance(stmt, ast.Delete):
        for target in stmt.targets:
            yield from _events(target)
    elif isinstance(stmt, ast.Raise):
        yield from _events(stmt.exc)
        yield from _events(stmt.cause)
    else:
        yield _BARRIER, ""


def _inline(body: list[ast.stmt], counts: Counter[tuple[str, str]], params: set[str]) -> bool:
    for block in _blocks(body):
        for i, stmt in enumerate(block):
            found = _single_assign(stmt)
            if found is None:
                continue
            target, value = found
            if (
                not is_own_temporary(target)
                or target in params
                or counts[(target, "store")] != 1
                or counts[(target, "load")] != 1
            ):
                continue
            j = _use_site(block, i, target, value)
            if j is not None:
                _replace_load(block[j], target, value)
                del block[i]
                _drop_deletes(body, {target})
                return True
    return False


def _use_site(block: list[ast.stmt], i: int, target: str, value: ast.expr) -> int | None:
    """Index of the statement after ``block[i]`` that may take ``value`` in place of its
    one load of ``target``, or None."""
    pure, reads = _pure(value) or _movable(value), _reads(value)
    for j in range(i + 1, len(block)):
        stmt = block[j]
        for kind, what in _statement_events(stmt):
            if kind == "name" and what == target:
                return j
            if kind == _BARRIER or (kind == _EFFECT and not pure):
                return None
        written = {
            n.id
            for n in ast.walk(stmt)
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
        }
        if written & reads or target in _reads(stmt):
            return None
        if not pure and not isinstance(stmt, ast.Delete):
            return None
    return None


def _replace_load(stmt: ast.stmt, target: str, value: ast.expr) -> None:
    for node in ast.walk(stmt):
        for field, child in ast.iter_fields(node):
            if isinstance(child, ast.Name) and child.id == target:
                setattr(node, field, value)
                return
            if isinstance(child, list):
                for k, item in enumerate(child):
                    if isinstance(item, ast.Name) and item.id == target:
                        child[k] = value
                        return


def _drop_deletes(body: list[ast.stmt], names: set[str]) -> None:
    for block in _blocks(body):
        for stmt in list(block):
            if isinstance(stmt, ast.Delete):
                stmt.targets = [
                    t for t in stmt.targets if not (isinstance(t, ast.Name) and t.id in names)
                ]
                if not stmt.targets:
                    block.remove(stmt)


def _propagate_copies(
    body: list[ast.stmt], counts: Counter[tuple[str, str]], params: set[str]
) -> bool:
    """``tmp_3 = _v2`` where both are assigned once and ``_v2`` is never deleted: every
    ``tmp_3`` reads ``_v2``."""
    for block in _blocks(body):
        for i, stmt in enumerate(block):
            found = _single_assign(stmt)
            if found is None or not isinstance(found[1], ast.Name):
                continue
            target, source = found[0], found[1].id
            if not is_temporary(target) or target in params:
                continue
            # the source keeps its value: a temporary assigned once, or a parameter
            # nothing assigns
            kept = (is_temporary(source) and counts[(source, "store")] == 1) or (
                source in params and not counts[(source, "store")]
            )
            if not kept or counts[(target, "store")] != 1 or counts[(source, "del")]:
                continue
            del block[i]
            _drop_deletes(body, {target})
            for node in ast.walk(ast.Module(body=body, type_ignores=[])):
                if isinstance(node, ast.Name) and node.id == target:
                    node.id = source
            return True
    return False


def _spread_keywords(body: list[ast.stmt]) -> bool:
    """``f(**{'a': x})`` -> ``f(a=x)``; ``{**{'a': x}}`` -> ``{'a': x}``."""
    changed = False
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if (
            isinstance(node, ast.Dict)
            and node.keys == [None]
            and isinstance(node.values[0], ast.Dict)
        ):
            inner = node.values[0]
            node.keys, node.values = inner.keys, inner.values
            changed = True
        if isinstance(node, ast.Call):
            spread: list[ast.keyword] = []
            for kw in node.keywords:
                value = kw.value
                if (
                    kw.arg is None
                    and isinstance(value, ast.Dict)
                    and all(
                        isinstance(k, ast.Constant)
                        and isinstance(k.value, str)
                        and k.value.isidentifier()
                        for k in value.keys
                    )
                ):
                    spread += [
                        ast.keyword(arg=k.value, value=v)  # type: ignore[union-attr]
                        for k, v in zip(value.keys, value.values, strict=True)
                    ]
                    changed = True
                else:
                    spread.append(kw)
            node.keywords = spread
    return changed


def _unpack_in_for(body: list[ast.stmt], counts: Counter[tuple[str, str]]) -> bool:
    """``for _v1 in e: a, b = _v1`` -> ``for a, b in e:``; ``x = _v1`` -> ``for x in e:``."""
    for block in _blocks(body):
        for stmt in block:
            if not (isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Name)):
                continue
            item = stmt.target.id
            first = stmt.body[0] if stmt.body else None
            if (
                is_own_temporary(item)
                and counts[(item, "load")] == 1
                and isinstance(first, ast.Assign)
                and len(first.targets) == 1
                and isinstance(first.targets[0], ast.Tuple | ast.Name)
                and isinstance(first.value, ast.Name)
                and first.value.id == item
            ):
                stmt.target = first.targets[0]
                stmt.body = stmt.body[1:] or [ast.Pass()]
                return True
    return False


def _drop_self_assignments(body: list[ast.stmt]) -> bool:
    """``self = self``: Dynamo restoring a local that never changed."""
    for block in _blocks(body):
        for stmt in block:
            found = _single_assign(stmt)
            if found and isinstance(found[1], ast.Name) and found[1].id == found[0]:
                block.remove(stmt)
                return True
    return False


def _drop_dead(body: list[ast.stmt], counts: Counter[tuple[str, str]], params: set[str]) -> bool:
    """``tmp_1 = a.b`` that nothing reads goes; an unread call stays as a statement."""
    for block in _blocks(body):
        for i, stmt in enumerate(block):
            found = _single_assign(stmt)
            if found is None:
                continue
            target, value = found
            if not is_temporary(target) or target in params:
                continue
            if counts[(target, "load")] or counts[(target, "store")] != 1:
                continue
            calls = any(isinstance(n, ast.Call | ast.Subscript) for n in ast.walk(value))
            if calls:
                block[i] = ast.Expr(value=value)
            else:
                del block[i]
            _drop_deletes(body, {target})
            return True
    return False


def _fold_subscripts(body: list[ast.stmt]) -> bool:
    """``[a, b][0]`` -> ``a`` where ``b`` has no effect."""
    for stmt in body:
        for node in ast.walk(stmt):
            for field, child in ast.iter_fields(node):
                folded = _folded(child) if isinstance(child, ast.expr) else None
                if folded is not None:
                    setattr(node, field, folded)
                    return True
                if isinstance(child, list):
                    for k, item in enumerate(child):
                        folded = _folded(item) if isinstance(item, ast.expr) else None
                        if folded is not None:
                            child[k] = folded
                            return True
    return False


def _folded(node: ast.expr) -> ast.expr | None:
    if not (
        isinstance(node, ast.Subscript)
        and isinstance(node.ctx, ast.Load)
        and isinstance(node.value, ast.List | ast.Tuple)
        and isinstance(node.slice, ast.Constant)
        and type(node.slice.value) is int
    ):
        return None
    elts = node.value.elts
    k = node.slice.value
    if any(isinstance(e, ast.Starred) for e in elts) or not -len(elts) <= k < len(elts):
        return None
    others = [e for n, e in enumerate(elts) if n != k % len(elts)]
    if not all(_pure(e) for e in others):
        return None
    return elts[k]


def _merge_unpacking(body: list[ast.stmt], counts: Counter[tuple[str, str]]) -> bool:
    """``_v1, _v2 = e; a = _v2; b = _v1`` -> ``b, a = e``."""
    for block in _blocks(body):
        for i, stmt in enumerate(block):
            if not (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Tuple)
            ):
                continue
            elts = stmt.targets[0].elts
            slots = {}
            for k, e in enumerate(elts):
                inner = e.value if isinstance(e, ast.Starred) else e
                if isinstance(inner, ast.Name):
                    slots[inner.id] = k
            j = i + 1
            while j < len(block):
                found = _single_assign(block[j])
                if found is None or not isinstance(found[1], ast.Name):
                    break
                to, src = found[0], found[1].id
                if src not in slots or counts[(src, "load")] != 1 or not is_temporary(src):
                    break
                if to in slots or to in _reads(stmt.value):
                    break
                k = slots.pop(src)
                new = ast.Name(id=to, ctx=ast.Store())
                elts[k] = (
                    ast.Starred(value=new, ctx=ast.Store())
                    if isinstance(elts[k], ast.Starred)
                    else new
                )
                del block[j]
                return True
    return False
