"""One statement of a graph's ``forward`` body and the node it makes.

What a statement means follows torch's printing (``torch.fx.graph.Graph.python_code``):
``name: "ann" = value`` is a node whose op comes from the value's shape (a call on
``self.sub`` is ``call_module``, on a node ``call_method``, any other ``call_function``;
``self.attr`` is ``get_attr``; an operator or subscript is the ``operator`` function);
``a = b = None`` frees names; ``l_x_ = L_x_`` renames a placeholder; ``return`` is the
output; ``a, b = f(...)`` unpacks (a pytree flatten makes the real placeholders).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from compiler.model import SourceLoc
from compiler.parse.graph_exprs import (
    AUGMENTED,
    BINOPS,
    NONE,
    UNARY,
    Expr,
    Reader,
    Unreadable,
    is_name,
    root,
    string_value,
    unparse,
)
from compiler.parse.graph_nodes import NodeTable


class Statement(Reader):
    """One simple statement ``toks[start:end]`` of a forward body, at ``line`` under the
    user source location ``source``.

    Example:
        >>> table = NodeTable("", {})
        >>> Statement(table, ["y", "=", "f", "(", ")"], 0, 5, 3, None).run()
        >>> table.fields["y"][2]
        'f'
    """

    def __init__(
        self,
        table: NodeTable,
        toks: list[str],
        start: int,
        end: int,
        line: int,
        source: SourceLoc | None,
    ) -> None:
        super().__init__(toks, start, end)
        self.table = table
        self.line = line
        self.source = source

    def run(self) -> None:
        table, toks, i, end = self.table, self.toks, self.i, self.end
        head = toks[i]
        if head == "return":
            self.i += 1
            value = None if self.i == end else self.exprlist()
            self.done()
            table.add("output", op="output", target="output",
                      args=(unparse(value),) if value is not None else (),
                      inputs=self.reads(value), line=self.line)  # fmt: skip
            return
        if head == "pass" and end == i + 1:
            return
        if not is_name(head):
            raise Unreadable(f"a statement that starts with {head!r}")
        nxt = toks[i + 1] if i + 1 < end else ""
        if nxt == ":":
            if i + 2 >= end:
                raise Unreadable("an annotation cut short")
            if is_name(toks[i + 2]):
                # an unquoted type, as torch prints a non-tensor attribute a higher-order
                # op takes (nonstrict_trace's `f_callable : torch._higher_order_ops.
                # invoke_leaf_function._LeafCallable = self.f_callable`)
                j = i + 3
                while j + 1 < end and toks[j] == "." and is_name(toks[j + 1]):
                    j += 2
                annotation = "".join(toks[i + 2 : j])
                self.i = j
            else:
                annotation = string_value(toks[i + 2])
                self.i = i + 3
            if self.i == end:
                return  # a bare annotation is no node
            self.take("=")
            self.assign(head, self.exprlist(), annotation)
        elif nxt == "=":
            # a = b = None frees names (several targets: no node); a = value is a node
            targets = [head]
            self.i = i + 2
            while self.i + 1 < end and toks[self.i + 1] == "=" and is_name(toks[self.i]):
                targets.append(toks[self.i])
                self.i += 2
            value = self.exprlist()
            self.done()
            if len(targets) == 1:
                self.assign(head, value, "")
        elif nxt in AUGMENTED:  # the node is the alias torch prints after it
            self.i = i + 2
            self.exprlist()
            self.done()
        elif nxt == ",":
            self.unpack()
        elif nxt == "[":
            self.store()
        else:
            raise Unreadable(f"a statement {head} {nxt} ...")

    def assign(self, name: str, value: Expr, annotation: str) -> None:
        self.done()
        table = self.table
        if value == NONE and name in table.fields:
            return  # `x = None` after a node frees it
        if value[0] == "N" and value[1] in table.unused_params:
            table.rename(str(value[1]), name, annotation)
            return
        fields = self.classify(value)
        table.add(name, annotation=annotation, line=self.line, inputs=self.reads(value),
                  source=self.source, **fields)  # fmt: skip

    def store(self) -> None:
        """``x[i] = v``: an in-place store makes no node of its own (torch prints the
        ``setitem = x`` alias after it, which does)."""
        self.i += 1
        while self.peek() == "[":
            self.i += 1
            self.exprlist()
            self.take("]")
        self.take("=")
        self.exprlist()
        self.done()

    def unpack(self) -> None:
        # a, b = value
        names: list[str] = []
        while True:
            tok = self.peek()
            if not is_name(tok):
                raise Unreadable(f"an unpacking target {tok!r}")
            names.append(tok)
            self.i += 1
            if self.peek() == "=":
                break
            self.take(",")
            if self.peek() == "=":
                break
        self.i += 1
        value = self.exprlist()
        self.done()
        table = self.table
        if value[0] == "K" and unparse(value[1]).endswith("tree_flatten_spec"):
            # Joint graphs take pytrees: the flattened names are the real placeholders,
            # the pytree parameters only the printed signature.
            for wrapper in self.reads(value):
                if wrapper in table.unused_params:
                    table.drop_param(wrapper)
            for name in names:
                table.add(name, op="placeholder", target=name, line=self.line)
            return
        for name in names:
            table.add(name, op="call_function", target="operator.getitem",
                      args=(unparse(value),), inputs=self.reads(value),
                      line=self.line, source=self.source)  # fmt: skip

    def reads(self, value: Expr | None) -> tuple[str, ...]:
        """Names of nodes in ``value``, breadth first as ``ast.walk`` visits them."""
        if value is None:
            return ()
        fields = self.table.fields
        seen: dict[str, None] = {}
        todo: deque[Expr] = deque([value])
        while todo:
            node = todo.popleft()
            kind = node[0]
            if kind == "N":
                if node[1] in fields:
                    seen.setdefault(str(node[1]), None)
            elif kind == "K":
                todo.append(node[1])
                todo.extend(node[2])
                # a keyword is a node of its own, so its value is one level deeper
                todo.extend(("W", v) for _, v in node[3])
            elif kind in ("A", "W"):
                todo.append(node[1])
            elif kind in ("L", "T", "E"):
                todo.extend(node[1])
            elif kind == "D":
                todo.extend(k for k, _ in node[1])
                todo.extend(v for _, v in node[1])
            elif kind == "U":
                todo.append(node[2])
            elif kind == "S":
                todo.append(node[1])
                todo.append(node[2])
            elif kind == "B":
                todo.append(node[2])
                todo.append(node[3])
        return tuple(seen)

    def classify(self, value: Expr) -> dict[str, Any]:
        kind = value[0]
        if kind == "K":
            func: Expr = value[1]
            args = tuple(unparse(a) for a in value[2])
            kwargs = {k: unparse(v) for k, v in value[3]}
            base = root(func)
            if base == "self" and func[0] == "A":
                return {"op": "call_module", "target": unparse(func)[len("self."):],
                        "args": args, "kwargs": kwargs}  # fmt: skip
            if func[0] == "A" and base in self.table.fields:
                return {"op": "call_method", "target": func[2],
                        "args": (unparse(func[1]), *args), "kwargs": kwargs}  # fmt: skip
            return {"op": "call_function", "target": unparse(func), "args": args,
                    "kwargs": kwargs}  # fmt: skip
        if kind == "A" and root(value) == "self":
            return {"op": "get_attr", "target": unparse(value)[len("self.") :]}
        if kind == "B":
            return _operator(BINOPS[str(value[1])], value[2], value[3])
        if kind == "U":
            return _operator(UNARY[str(value[1])], value[2])
        if kind == "S":
            return _operator("getitem", value[1], value[2])
        return {"op": "call_function", "target": "<expr>", "args": (unparse(value),)}


def _operator(name: str, *operands: Expr) -> dict[str, Any]:
    return {"op": "call_function", "target": f"operator.{name}",
            "args": tuple(unparse(o) for o in operands)}  # fmt: skip
