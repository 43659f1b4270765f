"""The fast path of ``parse_nodes``: torch's graph text read line by line.

``ast`` builds and walks a syntax tree of every graph, most of ``load_trace``'s time on
big models. Torch prints a small set of statement shapes (``name: "f32[4]" =
torch.ops.aten.add.Tensor(a, b);  a = None``, placeholders, getitem, get_attr,
operators, ``return (...)``), so a tokenizer of one regular expression and a small
recursive reader cover them. Anything outside that subset, or anything ``ast.parse``
might reject, makes ``scan_nodes`` return None and the whole graph goes to the ``ast``
path, so the two never disagree (tests/test_graph_lines.py compares them on real
graphs). Nothing is evaluated.
"""

from __future__ import annotations

import keyword
import re
import string
from collections import deque
from typing import TYPE_CHECKING, Any

from .model import Node

if TYPE_CHECKING:
    from .graph_text import _Function, _Parser

# One token: a comment, a name, a number, a plain string (printable ASCII without quotes
# or backslashes, so its ``ast.unparse`` form is known), an operator, or any other
# single character (which no rule below accepts).
_TOKEN = re.compile(
    r"""[ ]*(\#.*|[A-Za-z_][A-Za-z0-9_]*|\d[0-9.]*(?:[eE][-+]?\d+)?[A-Za-z0-9_.]*"""
    r"""|'[ !#-&(-\[\]-~]*'|"[ !#-&(-\[\]-~]*"|\*\*|//|==|!=|<=|>=|[-+*/]=|\S)""",
    re.ASCII,
)
# Characters whose meaning to Python's tokenizer this reader does not model.
_UNMODELLED = re.compile(r"[\t\r\f\v\x00\\]")
_ODD_CLASS = re.compile(r"^(\s*class )<(\w+)>", re.MULTILINE)
_NAME_START = frozenset(string.ascii_letters + "_")
_RESERVED = frozenset([*keyword.kwlist, "__debug__"])
_CONSTANTS = {"None", "True", "False"}
_BINOPS = {
    "+": "add", "-": "sub", "*": "mul", "/": "truediv", "//": "floordiv", "%": "mod",
    "**": "pow", "@": "matmul", "&": "and_", "|": "or_", "^": "xor",
    "==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge",
}  # fmt: skip
_UNARY = {"-": "neg", "+": "pos", "~": "invert", "not": "not_"}
# The commonest line, read by one match: `name: "ann" = dotted.func(args);  a = b = None`
# with arguments free of strings, parentheses and nested lists.
_CALL_LINE = re.compile(
    r"""( +)([A-Za-z_]\w*): "([ !#-&(-\[\]-~]*)" = ([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)"""
    r"""\(((?:[\w.=, -]|\[[\w., -]*\])*)\)(?:; +((?:[A-Za-z_]\w* = )+)None)?\Z""",
    re.ASCII,
)
# `name = other`, `name: "ann" = self.attr.path;  a = None`, `name = a - 1`, `name = a[0]`
_OPERAND = r"(?:[A-Za-z_]\w*|\d[\w.]*(?:[eE][-+]?\d+)?)"
_NAME_LINE = re.compile(
    r"""( +)([A-Za-z_]\w*)(?:: "([ !#-&(-\[\]-~]*)")? = ([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"""
    rf"""|{_OPERAND} +(?:\*\*|//|[-+*/%@&|^]|[=!<>]=|[<>]) +{_OPERAND}|[A-Za-z_]\w*\[-?\d+\])"""
    r"""(?:; +((?:[A-Za-z_]\w* = )+)None)?\Z""",
    re.ASCII,
)
_UNREAD: Any = object()  # not in the argument cache yet (None there: not readable)
# A comma outside the one level of brackets _CALL_LINE allows.
_TOP_COMMA = re.compile(r",(?![^\[]*\])")
_KEYWORD = re.compile(r" *([A-Za-z_]\w*) *= *(?!=)(.*)\Z", re.ASCII)
# Tokens after which a name is complete (the statement's end is ";" or past the list).
_ENDS = frozenset([",", ")", "]", ";"])

# An expression: (kind, ...) with kind one of
#   "N" name, "C" constant (its unparsed text), "A" attribute (base, attr),
#   "K" call (func, args, ((kw, value), ...)), "S" subscript (value, index),
#   "L" list / "T" tuple (elements), "U" unary (op, operand), "B" binary (op, l, r).
# (Tagged tuples, not classes: a big graph makes hundreds of thousands of them.)
Expr = tuple[Any, ...]


class _Block:
    """An open ``class`` or ``def``: its indent, its body's (-1 before the first line)."""

    __slots__ = ("body", "fn", "indent", "module")

    def __init__(self, indent: int, module: str, fn: _Function | None) -> None:
        self.indent = indent
        self.body = -1
        self.module = module
        self.fn = fn


class _Unsure(Exception):
    """The text leaves the subset this reader knows; the ``ast`` path takes the graph."""


def scan_nodes(parser: _Parser) -> tuple[Node, ...] | None:
    """The nodes of ``parser.text`` as the ``ast`` path would give them, or None."""
    text = parser.text
    if _UNMODELLED.search(text):
        return None
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return None
    if "<" in text:
        text = _ODD_CLASS.sub(r"\1_\2", text)
    try:
        return _Scanner(parser, text.split("\n")).run()
    except _Unsure:
        return None


class _Scanner:
    def __init__(self, parser: _Parser, lines: list[str]) -> None:
        self.parser = parser
        self.lines = lines
        self.out: list[Node] = []
        self.stack: list[_Block] = []
        self.funcs: dict[str, tuple[Expr, str]] = {}
        self.args: dict[str, _Argument | None] = {}
        self.classes = 0

    def run(self) -> tuple[Node, ...]:
        lines = self.lines
        i, n = 0, len(lines)
        stack = self.stack
        while i < n:
            line = lines[i]
            bare = line.lstrip(" ")
            if not bare or bare[0] == "#":  # blank lines and comments: no statement
                i += 1
                continue
            if stack and stack[-1].fn is not None:
                call = _CALL_LINE.match(line)
                if call is not None and self._call_line(call, stack[-1], i + 1):
                    i += 1
                    continue
                if call is None:
                    alias = _NAME_LINE.match(line)
                    if alias is not None and self._name_line(alias, stack[-1], i + 1):
                        i += 1
                        continue
            toks: list[str] = _TOKEN.findall(line)
            first = i
            i += 1
            if toks and toks[-1][0] == "#":
                toks.pop()
            if not toks:
                continue
            depth = _depth(toks)
            where: list[int] | None = None
            while depth:
                if depth < 0 or i >= n:
                    raise _Unsure
                if where is None:
                    where = [first + 1] * len(toks)
                more: list[str] = _TOKEN.findall(lines[i])
                i += 1
                if more and more[-1][0] == "#":
                    more.pop()
                depth += _depth(more)
                toks += more
                where += [i] * len(more)
            indent = len(line) - len(line.lstrip(" "))
            self._logical(toks, indent, first + 1, where)
        self._close(0)
        if self.stack or not self.classes:
            raise _Unsure
        return tuple(self.out)

    def _name_line(self, m: re.Match[str], top: _Block, line: int) -> bool:
        """``l_x_ = L_x_`` and ``w: "ann" = self.weight`` without the tokenizer."""
        indent = len(m[1])
        if top.body == -1:
            if indent <= top.indent:
                return False
        elif indent != top.body:
            return False
        name, value_text, tail = m[2], m[4], m[5]
        if name in _RESERVED:
            return False
        if " " in value_text or "[" in value_text:  # an operator, a subscript
            arg = _argument(value_text)
            if arg is None or arg[0] is not None:
                return False
            known: tuple[Expr, str] | None = (arg[1], "")
        else:
            known = self.funcs.get(value_text)
        if known is None:
            parts = value_text.split(".")
            if not _RESERVED.isdisjoint(parts):
                return False
            tree: Expr = ("N", parts[0])
            for part in parts[1:]:
                tree = ("A", tree, part)
            known = self.funcs[value_text] = (tree, parts[0])
        names = tail[:-3].split(" = ") if tail else []
        if not _RESERVED.isdisjoint(names):
            return False
        if top.body == -1:
            top.body = indent
        fn = top.fn
        assert fn is not None
        statement = _Statement(fn, [], 0, 0, line)
        statement.assign(name, known[0], m[3] or "")
        if len(names) == 1:
            statement.assign(names[0], ("C", "None"), "")
        return True

    def _call_line(self, m: re.Match[str], top: _Block, line: int) -> bool:
        """``name: "ann" = f.g(args);  a = b = None`` without the tokenizer; False when
        the line needs the general reader (a dedent, an argument it does not know)."""
        indent = len(m[1])
        if top.body == -1:
            if indent <= top.indent:
                return False
        elif indent != top.body:
            return False
        name, annotation, func, args_text, tail = m.group(2, 3, 4, 5, 6)
        if name in _RESERVED:
            return False
        known = self.funcs.get(func)
        if known is None:
            parts = func.split(".")
            if any(p in _RESERVED for p in parts):
                return False
            func_tree: Expr = ("N", parts[0])
            for part in parts[1:]:
                func_tree = ("A", func_tree, part)
            known = self.funcs[func] = (func_tree, parts[0])
        func_tree, root = known
        texts: list[str] = []
        kw_texts: dict[str, str] = {}
        levels: list[tuple[tuple[str, ...], ...]] = []
        read: list[_Argument] = []
        if args_text:
            pieces = _TOP_COMMA.split(args_text) if "[" in args_text else args_text.split(",")
            cache = self.args
            for piece in pieces:
                arg = cache.get(piece, _UNREAD)
                if arg is _UNREAD:
                    arg = cache[piece] = _argument(piece)
                if arg is None:
                    return False
                kw, _, text, arg_levels = arg
                if kw is None:
                    if kw_texts:
                        return False
                    texts.append(text)
                elif kw in kw_texts:
                    return False
                else:
                    kw_texts[kw] = text
                levels.append(arg_levels)
                read.append(arg)
        names = tail[:-3].split(" = ") if tail else []
        if not _RESERVED.isdisjoint(names):
            return False
        if top.body == -1:
            top.body = indent
        fn = top.fn
        assert fn is not None
        fields = fn.fields
        if root in fields or root == "self":
            # a method call on a node, a submodule call: the general classification
            args = tuple(a[1] for a in read if a[0] is None)
            kwargs = tuple((a[0], a[1]) for a in read if a[0] is not None)
            value = ("K", func_tree, args, kwargs)
            _Statement(fn, [], 0, 0, line).assign(name, value, annotation)
        else:
            # Breadth first as ast.walk: level k of every child (function, arguments,
            # keywords) before level k + 1 of any. (The function's names are no nodes.)
            deepest = max(map(len, levels), default=0)
            if deepest <= 1:  # bare names and constants: the commonest call
                seen = {r: None for lv in levels if lv for r in lv[0] if r in fields}
            else:
                seen = {}
                for depth in range(deepest):
                    for lv in levels:
                        if depth < len(lv):
                            for r in lv[depth]:
                                if r in fields:
                                    seen[r] = None
            if name not in fields:
                fn.order.append(name)
            fields[name] = {"name": name, "annotation": annotation, "line": line,
                            "inputs": tuple(seen), "op": "call_function", "target": func,
                            "args": tuple(texts), "kwargs": kw_texts}  # fmt: skip
        if len(names) == 1 and names[0] not in fields:
            # `a = None` frees a node; of a name that is none, it is an expression node
            _Statement(fn, [], 0, 0, line).assign(names[0], ("C", "None"), "")
        return True

    def _close(self, indent: int) -> None:
        """Pop the blocks that ``indent`` ends; an inconsistent dedent is unsure."""
        stack = self.stack
        while stack and indent < stack[-1].body:
            block = stack.pop()
            if block.fn is not None:
                self.out.extend(block.fn.finish())
        if stack and indent != stack[-1].body:
            raise _Unsure

    def _logical(self, toks: list[str], indent: int, line: int, where: list[int] | None) -> None:
        stack = self.stack
        if stack and stack[-1].body == -1:
            if indent <= stack[-1].indent:
                raise _Unsure  # a block without a body
            stack[-1].body = indent
        else:
            self._close(indent)
            if not stack and indent:
                raise _Unsure
        top = stack[-1] if stack else None
        head = toks[0]
        if top is not None and top.fn is not None:
            self._body(toks, line, top.fn)
        elif head == "class":
            self._class(toks, indent, top.module if top else "")
        elif head == "def" and top is not None:
            self._def(toks, indent, top.module, line, where)
        else:
            raise _Unsure

    def _class(self, toks: list[str], indent: int, module: str) -> None:
        # class NAME: / class NAME(dotted.base):
        if len(toks) < 3 or toks[-1] != ":" or not _is_name(toks[1]):
            raise _Unsure
        if len(toks) != 3:
            base = toks[3:-2]
            if toks[2] != "(" or toks[-2] != ")" or not _is_dotted(base):
                raise _Unsure
        name = toks[1]
        if not self.stack:
            self.classes += 1
            name = ""  # the graph module itself; nested classes are its submodules
        self.stack.append(_Block(indent, f"{module}.{name}" if module else name, None))

    def _def(
        self, toks: list[str], indent: int, module: str, line: int, where: list[int] | None
    ) -> None:
        # def forward(self, a: "ann", b, ...):   the only function the ast path reads
        from .graph_text import _Function

        if toks[:3] != ["def", "forward", "("] or toks[-2:] != [")", ":"]:
            raise _Unsure
        fn = _Function(self.parser, None, module)
        params: list[tuple[str, str, int]] = []
        seen: set[str] = set()
        j, end = 3, len(toks) - 2
        while j < end:
            name = toks[j]
            if not _is_name(name) or name in seen:
                raise _Unsure
            seen.add(name)
            at = where[j] if where else line
            annotation = ""
            if toks[j + 1] == ":":
                annotation = _string(toks[j + 2])
                j += 2
            params.append((name, annotation, at))
            j += 1
            if j < end:
                if toks[j] != ",":
                    raise _Unsure
                j += 1
        for name, annotation, at in params[1:]:  # skip self
            fn._add(name, op="placeholder", target=name, annotation=annotation, line=at)
            fn.unused_params.add(name)
        self.stack.append(_Block(indent, module, fn))

    def _body(self, toks: list[str], line: int, fn: _Function) -> None:
        start = 0
        n = len(toks)
        while start < n:
            end = _statement_end(toks, start)
            if end == start:
                raise _Unsure
            _Statement(fn, toks, start, end, line).run()
            start = end + 1


# keyword or None, expression, its unparsed text, the names at each level below it
_Argument = tuple[str | None, Expr, str, tuple[tuple[str, ...], ...]]


def _argument(piece: str) -> _Argument | None:
    """One call argument's text read, or None."""
    name = piece.strip(" ")
    if name.isidentifier() and name.isascii() and name not in _RESERVED:
        return None, ("N", name), name, ((name,),)
    m = _KEYWORD.match(piece)
    kw, text = (m[1], m[2]) if m else (None, piece)
    if kw in _RESERVED:
        return None
    toks: list[str] = _TOKEN.findall(text)
    if not toks or toks[-1][0] == "#":
        return None
    reader = _Reader(toks, 0, len(toks))
    try:
        value = reader.expr()
        reader.done()
    except (_Unsure, IndexError):
        return None
    levels = _levels(value)
    if kw is not None:
        levels = ((), *levels)  # the keyword node stands between call and value
    return kw, value, _unparse(value), levels


def _levels(value: Expr) -> tuple[tuple[str, ...], ...]:
    """The names in ``value`` by depth below it (0: itself), each level in walk order."""
    levels: list[tuple[str, ...]] = []
    level = [value]
    while level:
        levels.append(tuple(str(node[1]) for node in level if node[0] == "N"))
        below: list[Expr] = []
        for node in level:
            below.extend(_children(node))
        level = below
    while levels and not levels[-1]:
        levels.pop()
    return tuple(levels)


def _children(node: Expr) -> tuple[Expr, ...]:
    """A node's children as ``ast.iter_child_nodes`` orders them (name-free ones left out)."""
    kind = node[0]
    if kind == "K":
        return (node[1], *node[2], *(("W", v) for _, v in node[3]))
    if kind in ("A", "W"):
        return (node[1],)
    if kind in ("L", "T"):
        return tuple(node[1])
    if kind == "U":
        return (node[2],)
    if kind in ("S",):
        return (node[1], node[2])
    if kind == "B":
        return (node[2], node[3])
    return ()


def _statement_end(toks: list[str], start: int) -> int:
    try:
        return toks.index(";", start)
    except ValueError:
        return len(toks)


def _depth(toks: list[str]) -> int:
    return (
        toks.count("(") + toks.count("[") + toks.count("{")
        - toks.count(")") - toks.count("]") - toks.count("}")
    )  # fmt: skip


def _is_name(tok: str) -> bool:
    # Tokens are whole: one starting with an ASCII letter or _ is all name characters.
    return tok[:1] in _NAME_START and tok not in _RESERVED


def _is_dotted(toks: list[str]) -> bool:
    return len(toks) % 2 == 1 and all(
        _is_name(t) if k % 2 == 0 else t == "." for k, t in enumerate(toks)
    )


def _string(tok: str) -> str:
    """The value of a plain string token."""
    if len(tok) < 2 or tok[0] not in "'\"" or tok[-1] != tok[0]:
        raise _Unsure
    return tok[1:-1]


def _constant(tok: str) -> str:
    """``ast.unparse`` of a literal token, when that is certain."""
    first = tok[0]
    if first in "'\"":
        return "'" + _string(tok) + "'"
    if first.isdigit():
        if tok.isdigit():
            if tok != str(int(tok)):  # leading zeros
                raise _Unsure
            return tok
        try:
            if repr(float(tok)) == tok and "_" not in tok:
                return tok
        except ValueError:
            pass
        raise _Unsure
    if tok in _CONSTANTS:
        return tok
    raise _Unsure


class _Reader:
    """An expression in ``toks[start:end]``, read left to right."""

    def __init__(self, toks: list[str], start: int, end: int) -> None:
        self.toks = toks
        self.i = start
        self.end = end

    def peek(self) -> str:
        return self.toks[self.i] if self.i < self.end else ""

    def take(self, expected: str) -> None:
        if self.peek() != expected:
            raise _Unsure
        self.i += 1

    def done(self) -> None:
        if self.i != self.end:
            raise _Unsure

    def exprlist(self) -> Expr:
        """``a`` or ``a, b`` (a tuple without brackets)."""
        first = self.expr()
        if self.peek() != ",":
            return first
        elts = [first]
        while self.peek() == ",":
            self.i += 1
            if self.i == self.end or self.peek() in ("=", ")"):
                break
            elts.append(self.expr())
        return ("T", tuple(elts))

    def expr(self) -> Expr:
        left = self.term()
        op = self.peek()
        if op in _BINOPS:
            self.i += 1
            right = self.term()
            if left[0] == "U" or right[0] == "U" or self.peek() in _BINOPS:
                raise _Unsure  # precedence and parentheses: left to ast
            return ("B", op, left, right)
        return left

    def term(self) -> Expr:
        op = self.peek()
        if op in _UNARY:
            self.i += 1
            return ("U", op, self.primary())
        return self.primary()

    def primary(self) -> Expr:
        i = self.i
        if i >= self.end:
            raise _Unsure
        toks = self.toks
        tok = toks[i]
        self.i = i = i + 1
        if tok[:1] in _NAME_START and tok not in _RESERVED and (i == self.end or toks[i] in _ENDS):
            return ("N", tok)  # the commonest argument: a bare name
        if tok == "[":
            return ("L", self.items("]"))
        if tok == "(":
            elts = self.items(")")
            if len(elts) == 1 and self.toks[self.i - 2] != ",":
                raise _Unsure  # a parenthesised expression, not a tuple
            return ("T", elts)
        if not _is_name(tok):
            return ("C", _constant(tok))
        node: Expr = ("N", tok)
        while True:
            tok = self.peek()
            if tok == ".":
                self.i += 1
                attr = self.peek()
                if not _is_name(attr):
                    raise _Unsure
                self.i += 1
                node = ("A", node, attr)
            elif tok == "(":
                self.i += 1
                node = self.call(node)
            elif tok == "[":
                self.i += 1
                index = self.term()
                self.take("]")
                node = ("S", node, index)
            else:
                return node

    def items(self, close: str) -> tuple[Expr, ...]:
        elts: list[Expr] = []
        while self.peek() != close:
            elts.append(self.expr())
            if self.peek() != close:
                self.take(",")
        self.i += 1
        return tuple(elts)

    def call(self, func: Expr) -> Expr:
        args: list[Expr] = []
        kwargs: list[tuple[str, Expr]] = []
        toks = self.toks
        while self.peek() != ")":
            if self.i + 1 < self.end and toks[self.i + 1] == "=":
                name = toks[self.i]
                if not _is_name(name) or any(k == name for k, _ in kwargs):
                    raise _Unsure
                self.i += 2
                kwargs.append((name, self.expr()))
            elif kwargs:
                raise _Unsure  # a positional argument after a keyword one
            else:
                args.append(self.expr())
            if self.peek() != ")":
                self.take(",")
        self.i += 1
        return ("K", func, tuple(args), tuple(kwargs))


class _Statement(_Reader):
    """One simple statement ``toks[start:end]`` of a forward body."""

    def __init__(self, fn: _Function, toks: list[str], start: int, end: int, line: int) -> None:
        super().__init__(toks, start, end)
        self.fn = fn
        self.line = line

    def run(self) -> None:
        fn, toks, i, end = self.fn, self.toks, self.i, self.end
        head = toks[i]
        if head == "return":
            self.i += 1
            value = None if self.i == end else self.exprlist()
            self.done()
            fn._add("output", op="output", target="output",
                    args=(_unparse(value),) if value is not None else (),
                    inputs=self.reads(value), line=self.line)  # fmt: skip
            return
        if head == "pass" and end == i + 1:
            return
        if not _is_name(head):
            raise _Unsure
        nxt = toks[i + 1] if i + 1 < end else ""
        if nxt == ":":
            annotation = _string(toks[i + 2]) if i + 2 < end else _fail()
            self.i = i + 3
            if self.i == end:
                return  # a bare annotation is no node
            self.take("=")
            self.assign(head, self.exprlist(), annotation)
        elif nxt == "=":
            # a = b = None frees names (several targets: no node); a = value is a node
            targets = [head]
            self.i = i + 2
            while self.i + 1 < end and toks[self.i + 1] == "=" and _is_name(toks[self.i]):
                targets.append(toks[self.i])
                self.i += 2
            value = self.exprlist()
            self.done()
            if len(targets) == 1:
                self.assign(head, value, "")
        elif nxt in ("+=", "-=", "*=", "/="):
            self.i = i + 2
            self.exprlist()
            self.done()
        elif nxt == ",":
            self.unpack()
        else:
            raise _Unsure

    def assign(self, name: str, value: Expr, annotation: str) -> None:
        self.done()
        fn = self.fn
        if value == ("C", "None") and name in fn.fields:
            return
        if value[0] == "N" and value[1] in fn.unused_params:
            old_name = str(value[1])
            old = fn.fields.pop(old_name)
            fn.order[fn.order.index(old_name)] = name
            fn.unused_params.discard(old_name)
            fn.fields[name] = {**old, "name": name, "annotation": annotation or old["annotation"]}
            return
        fields = self.classify(value)
        fn._add(name, annotation=annotation, line=self.line, inputs=self.reads(value), **fields)

    def unpack(self) -> None:
        # a, b = value
        names: list[str] = []
        while True:
            tok = self.peek()
            if not _is_name(tok):
                raise _Unsure
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
        fn = self.fn
        if value[0] == "K" and _unparse(value[1]).endswith("tree_flatten_spec"):
            # Joint graphs take pytrees: the flattened names are the real placeholders,
            # the pytree parameters only the printed signature (as in graph_text).
            for wrapper in self.reads(value):
                if wrapper in fn.unused_params:
                    fn.unused_params.discard(wrapper)
                    fn.order.remove(wrapper)
                    del fn.fields[wrapper]
            for name in names:
                fn._add(name, op="placeholder", target=name, line=self.line)
            return
        for name in names:
            self.fn._add(name, op="call_function", target="operator.getitem",
                         args=(_unparse(value),), inputs=self.reads(value),
                         line=self.line)  # fmt: skip

    # -- what the ast path derives from an expression ----------------------------------

    def reads(self, value: Expr | None) -> tuple[str, ...]:
        """Names of nodes in ``value``, breadth first as ``ast.walk`` visits them."""
        if value is None:
            return ()
        fields = self.fn.fields
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
            elif kind in ("L", "T"):
                todo.extend(node[1])
            elif kind == "U":
                todo.append(node[2])
            elif kind in ("S",):
                todo.append(node[1])
                todo.append(node[2])
            elif kind == "B":
                todo.append(node[2])
                todo.append(node[3])
        return tuple(seen)

    def classify(self, value: Expr) -> dict[str, object]:
        kind = value[0]
        if kind == "K":
            func: Expr = value[1]
            args = tuple(_unparse(a) for a in value[2])
            kwargs = {k: _unparse(v) for k, v in value[3]}
            root = _root(func)
            if root == "self" and func[0] == "A":
                return {"op": "call_module", "target": _unparse(func)[len("self."):],
                        "args": args, "kwargs": kwargs}  # fmt: skip
            if func[0] == "A" and root in self.fn.fields:
                return {"op": "call_method", "target": func[2],
                        "args": (_unparse(func[1]), *args), "kwargs": kwargs}  # fmt: skip
            return {"op": "call_function", "target": _unparse(func), "args": args,
                    "kwargs": kwargs}  # fmt: skip
        if kind == "A" and _root(value) == "self":
            return {"op": "get_attr", "target": _unparse(value)[len("self.") :]}
        if kind == "B":
            return _operator(_BINOPS[str(value[1])], value[2], value[3])
        if kind == "U":
            return _operator(_UNARY[str(value[1])], value[2])
        if kind == "S":
            return _operator("getitem", value[1], value[2])
        return {"op": "call_function", "target": "<expr>", "args": (_unparse(value),)}


def _fail() -> str:
    raise _Unsure


def _operator(name: str, *operands: Expr) -> dict[str, object]:
    return {"op": "call_function", "target": f"operator.{name}",
            "args": tuple(_unparse(o) for o in operands)}  # fmt: skip


def _root(node: Expr) -> str | None:
    while node[0] == "A":
        node = node[1]
    return str(node[1]) if node[0] == "N" else None


def _unparse(node: Expr) -> str:
    """What ``ast.unparse`` prints for the same expression."""
    kind = node[0]
    if kind in ("N", "C"):
        return str(node[1])
    if kind == "A":
        return f"{_unparse(node[1])}.{node[2]}"
    if kind == "K":
        parts = [_unparse(a) for a in node[2]]
        parts += [f"{k}={_unparse(v)}" for k, v in node[3]]
        return f"{_unparse(node[1])}({', '.join(parts)})"
    if kind == "S":
        return f"{_unparse(node[1])}[{_unparse(node[2])}]"
    if kind == "L":
        return "[" + ", ".join(_unparse(e) for e in node[1]) + "]"
    if kind == "T":
        elts = [_unparse(e) for e in node[1]]
        return "(" + elts[0] + ",)" if len(elts) == 1 else "(" + ", ".join(elts) + ")"
    if kind == "U":
        op = str(node[1])
        return ("not " if op == "not" else op) + _unparse(node[2])
    return f"{_unparse(node[2])} {node[1]} {_unparse(node[3])}"
