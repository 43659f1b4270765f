"""Turn the graph text torch prints (``GraphModule.print_readable``) into nodes.

The text is parsed with ``ast``, never executed, so a trace file cannot run code
through it. The graph keeps the text verbatim; the nodes are an index into it.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import functools
import gc
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from compiler.model import Derived, Graph, Node, SourceLoc, TensorMeta

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
    """Parse torch's readable graph text into a ``Graph`` now; never raises. (A capture
    or load parses on first read instead: ``compiler/link/derive.py``.)

    Example:
        >>> text = gm.print_readable(print_output=False)  # doctest: +SKIP
        >>> g = parse_graph("dynamo_output_graph", text)  # doctest: +SKIP
        >>> [n.op for n in g.nodes]  # doctest: +SKIP
        ['placeholder', 'call_function', 'output']
    """
    try:
        parsed: tuple[tuple[Node, ...], str | None] = (_Parser(text).parse(), None)
    except (SyntaxError, ValueError) as exc:
        parsed = ((), f"{type(exc).__name__}: {exc}")
    return Graph(stage=stage, text=text, derived=Derived().known(parsed))


def parse_nodes(text: str) -> tuple[tuple[Node, ...], str | None]:
    """(nodes, parse error) of a graph's text: what a graph's first read runs.

    Example:
        >>> nodes, error = parse_nodes(gm.print_readable(print_output=False))  # doctest: +SKIP
    """
    return _parse_nodes(text, scan=True)


def parse_nodes_with_ast(text: str) -> tuple[tuple[Node, ...], str | None]:
    """``parse_nodes`` without its line scanner: the reference the scanner must match."""
    return _parse_nodes(text, scan=False)


def _parse_nodes(text: str, *, scan: bool) -> tuple[tuple[Node, ...], str | None]:
    with no_collection():
        try:
            parser = _Parser(text)
            return (parser.parse() if scan else parser.parse_ast()), None
        except (SyntaxError, ValueError) as exc:
            return (), f"{type(exc).__name__}: {exc}"


@contextlib.contextmanager
def no_collection() -> Iterator[None]:
    """The garbage collector paused: a big graph's syntax tree (or its tens of thousands
    of nodes, linked) is hundreds of thousands of new objects, and allocating them sets
    off full collections that find nothing to free: a third of the time.

    Example:
        >>> with no_collection():
        ...     nodes, error = parse_nodes(text)  # doctest: +SKIP
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
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


def comment_source(comment: str) -> tuple[bool, SourceLoc | None]:
    """What a stripped ``#`` comment line does to the source location in force: (True,
    the new location) for ``# File: ...`` and for torch's no-stack-trace note (None);
    (False, None) for any other comment."""
    m = _FILE_COMMENT.search(comment)
    if m:
        loc = SourceLoc(filename=m["file"], line=int(m["line"]), function=m["fn"], code=m["code"])
        return True, loc
    return (True, None) if _NO_STACK in comment else (False, None)


# What ``_Function.fields`` holds per node: name, op, target, args, kwargs, inputs,
# annotation, line and source (``BY_LINE``: look it up in ``_Parser.sources``). Tuples,
# not dicts: a big graph has tens of thousands.
Record = tuple[str, str, str, tuple[str, ...], dict[str, str], tuple[str, ...], str, int, Any]
BY_LINE: Any = object()
_NEW = object.__new__
# Node's slot writers: a frozen dataclass's ``__init__`` sets each field through
# ``object.__setattr__``, twice the cost of writing the slots, on the 65,000 nodes of a
# 12-layer GPT-2 trace (tests/test_graph_lines.py checks ``new_node`` against ``Node``).
_SLOTS = {f.name: Node.__dict__[f.name].__set__ for f in dataclasses.fields(Node)}
_WRITTEN = ("name", "op", "target", "args", "kwargs", "inputs", "users", "meta", "annotation",
            "source", "module", "line", "kernels", "module_stack")  # fmt: skip
_WRITERS = tuple(_SLOTS[f] for f in _WRITTEN)
# fields added to Node later get their defaults
_EXTRA: list[tuple[Callable[[Node, object], None], Callable[[], object]]] = [
    (
        _SLOTS[f.name],
        f.default_factory
        if f.default_factory is not dataclasses.MISSING
        else functools.partial(lambda value: value, f.default),
    )
    for f in dataclasses.fields(Node)
    if f.name not in _WRITTEN
]
_EXTRA_NAMES = [f.name for f in dataclasses.fields(Node) if f.name not in _WRITTEN]


def new_node(
    name: str,
    op: str,
    target: str,
    args: tuple[str, ...],
    kwargs: dict[str, str],
    inputs: tuple[str, ...],
    users: tuple[str, ...],
    meta: tuple[TensorMeta, ...],
    annotation: str,
    source: SourceLoc | None,
    module: str,
    line: int,
    kernels: tuple[str, ...] = (),
    module_stack: tuple[str, ...] = (),
) -> Node:
    """``Node(...)`` by writing its slots (see ``_SLOTS``); every field given.

    Example:
        >>> new_node("x", "placeholder", "x", (), {}, (), (), (), "", None, "", 2).name
        'x'
    """
    node: Node = _NEW(Node)
    values = (name, op, target, args, kwargs, inputs, users, meta, annotation, source, module,
              line, kernels, module_stack)  # fmt: skip
    for write, value in zip(_WRITERS, values, strict=True):
        write(node, value)
    for write, default in _EXTRA:
        write(node, default())
    return node


def with_links(
    nodes: tuple[Node, ...],
    kernels: Mapping[str, tuple[str, ...]],
    stacks: Mapping[str, tuple[str, ...]],
) -> tuple[Node, ...]:
    """``nodes`` with ``kernels[name]`` and, where a node has none, ``stacks[name]`` (top
    module nodes only): the nodes nothing changes are kept, the others copied by their
    slots (``dataclasses.replace`` costs three times as much, on 57,000 nodes)."""
    (set_name, set_op, set_target, set_args, set_kwargs, set_inputs, set_users, set_meta,
     set_annotation, set_source, set_module, set_line, set_kernels,
     set_module_stack) = _WRITERS  # fmt: skip
    out: list[Node] = []
    append = out.append
    for n in nodes:
        if n.module != "":
            append(n)
            continue
        old_kernels, old_stack, name = n.kernels, n.module_stack, n.name
        ks = kernels.get(name, old_kernels)
        ms = old_stack or stacks.get(name, old_stack)
        if ks is old_kernels and ms is old_stack:
            append(n)
            continue
        node = _NEW(Node)
        set_name(node, name)
        set_op(node, n.op)
        set_target(node, n.target)
        set_args(node, n.args)
        set_kwargs(node, n.kwargs)
        set_inputs(node, n.inputs)
        set_users(node, n.users)
        set_meta(node, n.meta)
        set_annotation(node, n.annotation)
        set_source(node, n.source)
        set_module(node, "")
        set_line(node, n.line)
        set_kernels(node, ks)
        set_module_stack(node, ms)
        for f in _EXTRA_NAMES:
            _SLOTS[f](node, getattr(n, f))
        append(node)
    return tuple(out)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.metas: dict[str, tuple[TensorMeta, ...]] = {}
        self._sources: dict[int, SourceLoc] | None = None

    @property
    def sources(self) -> dict[int, SourceLoc]:
        """Line -> user source location: only the ``ast`` path needs the table (the
        line scanner follows the ``# File:`` comments as it reads)."""
        if self._sources is None:
            self._sources = self._source_by_line()
        return self._sources

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
        from compiler.parse.graph_lines import scan_nodes  # it builds on _Function, defined below

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
        self.fields: dict[str, Record] = {}
        self.unused_params: set[str] = set()

    def _add(
        self,
        name: str,
        *,
        op: str,
        target: str,
        args: tuple[str, ...] = (),
        kwargs: dict[str, str] | None = None,
        inputs: tuple[str, ...] = (),
        annotation: str = "",
        line: int = 0,
        source: Any = BY_LINE,
    ) -> None:
        if name not in self.fields:
            self.order.append(name)
        self.fields[name] = (name, op, target, args, {} if kwargs is None else kwargs, inputs,
                             annotation, line, source)  # fmt: skip

    def rename(self, old_name: str, name: str, annotation: str) -> None:
        """``l_x_ = L_x_``: Dynamo's placeholder ``L_x_`` becomes the node ``l_x_``."""
        old = self.fields.pop(old_name)
        self.order[self.order.index(old_name)] = name
        self.unused_params.discard(old_name)
        self.fields[name] = (name, *old[1:6], annotation or old[6], *old[7:])

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
        order = self.order
        users: dict[str, list[str]] = {}
        if len(order) == len(fields):  # each name once, so no user twice in a list
            for name in order:
                for inp in fields[name][5]:
                    if inp in fields:
                        read = users.get(inp)
                        if read is None:
                            users[inp] = [name]
                        else:
                            read.append(name)
        else:  # a renamed placeholder took an existing name: dicts as ordered sets
            seen: dict[str, dict[str, None]] = {}
            for name in order:
                for inp in fields[name][5]:
                    if inp in fields:
                        seen.setdefault(inp, {})[name] = None
            users = {k: list(v) for k, v in seen.items()}
        meta, module = self.parser.meta, self.module
        metas = self.parser.metas
        none: tuple[str, ...] = ()
        # new_node's slot writes, inlined: this loop builds every node of a graph
        (set_name, set_op, set_target, set_args, set_kwargs, set_inputs, set_users, set_meta,
         set_annotation, set_source, set_module, set_line, set_kernels,
         set_module_stack) = _WRITERS  # fmt: skip
        extra = _EXTRA
        result: list[Node] = []
        append = result.append
        for name in order:
            _, op, target, args, kwargs, inputs, annotation, line, source = fields[name]
            if op == "output" or op == "placeholder":
                source = None
            elif source is BY_LINE:
                source = self.parser.sources.get(line)
            read = users.get(name)
            node = _NEW(Node)
            set_name(node, name)
            set_op(node, op)
            set_target(node, target)
            set_args(node, args)
            set_kwargs(node, kwargs)
            set_inputs(node, inputs)
            set_users(node, none if read is None else tuple(read))
            metas_of = metas.get(annotation)
            set_meta(node, meta(annotation) if metas_of is None else metas_of)
            set_annotation(node, annotation)
            set_source(node, source)
            set_module(node, module)
            set_line(node, line)
            set_kernels(node, none)
            set_module_stack(node, none)
            for write, default in extra:
                write(node, default())
            append(node)
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
            self.rename(value.id, name, annotation)
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


def _dotted(node: ast.expr) -> str:
    return ast.unparse(node)
