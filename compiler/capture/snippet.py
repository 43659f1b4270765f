"""A notebook snippet as a real function, so torch.compile can compile it godbolt-style.

``snippet_function`` builds, from a cell's AST, a function whose parameters are the
tensors, modules and numbers the cell reads from the notebook and whose body is the
cell itself, compiled under the cell's file name (whose source the caller keeps in
``linecache``: IPython's compiler cache does) so that every line number and source line
torch reports is the cell's own.
"""

from __future__ import annotations

import ast
import types
from collections.abc import Callable
from typing import Any

# Parameters of a snippet function that the cell binds only on some paths start as
# this, and are not written back to the notebook while they still hold it.
UNBOUND = type("Unbound", (), {"__repr__": lambda self: "<unbound>"})()
# Global through which a compiled snippet hands back its result and assignments
# (a STORE_GLOBAL, which Dynamo replays after the graph like any cell assignment).
OUT_SLOT = "__compile_cell_out__"


def snippet_function(
    tree: ast.Module,
    filename: str,
    name: str,
    ns: dict[str, Any],
    compile_code: Callable[[ast.Module, str, str], types.CodeType] = compile,
) -> tuple[types.FunctionType, list[str], list[str], bool]:
    """A function whose body is the cell: returns it, its parameters, the names the cell
    binds (handed back through ``OUT_SLOT``) and whether the cell ends in an expression.

    ``compile_code`` compiles the function's module (IPython's ``shell.compile`` keeps
    the notebook's ``__future__`` flags).

    Example:
        >>> import ast, torch
        >>> fn, params, bound, has_value = snippet_function(
        ...     ast.parse("y = x + 1\\ny"), "<cell>", "cell_1", {"x": torch.ones(2)})
        >>> params, bound, has_value
        (['x'], ['y'], True)
    """
    import torch

    body = list(tree.body)
    reads: list[str] = []
    seen_bound: set[str] = set()
    direct: set[str] = set()
    bound: list[str] = []
    for stmt in body:
        stmt_reads, stmt_binds = _names(stmt)
        reads += [n for n in stmt_reads if n not in seen_bound and n not in reads]
        for n in stmt_binds:
            if n not in seen_bound:
                seen_bound.add(n)
                bound.append(n)
        if isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Import):
            direct.update(stmt_binds)
    inputs = (torch.Tensor, torch.nn.Module, int, float, complex)
    params = [n for n in reads if n in ns and isinstance(ns[n], inputs)]
    unbound = [n for n in bound if n not in params and n not in direct]

    has_value = bool(body) and isinstance(body[-1], ast.Expr)
    result = _fresh("out", {*reads, *bound})
    anchor = body[-1] if body else ast.Pass(lineno=1, col_offset=0)
    if has_value:
        last = body.pop()
        assert isinstance(last, ast.Expr)
        body.append(ast.copy_location(_assign(result, last.value), last))
    else:
        body.append(ast.copy_location(_assign(result, ast.Constant(None)), anchor))
    handback = ast.Tuple(
        [_load(result), ast.Tuple([_load(n) for n in bound], ast.Load())], ast.Load()
    )
    body.insert(0, ast.copy_location(ast.Global([OUT_SLOT]), anchor))
    body.append(ast.copy_location(_assign(OUT_SLOT, handback), anchor))
    arguments = ast.arguments(
        posonlyargs=[],
        args=[ast.arg(p) for p in params],
        kwonlyargs=[ast.arg(n) for n in unbound],
        kw_defaults=[ast.Name("__unbound__", ast.Load()) for _ in unbound],
        defaults=[],
    )
    fn_def = ast.FunctionDef(
        name=name, args=arguments, body=body, decorator_list=[], returns=None,
        lineno=1, col_offset=0,
    )  # fmt: skip
    module = ast.fix_missing_locations(ast.Module([fn_def], []))
    scope: dict[str, Any] = {"__unbound__": UNBOUND}
    exec(compile_code(module, filename, "exec"), scope)
    code = scope[name].__code__
    # Globals are the notebook's namespace, so the cell sees torch, helpers, ... as usual.
    fn = types.FunctionType(code, ns, name, None, None)
    fn.__kwdefaults__ = dict.fromkeys(unbound, UNBOUND) or None
    return fn, params, bound, has_value


def _names(stmt: ast.stmt) -> tuple[list[str], list[str]]:
    """Names one top-level statement reads and binds at cell level, in order."""
    reads: list[str] = []
    binds: list[str] = []

    def visit(node: ast.AST, local: frozenset[str]) -> None:
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                if node.id not in local and node.id not in reads:
                    reads.append(node.id)
            elif not local and node.id not in binds:
                binds.append(node.id)
            return
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            visit(ast.Name(node.target.id, ast.Load()), local)
        if isinstance(node, ast.Import | ast.ImportFrom) and not local:
            binds.extend(a.asname or a.name.split(".")[0] for a in node.names)
            return
        if isinstance(node, ast.ExceptHandler) and node.name and not local:
            binds.append(node.name)
        inner = local
        if isinstance(node, ast.Lambda | ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            every = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
            inner = local | {x.arg for x in every if x is not None} | {"__scope__"}
        elif isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            targets = {n.id for g in node.generators for n in ast.walk(g.target)
                       if isinstance(n, ast.Name)}  # fmt: skip
            inner = local | targets | {"__scope__"}
        elif isinstance(node, ast.ClassDef):
            inner = local | {"__scope__"}
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(stmt, frozenset())
    return reads, binds


def _assign(name: str, value: ast.expr) -> ast.Assign:
    return ast.Assign(targets=[ast.Name(name, ast.Store())], value=value)


def _load(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())


def _fresh(base: str, taken: set[str]) -> str:
    name = base
    while name in taken:
        name += "_"
    return name
