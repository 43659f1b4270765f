"""The two commonest lines of a graph's ``forward``, each read by one regular expression.

``name: "ann" = dotted.func(args);  a = b = None`` (most of every graph) and ``name =
other`` / ``name: "ann" = self.attr`` / ``name = a + 1`` / ``name = a[0]`` skip the
tokenizer: the match gives the pieces, and each distinct argument text is read once
(``graph_exprs.argument``). A line these do not fit goes to the general reader
(``graph_statements``), which gives the same nodes, only slower.
"""

from __future__ import annotations

import re
from typing import Any

from compiler.model import SourceLoc
from compiler.parse.graph_exprs import BINOPS, NONE, RESERVED, Argument, Expr, argument
from compiler.parse.graph_nodes import NodeTable, Record
from compiler.parse.graph_statements import Statement

# The commonest line, read by one match: `name: "ann" = dotted.func(args);  a = b = None`
# (no annotation where the value is no tensor: an op's tuple of outputs), its arguments
# free of double-quoted strings and nested brackets: one level of a list (`[2, 3]`) or of
# parentheses holding no list (a shape `(1, 32, -1, 64)`, a `device(type='cuda', index=0)`,
# which every factory call of every real graph prints).
_FLAT = r"[\w.=, +-]*"
_ONE_LEVEL = r"(?:\[[\w., +-]*\]|\((?:[\w.=, +-]|'[\w.:-]*')*\))"
CALL_LINE = re.compile(
    r"""( +)([A-Za-z_]\w*)(?:: "([ !#-&(-\[\]-~]*)")? = ([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)"""
    rf"""\(({_FLAT}(?:{_ONE_LEVEL}{_FLAT})*)\)(?:; +((?:[A-Za-z_]\w* = )+)None)?\Z""",
    re.ASCII,
)
# `name = other`, `name: "ann" = self.attr.path;  a = None`, `name = a - 1`, `name = a[0]`
_OPERAND = r"(?:[A-Za-z_]\w*|\d[\w.]*(?:[eE][-+]?\d+)?)"
NAME_LINE = re.compile(
    r"""( +)([A-Za-z_]\w*)(?:: "([ !#-&(-\[\]-~]*)")? = ([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"""
    rf"""|{_OPERAND} +(?:\*\*|//|[-+*/%@&|^]|[=!<>]=|[<>]) +{_OPERAND}|[A-Za-z_]\w*\[-?\d+\])"""
    r"""(?:; +((?:[A-Za-z_]\w* = )+)None)?\Z""",
    re.ASCII,
)
# the arguments of a call of bare names only
_NAMES = re.compile(r"[A-Za-z_]\w*(?:, [A-Za-z_]\w*)*\Z", re.ASCII)
_UNREAD: Any = object()  # not in the argument cache yet (None there: not readable)
# A comma outside the one level of brackets CALL_LINE allows: one that no closing bracket
# follows before an opening one.
_TOP_COMMA = re.compile(r",(?![^\[(]*[\])])")


class Block:
    """An open ``class`` or ``def``: its header's line and indent, its body's indent (-1
    before the first line), and for a ``forward`` the table of its nodes."""

    __slots__ = ("body", "fn", "indent", "line", "module")

    def __init__(self, line: int, indent: int, module: str, fn: NodeTable | None) -> None:
        self.line = line
        self.indent = indent
        self.body = -1
        self.module = module
        self.fn = fn


class LineShapes:
    """The fast lines of ``graph_lines.Scanner``, which holds the state they read."""

    def __init__(self) -> None:
        self.funcs: dict[str, tuple[Expr, str]] = {}
        self.args: dict[str, Argument | None] = {}
        # the user source location in force: the last ``# File:`` comment, reset by a
        # ``class``/``def`` line
        self.current: SourceLoc | None = None

    def arg(self, piece: str) -> Argument | None:
        """``graph_exprs.argument``, once per distinct text."""
        arg: Argument | None = self.args.get(piece, _UNREAD)
        if arg is _UNREAD:
            arg = self.args[piece] = argument(piece)
        return arg

    def call_args(self, args_text: str) -> list[Argument] | None:
        """The arguments of a ``CALL_LINE``, or None where Python would refuse them (a
        positional argument after a keyword one, a keyword given twice)."""
        read: list[Argument] = []
        keywords: set[str] = set()
        for piece in _pieces(args_text):
            arg = self.arg(piece)
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

    def name_line(self, m: re.Match[str], top: Block, line: int, indent: int) -> bool:
        """``l_x_ = L_x_``, ``w: "ann" = self.weight``, ``y = x + 1``, ``y = x[0]``
        without the tokenizer."""
        if top.body == -1:
            if indent <= top.indent:
                return False
        elif indent != top.body:
            return False
        name, annotation, value_text, tail = m[2], m[3] or "", m[4], m[5]
        if name in RESERVED:
            return False
        names = tail[:-3].split(" = ") if tail else []
        if not RESERVED.isdisjoint(names):
            return False
        fn = top.fn
        assert fn is not None
        fields = fn.fields
        record: Record | None = None
        if " " in value_text:  # `a + 1`, `a == b`: an operator
            left_text, op, right_text = value_text.split()
            left, right = self.arg(left_text), self.arg(right_text)
            if left is None or right is None or left[0] is not None or right[0] is not None:
                return False
            reads = [r for a in (left, right) if a[3] for r in a[3][0] if r in fields]
            record = (name, "call_function", f"operator.{BINOPS[op]}", (left[2], right[2]), {},
                      tuple(dict.fromkeys(reads)), annotation, line, self.current)  # fmt: skip
        elif "[" in value_text:  # `a[0]`: a subscript
            base, _, index_text = value_text[:-1].partition("[")
            index = self.arg(index_text)
            if base in RESERVED or index is None:
                return False
            reads = [base] if base in fields else []
            record = (name, "call_function", "operator.getitem", (base, index[2]), {},
                      tuple(reads), annotation, line, self.current)  # fmt: skip
        else:
            parts = value_text.split(".")
            if not RESERVED.isdisjoint(parts):
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
            Statement(fn, [], 0, 0, line, self.current).assign(name, tree, annotation)
        if len(names) == 1:
            Statement(fn, [], 0, 0, line, self.current).assign(names[0], NONE, "")
        return True

    def call_line(self, m: re.Match[str], top: Block, line: int, indent: int) -> bool:
        """``name: "ann" = f.g(args);  a = b = None`` without the tokenizer; False when
        the line needs the general reader (a dedent, an argument it does not know)."""
        if top.body == -1:
            if indent <= top.indent:
                return False
        elif indent != top.body:
            return False
        _, name, annotation, func, args_text, tail = m.groups("")
        if name in RESERVED:
            return False
        known = self.funcs.get(func)
        if known is None:
            parts = func.split(".")
            if not RESERVED.isdisjoint(parts):
                return False
            func_tree: Expr = ("N", parts[0])
            for part in parts[1:]:
                func_tree = ("A", func_tree, part)
            known = self.funcs[func] = (func_tree, parts[0])
        if tail:
            names = tail[:-3].split(" = ")
            if not RESERVED.isdisjoint(names):
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
            read = self.call_args(args_text)
            if read is None:
                return False
            if top.body == -1:
                top.body = indent
            value = ("K", known[0], tuple(a[1] for a in read if a[0] is None),
                     tuple((a[0], a[1]) for a in read if a[0] is not None))  # fmt: skip
            Statement(fn, [], 0, 0, line, self.current).assign(name, value, annotation)
        else:
            texts: list[str] = []
            kw_texts: dict[str, str] = {}
            seen: dict[str, None] = {}
            deep = False  # a node's name below an argument's top: the breadth-first walk
            if not args_text:
                pass
            elif _NAMES.match(args_text) and RESERVED.isdisjoint(bare := args_text.split(", ")):
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
                        if r.isidentifier() and r not in RESERVED:  # ASCII: CALL_LINE
                            if kw_texts:
                                return False
                            texts.append(r)
                            if r in fields:
                                seen[r] = None
                            continue
                        arg = cache[piece] = argument(piece)
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
                seen = _walk(fields, root if method else None, self.call_args(args_text) or [])
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
            Statement(fn, [], 0, 0, line, self.current).assign(names[0], NONE, "")
        return True


def _pieces(args_text: str) -> list[str]:
    """A ``CALL_LINE`` argument list cut at its top-level commas."""
    if not args_text:
        return []
    if "[" in args_text or "(" in args_text:
        return _TOP_COMMA.split(args_text)
    return args_text.split(",")


def _walk(fields: dict[str, Any], receiver: str | None, args: list[Argument]) -> dict[str, None]:
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
