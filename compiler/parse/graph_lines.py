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

from compiler.model import Node, SourceLoc
from compiler.parse.graph_text import Record, comment_source

if TYPE_CHECKING:
    from compiler.parse.graph_text import _Function, _Parser

# One token: a comment, a name, a number, a plain string (printable ASCII without quotes
# or backslashes, so its ``ast.unparse`` form is known), an operator, or any other
# single character (which no rule below accepts).
_TOKEN = re.compile(
    r"""[ ]*(\#.*|[A-Za-z_][A-Za-z0-9_]*|\d[0-9.]*(?:[eE][-+]?\d+)?[A-Za-z0-9_.]*"""
    r"""|'[ !#-&(-\[\]-~]*'|"[ !#-&(-\[\]-~]*"|\*\*|//|==|!=|<=|>=|[-+*/]=|\S)""",
    re.ASCII,
)
# Characters whose meaning to Python's tokenizer this reader does not model.
_UNMODELLED = "\t\r\f\v\x00\\"
_CLASS_NAME = re.compile(r"(\w+)>")
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
    r"""\(([\w.=, -]*(?:\[[\w., -]*\][\w.=, -]*)*)\)(?:; +((?:[A-Za-z_]\w* = )+)None)?\Z""",
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
# the arguments of a call of bare names only
_NAMES = re.compile(r"[A-Za-z_]\w*(?:, [A-Za-z_]\w*)*\Z", re.ASCII)
_NONE: Expr = ("C", "None")
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
    if any(c in text for c in _UNMODELLED):  # a substring test per character: no regex pass
        return None
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return None
    if "class <" in text:
        text = _lambda_classes(text)
    try:
        return _Scanner(parser, text.split("\n")).run()
    except _Unsure:
        return None


def _lambda_classes(text: str) -> str:
    """``graph_text._ODD_CLASS.sub(r"\\1_\\2", text)`` (``class <lambda>`` becomes
    ``class _lambda`` at a line's start), by ``str.find``: the regex tries every line of
    a long text for the one header."""
    out: list[str] = []
    done = 0
    at = text.find("class <")
    while at >= 0:
        start = at
        while start and text[start - 1].isspace():
            start -= 1
        name = _CLASS_NAME.match(text, at + 7)
        if name is not None and (start == 0 or "\n" in text[start:at]):
            out += (text[done:at], "class _", name[1])
            done = name.end()
        at = text.find("class <", at + 7)
    out.append(text[done:])
    return "".join(out)


class _Scanner:
    def __init__(self, parser: _Parser, lines: list[str]) -> None:
        self.parser = parser
        self.lines = lines
        self.out: list[Node] = []
        self.stack: list[_Block] = []
        self.funcs: dict[str, tuple[Expr, str]] = {}
        self.args: dict[str, _Argument | None] = {}
        self.classes = 0
        # the user source location in force, as ``_Parser.sources`` would say it: the
        # last ``# File:`` comment, reset by a ``class``/``def`` line
        self.current: SourceLoc | None = None
        self.comments: dict[str, tuple[bool, SourceLoc | None]] = {}

    def run(self) -> tuple[Node, ...]:
        lines = self.lines
        i, n = 0, len(lines)
        stack = self.stack
        call_line, name_line = _CALL_LINE.match, _NAME_LINE.match
        body: _Block | None = None  # the open ``forward``, if the innermost block is one
        while i < n:
            line = lines[i]
            i += 1  # now the 1-based number of ``line``
            bare = line.lstrip(" ")
            if not bare:
                continue
            if bare[0] == "#":  # comments: no statement, maybe a source location
                self._comment(line)
                continue
            indent = len(line) - len(bare)
            if body is not None:
                call = call_line(line)
                if call is not None:
                    if self._call_line(call, body, i, indent):
                        continue
                else:
                    alias = name_line(line)
                    if alias is not None and self._name_line(alias, body, i, indent):
                        continue
            if bare.startswith(("class ", "def ")):
                self.current = None
            toks: list[str] = _TOKEN.findall(line)
            first = i
            if toks and toks[-1][0] == "#":
                toks.pop()
            if not toks:
                continue
            depth = _depth(toks)
            where: list[int] | None = None
            # the source in force at each line of a statement that spans several: a
            # statement after `;` on a later line has that line's
            sources: dict[int, SourceLoc | None] | None = None
            while depth:
                if depth < 0 or i >= n:
                    raise _Unsure
                if where is None:
                    where = [first] * len(toks)
                if sources is None:
                    sources = {first: self.current}
                more_line = lines[i]
                i += 1
                more_bare = more_line.lstrip(" ")
                if more_bare[:1] == "#":
                    self._comment(more_line)
                else:
                    if more_bare.startswith(("class ", "def ")):
                        self.current = None
                    sources[i] = self.current
                more: list[str] = _TOKEN.findall(more_line)
                if more and more[-1][0] == "#":
                    more.pop()
                depth += _depth(more)
                toks += more
                where += [i] * len(more)
            self._logical(toks, indent, first, where, sources)
            body = stack[-1] if stack and stack[-1].fn is not None else None
        self._close(0)
        if self.stack or not self.classes:
            raise _Unsure
        return tuple(self.out)

    def _comment(self, line: str) -> None:
        # the same reading as _Parser._source_by_line, once per distinct comment (a
        # model's layers repeat the same source lines)
        stripped = line.strip()
        effect = self.comments.get(stripped)
        if effect is None:
            effect = self.comments[stripped] = comment_source(stripped)
        if effect[0]:
            self.current = effect[1]

    def _arg(self, piece: str) -> _Argument | None:
        """``_argument``, once per distinct text."""
        arg: _Argument | None = self.args.get(piece, _UNREAD)
        if arg is _UNREAD:
            arg = self.args[piece] = _argument(piece)
        return arg

    def _call_args(self, args_text: str) -> list[_Argument] | None:
        """The arguments of a ``_CALL_LINE``, or None where Python would refuse them (a
        positional argument after a keyword one, a keyword given twice)."""
        read: list[_Argument] = []
        keywords: set[str] = set()
        for piece in _pieces(args_text):
            arg = self._arg(piece)
            if arg is None:
                return None
            kw = arg[0]
            if kw is None:
                if keywords:
                    return None
            elif kw in keywords:
                return None
            else:
                keywords.add(kw)
            read.append(arg)
        return read

    def _name_line(self, m: re.Match[str], top: _Block, line: int, indent: int) -> bool:
        """``l_x_ = L_x_``, ``w: "ann" = self.weight``, ``y = x + 1``, ``y = x[0]``
        without the tokenizer."""
        if top.body == -1:
            if indent <= top.indent:
                return False
        elif indent != top.body:
            return False
        name, annotation, value_text, tail = m[2], m[3] or "", m[4], m[5]
        if name in _RESERVED:
            return False
        names = tail[:-3].split(" = ") if tail else []
        if not _RESERVED.isdisjoint(names):
            return False
        fn = top.fn
        assert fn is not None
        fields = fn.fields
        record: Record | None = None
        if " " in value_text:  # `a + 1`, `a == b`: an operator
            left_text, op, right_text = value_text.split()
            left, right = self._arg(left_text), self._arg(right_text)
            if left is None or right is None or left[0] is not None or right[0] is not None:
                return False
            reads = [r for a in (left, right) if a[3] for r in a[3][0] if r in fields]
            record = (name, "call_function", f"operator.{_BINOPS[op]}", (left[2], right[2]), {},
                      tuple(dict.fromkeys(reads)), annotation, line, self.current)  # fmt: skip
        elif "[" in value_text:  # `a[0]`: a subscript
            base, _, index_text = value_text[:-1].partition("[")
            index = self._arg(index_text)
            if base in _RESERVED or index is None:
                return False
            reads = [base] if base in fields else []
            record = (name, "call_function", "operator.getitem", (base, index[2]), {},
                      tuple(reads), annotation, line, self.current)  # fmt: skip
        else:
            parts = value_text.split(".")
            if not _RESERVED.isdisjoint(parts):
                return False
            if len(parts) > 1 and parts[0] == "self" and "self" not in fields:
                # a parameter or buffer
                record = (name, "get_attr", value_text[5:], (), {}, (), annotation, line,
                          self.current)  # fmt: skip
        if top.body == -1:
            top.body = indent
        if record is not None:
            if name not in fields:
                fn.order.append(name)
            fields[name] = record
        elif value_text in fn.unused_params:  # `l_x_ = L_x_`: the placeholder renamed
            fn.rename(value_text, name, annotation)
        else:
            tree: Expr = ("N", parts[0])
            for part in parts[1:]:
                tree = ("A", tree, part)
            _Statement(fn, [], 0, 0, line, self.current).assign(name, tree, annotation)
        if len(names) == 1:
            _Statement(fn, [], 0, 0, line, self.current).assign(names[0], _NONE, "")
        return True

    def _call_line(self, m: re.Match[str], top: _Block, line: int, indent: int) -> bool:
        """``name: "ann" = f.g(args);  a = b = None`` without the tokenizer; False when
        the line needs the general reader (a dedent, an argument it does not know)."""
        if top.body == -1:
            if indent <= top.indent:
                return False
        elif indent != top.body:
            return False
        _, name, annotation, func, args_text, tail = m.groups()
        if name in _RESERVED:
            return False
        known = self.funcs.get(func)
        if known is None:
            parts = func.split(".")
            if not _RESERVED.isdisjoint(parts):
                return False
            func_tree: Expr = ("N", parts[0])
            for part in parts[1:]:
                func_tree = ("A", func_tree, part)
            known = self.funcs[func] = (func_tree, parts[0])
        if tail:
            names = tail[:-3].split(" = ")
            if not _RESERVED.isdisjoint(names):
                return False
        else:
            names = []
        fn = top.fn
        assert fn is not None
        fields = fn.fields
        root = known[1]
        # `x.view(...)` on a node x: a method call (receiver first), read here; a
        # submodule call and longer receivers take the general classification
        method = root in fields
        if root == "self" or (method and known[0][1] != ("N", root)):
            read = self._call_args(args_text)
            if read is None:
                return False
            if top.body == -1:
                top.body = indent
            value = ("K", known[0], tuple(a[1] for a in read if a[0] is None),
                     tuple((a[0], a[1]) for a in read if a[0] is not None))  # fmt: skip
            _Statement(fn, [], 0, 0, line, self.current).assign(name, value, annotation)
        else:
            texts: list[str] = []
            kw_texts: dict[str, str] = {}
            seen: dict[str, None] = {}
            deep = False  # a node's name below an argument's top: the breadth-first walk
            if not args_text:
                pass
            elif _NAMES.match(args_text) and _RESERVED.isdisjoint(bare := args_text.split(", ")):
                texts = bare  # bare names only: the commonest arguments
                for r in texts:
                    if r in fields:
                        seen[r] = None
            else:
                cache = self.args
                for piece in _pieces(args_text):
                    arg = cache.get(piece, _UNREAD)
                    if arg is _UNREAD:
                        r = piece.strip(" ")
                        if r.isidentifier() and r not in _RESERVED:  # ASCII: _CALL_LINE
                            if kw_texts:
                                return False
                            texts.append(r)
                            if r in fields:
                                seen[r] = None
                            continue
                        arg = cache[piece] = _argument(piece)
                    if arg is None:
                        return False
                    kw = arg[0]
                    if kw is None:
                        if kw_texts:
                            return False
                        texts.append(arg[2])
                    elif kw in kw_texts:
                        return False
                    else:
                        kw_texts[kw] = arg[2]
                    levels = arg[3]
                    if levels:
                        for r in levels[0]:
                            if r in fields:
                                seen[r] = None
                        if not deep:
                            for r in arg[4]:
                                if r in fields:
                                    deep = True
            if method:
                # the receiver is one level below the arguments' tops (Call -> Attribute
                # -> Name), before anything deeper
                seen[root] = None
            if deep:
                seen = _walk(fields, root if method else None, self._call_args(args_text) or [])
            if top.body == -1:
                top.body = indent
            if name not in fields:
                fn.order.append(name)
            if method:
                fields[name] = (name, "call_method", known[0][2], (root, *texts), kw_texts,
                                tuple(seen), annotation, line, self.current)  # fmt: skip
            else:
                fields[name] = (name, "call_function", func, tuple(texts), kw_texts,
                                tuple(seen), annotation, line, self.current)  # fmt: skip
        if len(names) == 1 and names[0] not in fields:
            # `a = None` frees a node; of a name that is none, it is an expression node
            _Statement(fn, [], 0, 0, line, self.current).assign(names[0], _NONE, "")
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

    def _logical(
        self,
        toks: list[str],
        indent: int,
        line: int,
        where: list[int] | None,
        sources: dict[int, SourceLoc | None] | None,
    ) -> None:
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
            self._body(toks, line, top.fn, where, sources)
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
        from compiler.parse.graph_text import _Function

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

    def _body(
        self,
        toks: list[str],
        line: int,
        fn: _Function,
        where: list[int] | None,
        sources: dict[int, SourceLoc | None] | None,
    ) -> None:
        start = 0
        n = len(toks)
        while start < n:
            end = _statement_end(toks, start)
            if end == start:
                raise _Unsure
            if where is None or sources is None:
                _Statement(fn, toks, start, end, line, self.current).run()
            else:  # a statement's line is where it starts, as ast.stmt.lineno
                at = where[start]
                _Statement(fn, toks, start, end, at, sources[at]).run()
            start = end + 1


# keyword or None, expression, its unparsed text, the names at each level below it,
# the names below its top level
_Argument = tuple[str | None, Expr, str, tuple[tuple[str, ...], ...], tuple[str, ...]]


def _pieces(args_text: str) -> list[str]:
    """A ``_CALL_LINE`` argument list cut at its top-level commas."""
    if not args_text:
        return []
    return _TOP_COMMA.split(args_text) if "[" in args_text else args_text.split(",")


def _walk(fields: dict[str, Any], receiver: str | None, args: list[_Argument]) -> dict[str, None]:
    """The nodes a call reads, breadth first as ``ast.walk``: level k of every child
    (function, arguments, keywords) before level k + 1 of any; the function's names
    are no nodes, but a method call's receiver is (one level below the arguments)."""
    levels_of = [a[3] for a in args]
    if receiver is not None:
        levels_of.insert(0, ((), (receiver,)))
    seen: dict[str, None] = {}
    for depth in range(max(map(len, levels_of), default=0)):
        for lv in levels_of:
            if depth < len(lv):
                for r in lv[depth]:
                    if r in fields:
                        seen[r] = None
    return seen


def _argument(piece: str) -> _Argument | None:
    """One call argument's text read, or None."""
    name = piece.strip(" ")
    if name.isidentifier() and name.isascii() and name not in _RESERVED:
        return None, ("N", name), name, ((name,),), ()
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
    return kw, value, _unparse(value), levels, tuple(r for lv in levels[1:] for r in lv)


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
    """One simple statement ``toks[start:end]`` of a forward body, at ``line`` under the
    user source location ``source``."""

    def __init__(
        self,
        fn: _Function,
        toks: list[str],
        start: int,
        end: int,
        line: int,
        source: SourceLoc | None,
    ) -> None:
        super().__init__(toks, start, end)
        self.fn = fn
        self.line = line
        self.source = source

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
        if value == _NONE and name in fn.fields:
            return
        if value[0] == "N" and value[1] in fn.unused_params:
            fn.rename(str(value[1]), name, annotation)
            return
        fields = self.classify(value)
        fn._add(name, annotation=annotation, line=self.line, inputs=self.reads(value),
                source=self.source, **fields)  # fmt: skip

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
                         line=self.line, source=self.source)  # fmt: skip

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

    def classify(self, value: Expr) -> dict[str, Any]:
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


def _operator(name: str, *operands: Expr) -> dict[str, Any]:
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
