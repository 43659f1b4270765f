"""Which line of an output code's ``call`` writes which buffer (``compiler.numerics``).

Inductor's wrapper names each buffer once (``buf3``) and gives an in-place result a new
name (``buf1 = buf0; del buf0  # reuse``), so a buffer's value is final right after the
first kernel line that names it: a kernel's argument (``cpp_fused_relu_0(buf1)``,
``triton_poi_fused_0.run(buf1, ...)``), an extern kernel's ``out=`` or the name a
fallback's result is bound to (``buf5 = torch.ops.aten.max.dim(...)``). Allocations,
aliases and ``reinterpret_tensor`` views write nothing. Read with Python's ``ast`` from
the code torch wrote, not from its printed comments.
"""

from __future__ import annotations

import ast
from pathlib import Path

# calls that bind a name to memory (or a view of it) without computing a value
_NO_VALUE = ("empty_strided", "reinterpret_tensor", "alloc_from_pool", "as_strided", "empty")


def _callee(call: ast.Call) -> str:
    return ast.unparse(call.func)


def _allocates(call: ast.Call) -> bool:
    name = _callee(call).rsplit(".", 1)[-1]
    return any(name == n or name.startswith(n + "_") for n in _NO_VALUE)


def _call_writes(call: ast.Call) -> list[str]:
    names = [a.id for a in call.args if isinstance(a, ast.Name)]
    names += [k.value.id for k in call.keywords if isinstance(k.value, ast.Name)]
    return names


def line_writes(source: str, first_line: int) -> dict[int, tuple[str, ...]]:
    """Line -> names the statement on it may write, for the function that starts at
    ``first_line`` of ``source`` (the output code's ``call``); {} if none starts there.

    Example:
        >>> code = '''def call(args):
        ...     buf0 = empty_strided_cpu((4,), (1,), torch.float32)
        ...     extern_kernels.mm(a, b, out=buf0)
        ...     buf1 = buf0; del buf0  # reuse
        ...     cpp_fused_relu_0(buf1)
        ...     return (buf1, )
        ... '''
        >>> line_writes(code, 1)
        {3: ('a', 'b', 'buf0'), 5: ('buf1',)}
    """
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "call" and node.lineno == first_line:
            return _writes(node.body)
    return {}


def _writes(body: list[ast.stmt]) -> dict[int, tuple[str, ...]]:
    found: dict[int, list[str]] = {}
    for stmt in body:
        names: list[str] = []
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            names = _call_writes(stmt.value)
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
            if not _allocates(stmt.value):
                names = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
                names += _call_writes(stmt.value)
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Subscript):
            names = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
        elif isinstance(stmt, (ast.With, ast.If, ast.For)):
            for line, inner in _writes(stmt.body).items():
                found.setdefault(line, []).extend(inner)
        if names:
            found.setdefault(stmt.lineno, []).extend(names)
    return {line: tuple(names) for line, names in sorted(found.items())}


def line_callees(source: str, first_line: int) -> dict[int, str]:
    """Line -> the function each statement of ``call`` calls (``cpp_fused_relu_0``,
    ``extern_kernels.addmm``, ``triton_poi_fused_0.run``), for naming a buffer's kernel
    where the Exploration has no kernel on that line.

    Example:
        >>> line_callees("def call(args):\\n    k(buf0)\\n", 1)
        {2: 'k'}
    """
    found: dict[int, str] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name == "call" and node.lineno == first_line:
            for stmt in ast.walk(node):
                value = getattr(stmt, "value", None)
                if isinstance(stmt, (ast.Expr, ast.Assign)) and isinstance(value, ast.Call):
                    found[stmt.lineno] = _callee(value)
    return found


def file_line_writes(path: str, first_line: int) -> dict[int, tuple[str, ...]]:
    """``line_writes`` for the output code file at ``path``.

    Example:
        >>> file_line_writes("/nonexistent.py", 1)
        {}
    """
    try:
        return line_writes(Path(path).read_text(encoding="utf-8"), first_line)
    except (OSError, SyntaxError):
        return {}
