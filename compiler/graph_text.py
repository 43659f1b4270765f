"""Turn the graph text torch prints (``GraphModule.print_readable``) into nodes.

The text is parsed with ``ast``, never executed, so a trace file cannot run code
through it. The graph keeps the text verbatim; the nodes are an index into it.
"""

from __future__ import annotations

import ast
import gc
import re
from typing import Any

from .model import Graph, Node, SourceLoc, TensorMeta

_FILE_COMMENT = re.compile(
    r"#\s*File: (?P<file>.+?):(?P<line>\d+) in (?P<fn>.+?), code: (?P<code>.*)$"
)
# The same comment as a whole line (``re.match``).
_FILE_COMMENT_LINE = re.compile(r"[ \t]*# File: (.+?):(\d+) in (.+?), code: (.*)")
_NO_STACK = "No stacktrace found for following nodes"
# f32[4, s0][s0, 1]cpu  (dtype, sizes, strides, device)
_TENSOR = re.compile(
    r"(?P<dtype>[a-z]+\d*)\[(?P<shape>[^\]]*)\]\[(?P<stride>[^\]]*)\](?P<device>[a-z]+(?::\d+)?)"
)
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


def tensor_meta(annotation: str) -> tuple[TensorMeta, ...]:
    """Every tensor description in an FX annotation such as ``"f32[4, 4][4, 1]cpu"``."""
    metas = []
    for m in _TENSOR.finditer(annotation):
        metas.append(
            TensorMeta(
                dtype=m["dtype"],
                shape=_split_dims(m["shape"]),
                stride=_split_dims(m["stride"]),
                device=m["device"],
            )
        )
    return tuple(metas)


def _split_dims(text: str) -> tuple[str, ...]:
    return tuple(d.strip() for d in text.split(",") if d.strip())


def parse_graph(stage: str, text: str) -> Graph:
    """Parse torch's readable graph text into a ``Graph``; never raises.

    Example:
        >>> text = gm.print_readable(print_output=False)  # doctest: +SKIP
        >>> g = parse_graph("dynamo_output_graph", text)  # doctest: +SKIP
        >>> [n.op for n in g.nodes]  # doctest: +SKIP
        ['placeholder', 'call_function', 'output']
    """
    try:
        nodes = _Parser(text).parse()
    except (SyntaxError, ValueError) as exc:
        return Graph(stage=stage, text=text, parse_error=f"{type(exc).__name__}: {exc}")
    return Graph(stage=stage, text=text, nodes=nodes)


def parse_nodes(text: str) -> tuple[tuple[Node, ...], str | None]:
    """(nodes, parse error) of a graph's text: what ``Graph.deferred`` runs on first read.

    Example:
        >>> nodes, error = parse_nodes(gm.print_readable(print_output=False))  # doctest: +SKIP
    """
    return _parse_nodes(text, scan=True)


def parse_nodes_with_ast(text: str) -> tuple[tuple[Node, ...], str | None]:
    """``parse_nodes`` without its line scanner: the reference the scanner must match."""
    return _parse_nodes(text, scan=False)


def _parse_nodes(text: str, *, scan: bool) -> tuple[tuple[Node, ...], str | None]:
    # A big graph's syntax tree is hundreds of thousands of objects, and allocating
    # them sets off full collections that find nothing to free: a third of the time.
    collecting = gc.isenabled()
    gc.disable()
    try:
        parser = _Parser(text)
        return (parser.parse() if scan else parser.parse_ast()), None
    except (SyntaxError, ValueError) as exc:
        return (), f"{type(exc).__name__}: {exc}"
    finally:
        if collecting:
            gc.enable()


def comment_sources(text: str) -> dict[int, SourceLoc]:
    """The user source location each ``# File:`` comment of a graph's text names, by
    1-based line: the lines the parser reads node sources from (``Node.source``), which a
    view shows linked too.

    Example:
        >>> text = "x = 1\\n    # File: /m.py:7 in f, code: y = x.sin()\\ny = 2"
        >>> comment_sources(text)[2].line
        7
    """
    out: dict[int, SourceLoc] = {}
    # a source line is named again and again: each distinct comment line is read once
    seen: dict[str, SourceLoc | None] = {}
    lines = text.split("\n")
    for i in [i for i, line in enumerate(lines) if "# File: " in line]:
        line = lines[i]
        if line not in seen:
            m = _FILE_COMMENT_LINE.match(line)
            seen[line] = None
            if m is not None:
                seen[line] = SourceLoc(
                    filename=m[1], line=int(m[2]), function=m[3], code=m[4].rstrip(" \t")
                )
        loc = seen[line]
        if loc is not None:
            out[i + 1] = loc
    return out


def deferred_graph(stage: str, text: str) -> Graph:
    """A ``Graph`` of ``text`` parsed when its nodes are first read (see ``parse_graph``)."""
    return Graph.deferred(stage=stage, text=text, parse=lambda: parse_nodes(text))


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.split("\n")
        self.sources = self._source_by_line()
        self.metas: dict[str, tuple[TensorMeta, ...]] = {}

    def meta(self, annotation: str) -> tuple[TensorMeta, ...]:
        """``tensor_meta``, once per distinct annotation (a graph repeats a few shapes)."""
        metas = self.metas.get(annotation)
        if metas is None:
            metas = self.metas[annotation] = tensor_meta(annotation)
        return metas

    def _source_by_line(self) -> dict[int, SourceLoc]:
        """The user source location in force at each line, from ``# File:`` comments."""
        current: SourceLoc | None = None
        by_line: dict[int, SourceLoc] = {}
        for number, line in enumerate(self.lines, start=1):
            stripped = line.strip()
            if stripped.startswith("#"):
                m = _FILE_COMMENT.search(stripped)
                if m:
                    current = SourceLoc(
                        filename=m["file"], line=int(m["line"]), function=m["fn"], code=m["code"]
                    )
                elif _NO_STACK in stripped:
                    current = None
            elif stripped.startswith(("class ", "def ")):
                current = None
            elif current is not None:
                by_line[number] = current
        return by_line

    def parse(self) -> tuple[Node, ...]:
        from .graph_lines import scan_nodes  # it builds on _Function, defined below

        fast = scan_nodes(self)
        if fast is not None:
            return fast
        return self.parse_ast()

    def parse_ast(self) -> tuple[Node, ...]:
        """The reference parse: ``ast`` over the whole text, for any text at all."""
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

    def __init__(self, parser: _Parser, fn: ast.FunctionDef | None, module: str) -> None:
        self.parser = parser
        self.fn = fn  # None when the line scanner (graph_lines) fills ``fields``
        self.module = module
        self.order: list[str] = []
        self.fields: dict[str, dict[str, Any]] = {}
        self.unused_params: set[str] = set()

    def _add(self, name: str, **fields: object) -> None:
        if name not in self.fields:
            self.order.append(name)
        # every key present, so ``finish`` reads them without defaults
        self.fields[name] = {"name": name, "annotation": "", "args": (), "kwargs": {},
                             "inputs": (), "line": 0, **fields}  # fmt: skip

    def nodes(self) -> list[Node]:
        assert self.fn is not None
        for arg in self.fn.args.args[1:]:  # skip self
            annotation = _annotation(arg.annotation)
            self._add(arg.arg, op="placeholder", target=arg.arg, annotation=annotation,
                      line=arg.lineno)  # fmt: skip
            self.unused_params.add(arg.arg)
        for stmt in self.fn.body:
            self._statement(stmt)
        return self.finish()

    def finish(self) -> list[Node]:
        """The nodes collected in ``fields``, linked to their users."""
        fields = self.fields
        # dicts as ordered sets: a node read by thousands must not cost a list scan each
        users: dict[str, dict[str, None]] = {name: {} for name in self.order}
        for name in self.order:
            for inp in fields[name]["inputs"]:
                if inp in users:
                    users[inp][name] = None
        meta, sources, module = self.parser.meta, self.parser.sources, self.module
        metas = self.parser.metas
        result = []
        for name in self.order:
            f = fields[name]
            annotation: str = f["annotation"]
            op: str = f["op"]
            line: int = f["line"]
            result.append(
                Node(
                    name=name,
                    op=op,
                    target=f["target"],
                    args=tuple(f["args"]),
                    kwargs=dict(f["kwargs"]),
                    inputs=tuple(f["inputs"]),
                    users=tuple(users[name]),
                    meta=metas[annotation] if annotation in metas else meta(annotation),
                    annotation=annotation,
                    source=None if op in ("output", "placeholder") else sources.get(line),
                    module=module,
                    line=line,
                )
            )
        return result

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
        """Joint graphs take pytrees: ``primals_1, ... = fx_pytree.tree_flatten_spec(
        [primals, tangents], ...)``. The flattened names are the graph's real
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
            self.fields[name] = {**old, "name": name, "annotation": annotation or old["annotation"]}
            return
        fields = self._classify(value)
        self._add(name, annotation=annotation, line=line, inputs=self._reads(value), **fields)

    def _classify(self, value: ast.expr) -> dict[str, object]:
        if isinstance(value, ast.Call):
            args = tuple(ast.unparse(a) for a in value.args)
            kwargs = {k.arg or "**": ast.unparse(k.value) for k in value.keywords}
            func = value.func
            root = _root_name(func)
            if root == "self" and isinstance(func, ast.Attribute):
                return {"op": "call_module", "target": _dotted(func)[len("self."):],
                        "args": args, "kwargs": kwargs}  # fmt: skip
            if isinstance(func, ast.Attribute) and root in self.fields:
                receiver = ast.unparse(func.value)
                return {"op": "call_method", "target": func.attr,
                        "args": (receiver, *args), "kwargs": kwargs}  # fmt: skip
            return {"op": "call_function", "target": ast.unparse(func), "args": args,
                    "kwargs": kwargs}  # fmt: skip
        if isinstance(value, ast.Attribute) and _root_name(value) == "self":
            return {"op": "get_attr", "target": _dotted(value)[len("self.") :]}
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


def _operator(name: str, *operands: ast.expr) -> dict[str, object]:
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


def _dotted(node: ast.expr) -> str:
    return ast.unparse(node)
