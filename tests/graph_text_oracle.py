"""The tests' reference reading of torch's graph text: Python's own ``ast``.

This is the parser the product shipped before its line scanner stood alone
(``compiler/parse/graph_lines.py``); it stays here only as the oracle the scanner is
compared with (tests/test_graph_lines.py, benchmarks/parse_nodes.py). It reads any
Python at all, slowly: a syntax tree of every graph. ``parse_nodes_with_ast(text)`` gives
(nodes, parse error) as ``compiler.parse.graph_text.parse_nodes`` does, with Python's
own error for text that is no Python.
"""

from __future__ import annotations

import ast
import re
import warnings
from typing import Any

from compiler.model import Node, SourceLoc
from compiler.parse.graph_nodes import comment_source, tensor_meta
from compiler.parse.graph_text import no_collection

# "class <lambda>(torch.nn.Module):" is how AOT graphs are printed; make it parseable
# without shifting any line.
_ODD_CLASS = re.compile(r"^(\s*class )<(\w+)>", re.MULTILINE)

_BINOPS = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv",
    ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow", ast.MatMult: "matmul",
    ast.LShift: "lshift", ast.RShift: "rshift", ast.BitAnd: "and_", ast.BitOr: "or_",
    ast.BitXor: "xor",
}  # fmt: skip
_UNARY = {ast.USub: "neg", ast.UAdd: "pos", ast.Invert: "invert", ast.Not: "not_"}
_COMPARE = {
    ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge",
}  # fmt: skip


def parse_nodes_with_ast(text: str) -> tuple[tuple[Node, ...], str | None]:
    """(nodes, parse error) of a graph's text, read through ``ast`` (with the collector
    paused, as the product parses, so the benchmark's ratio compares the readers)."""
    with no_collection():
        try:
            return _Parser(text).parse(), None
        except (SyntaxError, ValueError) as exc:
            return (), f"{type(exc).__name__}: {exc}"


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.sources = self._source_by_line()

    def _source_by_line(self) -> dict[int, SourceLoc]:
        """The user source location in force at each line, from ``# File:`` comments."""
        current: SourceLoc | None = None
        by_line: dict[int, SourceLoc] = {}
        for number, line in enumerate(self.text.split("\n"), start=1):
            stripped = line.strip()
            if stripped.startswith("#"):
                changes, loc = comment_source(stripped)
                if changes:
                    current = loc
            elif stripped.startswith(("class ", "def ")):
                current = None
            elif current is not None:
                by_line[number] = current
        return by_line

    def parse(self) -> tuple[Node, ...]:
        with warnings.catch_warnings():  # Python's word on odd escapes and literals
            warnings.simplefilter("ignore", (SyntaxWarning, DeprecationWarning))
            tree = ast.parse(_ODD_CLASS.sub(r"\1_\2", self.text))
        classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
        if not classes:
            raise ValueError("no graph module class in the graph text")
        nodes: list[Node] = []
        for cls in classes:
            self._class(cls, "", nodes)
        return tuple(nodes)

    def _class(self, cls: ast.ClassDef, module: str, out: list[Node]) -> None:
        for item in cls.body:
            if isinstance(item, ast.FunctionDef) and item.name == "forward":
                out.extend(_Function(self, item, module).nodes())
            elif isinstance(item, ast.ClassDef):
                self._class(item, f"{module}.{item.name}" if module else item.name, out)


class _Function:
    """The nodes of one ``forward`` body."""

    def __init__(self, parser: _Parser, fn: ast.FunctionDef, module: str) -> None:
        self.parser = parser
        self.fn = fn
        self.module = module
        self.order: list[str] = []
        self.fields: dict[str, dict[str, Any]] = {}
        self.unused_params: set[str] = set()

    def _add(self, name: str, **fields: Any) -> None:
        if name not in self.fields:
            self.order.append(name)
        self.fields[name] = {"args": (), "kwargs": {}, "inputs": (), "annotation": "",
                             "source": None, **fields}  # fmt: skip

    def nodes(self) -> list[Node]:
        for arg in self.fn.args.args[1:]:  # skip self
            self._add(arg.arg, op="placeholder", target=arg.arg,
                      annotation=_annotation(arg.annotation), line=arg.lineno)  # fmt: skip
            self.unused_params.add(arg.arg)
        for stmt in self.fn.body:
            self._statement(stmt)
        users: dict[str, dict[str, None]] = {}
        for name in self.order:
            for inp in self.fields[name]["inputs"]:
                if inp in self.fields:
                    users.setdefault(inp, {})[name] = None
        out = []
        for name in self.order:
            f = self.fields[name]
            source = None
            if f["op"] not in ("output", "placeholder"):
                source = self.parser.sources.get(f["line"])
            out.append(
                Node(
                    name=name,
                    op=f["op"],
                    target=f["target"],
                    args=f["args"],
                    kwargs=f["kwargs"],
                    inputs=f["inputs"],
                    users=tuple(users.get(name, ())),
                    meta=tensor_meta(f["annotation"]),
                    annotation=f["annotation"],
                    source=source,
                    module=self.module,
                    line=f["line"],
                )
            )
        return out

    def _statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Return):
            value = stmt.value
            self._add("output", op="output", target="output",
                      args=(ast.unparse(value),) if value is not None else (),
                      inputs=self._reads(value), line=stmt.lineno)  # fmt: skip
            return
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value:
            self._assign(stmt.target.id, stmt.value, _annotation(stmt.annotation), stmt.lineno)
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name):
                self._assign(target.id, stmt.value, "", stmt.lineno)
            elif isinstance(target, ast.Tuple):
                if _is_pytree_flatten(stmt.value):
                    self._flattened_placeholders(target, stmt.value, stmt.lineno)
                    return
                # `a, b = x` unpacking appears in some HOP bodies: each name reads x.
                for elt in target.elts:
                    if isinstance(elt, ast.Name):
                        self._add(elt.id, op="call_function", target="operator.getitem",
                                  args=(ast.unparse(stmt.value),),
                                  inputs=self._reads(stmt.value), line=stmt.lineno)  # fmt: skip

    def _flattened_placeholders(self, target: ast.Tuple, value: ast.expr, line: int) -> None:
        """Joint graphs take pytrees: the flattened names are the graph's real
        placeholders; the pytree parameters are only the printed signature."""
        for wrapper in self._reads(value):
            if wrapper in self.unused_params:
                self.unused_params.discard(wrapper)
                self.order.remove(wrapper)
                del self.fields[wrapper]
        for elt in target.elts:
            if isinstance(elt, ast.Name):
                self._add(elt.id, op="placeholder", target=elt.id, line=line)

    def _assign(self, name: str, value: ast.expr, annotation: str, line: int) -> None:
        # `x = None` after a node frees it; it is not a node.
        if isinstance(value, ast.Constant) and value.value is None and name in self.fields:
            return
        # `l_x_ = L_x_`: Dynamo's placeholder named l_x_ whose target is L_x_.
        if isinstance(value, ast.Name) and value.id in self.unused_params:
            old = self.fields.pop(value.id)
            self.order[self.order.index(value.id)] = name
            self.unused_params.discard(value.id)
            self.fields[name] = {**old, "annotation": annotation or old["annotation"]}
            return
        fields = self._classify(value)
        self._add(name, annotation=annotation, line=line, inputs=self._reads(value), **fields)

    def _classify(self, value: ast.expr) -> dict[str, Any]:
        if isinstance(value, ast.Call):
            args = tuple(ast.unparse(a) for a in value.args)
            kwargs = {k.arg or "**": ast.unparse(k.value) for k in value.keywords}
            func = value.func
            root = _root_name(func)
            if root == "self" and isinstance(func, ast.Attribute):
                return {"op": "call_module", "target": ast.unparse(func)[len("self."):],
                        "args": args, "kwargs": kwargs}  # fmt: skip
            if isinstance(func, ast.Attribute) and root in self.fields:
                return {"op": "call_method", "target": func.attr,
                        "args": (ast.unparse(func.value), *args), "kwargs": kwargs}  # fmt: skip
            return {"op": "call_function", "target": ast.unparse(func), "args": args,
                    "kwargs": kwargs}  # fmt: skip
        if isinstance(value, ast.Attribute) and _root_name(value) == "self":
            return {"op": "get_attr", "target": ast.unparse(value)[len("self.") :]}
        if isinstance(value, ast.BinOp):
            return _operator(_BINOPS.get(type(value.op), "binop"), value.left, value.right)
        if isinstance(value, ast.UnaryOp):
            return _operator(_UNARY.get(type(value.op), "unary"), value.operand)
        if isinstance(value, ast.Compare) and len(value.ops) == 1:
            return _operator(_COMPARE.get(type(value.ops[0]), "compare"), value.left,
                             value.comparators[0])  # fmt: skip
        if isinstance(value, ast.Subscript):
            return _operator("getitem", value.value, value.slice)
        return {"op": "call_function", "target": "<expr>", "args": (ast.unparse(value),)}

    def _reads(self, value: ast.expr | None) -> tuple[str, ...]:
        if value is None:
            return ()
        seen: dict[str, None] = {}
        for sub in ast.walk(value):
            if isinstance(sub, ast.Name) and sub.id in self.fields:
                seen.setdefault(sub.id, None)
        return tuple(seen)


def _operator(name: str, *operands: ast.expr) -> dict[str, Any]:
    return {"op": "call_function", "target": f"operator.{name}",
            "args": tuple(ast.unparse(o) for o in operands)}  # fmt: skip


def _is_pytree_flatten(value: ast.expr) -> bool:
    return isinstance(value, ast.Call) and ast.unparse(value.func).endswith("tree_flatten_spec")


def _annotation(node: ast.expr | None) -> str:
    if node is None:
        return ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return ast.unparse(node)


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None
