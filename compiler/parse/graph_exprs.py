"""The expressions of torch's graph text: tokens, a small recursive reader, and what
Python's ``ast`` would say of them (``unparse``, the names in walk order).

Torch prints a small subset of Python in a graph's ``forward``: names, attributes, calls
with keywords, subscripts, list, tuple and dict displays, literals, one unary or binary
operator. The reader accepts that subset and refuses (``Unreadable``) anything else,
including what Python itself would read differently or reject. Nothing is evaluated.
"""

from __future__ import annotations

import keyword
import re
import string
from typing import Any

# One token: a comment, a name, a number, a string (backslash escapes included, as
# ``repr`` prints one: an assertion message quotes a node's name; ``string_value`` refuses
# an escape Python reads its own way), an operator, or any other single character (which
# no rule below accepts).
# (Brackets and separators come right after names: they are most tokens.)
TOKEN = re.compile(
    r"""[ ]*(\#.*|[A-Za-z_][A-Za-z0-9_]*|[(),\[\]{}:;.]"""
    r"""|\d[0-9.]*(?:[eE][-+]?\d+)?[A-Za-z0-9_.]*"""
    r"""|'[^'\\\n]*(?:\\.[^'\\\n]*)*'|"[^"\\\n]*(?:\\.[^"\\\n]*)*["]"""
    r"""|\*\*=?|//=?|<<=?|>>=?|[=!<>]=|[-+*/%@&|^]=|\S)""",
    re.ASCII,
)
# The escapes a string may hold: the one-character ones and \x, \u, \U (an octal or
# named escape, or an unknown one, is refused).
_ESCAPE = re.compile(
    r"""\\(?:([\\'"abfnrtv])|x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8}))"""
)
_SIMPLE_ESCAPES = {
    "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f", "n": "\n",
    "r": "\r", "t": "\t", "v": "\v",
}  # fmt: skip
NAME_START = frozenset(string.ascii_letters + "_")
RESERVED = frozenset([*keyword.kwlist, "__debug__"])
_CONSTANTS = {"None", "True", "False"}
BINOPS = {
    "+": "add", "-": "sub", "*": "mul", "/": "truediv", "//": "floordiv", "%": "mod",
    "**": "pow", "@": "matmul", "&": "and_", "|": "or_", "^": "xor", "<<": "lshift",
    ">>": "rshift",
    "==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge",
}  # fmt: skip
UNARY = {"-": "neg", "+": "pos", "~": "invert", "not": "not_"}
# ``x += y``, torch's in-place operators (the node is the ``iadd = x`` after them)
AUGMENTED = frozenset(["+=", "-=", "*=", "/=", "//=", "%=", "**=", "@=", "&=", "|=", "^=",
                       "<<=", ">>="])  # fmt: skip
# Tokens after which a name is complete (the statement's end is ";" or past the list).
_ENDS = frozenset([",", ")", "]", "}", ";"])

# An expression: (kind, ...) with kind one of
#   "N" name, "C" constant (its unparsed text), "A" attribute (base, attr),
#   "K" call (func, args, ((kw, value), ...)), "S" subscript (value, index),
#   "L" list / "T" tuple / "E" set (elements), "D" dict ((key, value), ...),
#   "U" unary (op, operand), "B" binary (op, l, r).
# (Tagged tuples, not classes: a big graph makes hundreds of thousands of them.)
Expr = tuple[Any, ...]
NONE: Expr = ("C", "None")


class Unreadable(Exception):
    """Text outside the subset of Python torch prints in a graph; says what it found."""


def depth(toks: list[str]) -> int:
    """How many brackets ``toks`` leaves open."""
    return (
        toks.count("(") + toks.count("[") + toks.count("{")
        - toks.count(")") - toks.count("]") - toks.count("}")
    )  # fmt: skip


def is_name(tok: str) -> bool:
    """Whether a token is a name Python would take as one (not a keyword)."""
    # Tokens are whole: one starting with an ASCII letter or _ is all name characters.
    return tok[:1] in NAME_START and tok not in RESERVED


def is_dotted(toks: list[str]) -> bool:
    """Whether ``toks`` is ``a.b.c``."""
    return len(toks) % 2 == 1 and all(
        is_name(t) if k % 2 == 0 else t == "." for k, t in enumerate(toks)
    )


def string_value(tok: str) -> str:
    """The value of a string token."""
    if len(tok) < 2 or tok[0] not in "'\"" or tok[-1] != tok[0]:
        raise Unreadable(f"expected a string, found {tok!r}")
    inner = tok[1:-1]
    if "\\" not in inner:
        return inner
    pieces: list[str] = []
    done = 0
    for m in _ESCAPE.finditer(inner):
        pieces.append(inner[done : m.start()])
        simple, *codes = m.groups()
        if simple is not None:
            pieces.append(_SIMPLE_ESCAPES[simple])
        else:
            code = int(next(c for c in codes if c is not None), 16)
            if code > 0x10FFFF:
                raise Unreadable(f"an escape past the last character, {m[0]}")
            pieces.append(chr(code))
        done = m.end()
    pieces.append(inner[done:])
    if any("\\" in p for p in pieces[::2]):  # a backslash no escape above took
        raise Unreadable(f"a string escape Python reads its own way, in {tok}")
    return "".join(pieces)


def _constant(tok: str) -> str:
    """``ast.unparse`` of a literal token, when that is certain."""
    first = tok[0]
    if first in "'\"":
        return repr(string_value(tok))  # as ast.unparse prints a string
    if first.isdigit():
        if tok.isdigit():
            if tok != str(int(tok)):
                raise Unreadable(f"a number with leading zeros, {tok}")
            return tok
        try:
            if repr(float(tok)) == tok and "_" not in tok:
                return tok
        except ValueError:
            pass
        raise Unreadable(f"a number Python would print otherwise, {tok}")
    if tok in _CONSTANTS:
        return tok
    raise Unreadable(f"unexpected {tok!r}")


class Reader:
    """An expression in ``toks[start:end]``, read left to right.

    Example:
        >>> toks = TOKEN.findall("f(x, k = [1, 2])")
        >>> unparse(Reader(toks, 0, len(toks)).expr())
        'f(x, k=[1, 2])'
    """

    def __init__(self, toks: list[str], start: int, end: int) -> None:
        self.toks = toks
        self.i = start
        self.end = end

    def peek(self) -> str:
        return self.toks[self.i] if self.i < self.end else ""

    def take(self, expected: str) -> None:
        if self.peek() != expected:
            found = repr(self.peek()) if self.i < self.end else "the end"
            raise Unreadable(f"expected {expected!r}, found {found}")
        self.i += 1

    def done(self) -> None:
        if self.i != self.end:
            raise Unreadable(f"unexpected {self.toks[self.i]!r}")

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
        """One operand, or two around one binary operator (torch prints one operator a
        node: ``x * -1``, ``-x + 1``; a chain is no graph torch printed)."""
        left = self.term()
        op = self.peek()
        if op in BINOPS:
            self.i += 1
            right = self.term()
            if self.peek() in BINOPS:
                raise Unreadable("more than one binary operator in one expression")
            # -, + and ~ bind tighter than any binary operator but ``**`` on their
            # right; ``not`` looser than all
            if left[0] == "U" and (left[1] == "not" or op == "**"):
                raise Unreadable(f"{left[1]} before {op}, which Python groups the other way")
            if right[0] == "U" and right[1] == "not":
                raise Unreadable(f"not after {op}")
            return ("B", op, left, right)
        return left

    def term(self) -> Expr:
        op = self.peek()
        if op in UNARY:
            self.i += 1
            return ("U", op, self.primary())
        return self.primary()

    def primary(self) -> Expr:
        i = self.i
        if i >= self.end:
            raise Unreadable("an expression cut short")
        toks = self.toks
        tok = toks[i]
        self.i = i = i + 1
        if tok[:1] in NAME_START and tok not in RESERVED and (i == self.end or toks[i] in _ENDS):
            return ("N", tok)  # the commonest argument: a bare name
        if tok == "[":
            node: Expr = ("L", self.items("]"))
        elif tok == "(":
            elts = self.items(")")
            if len(elts) == 1 and self.toks[self.i - 2] != ",":
                raise Unreadable("a parenthesised expression")
            node = ("T", elts)
        elif tok == "{":
            node = self.dict()
        elif not is_name(tok):
            return ("C", _constant(tok))
        else:
            node = ("N", tok)
        while True:
            tok = self.peek()
            if tok == ".":
                self.i += 1
                attr = self.peek()
                if not is_name(attr):
                    raise Unreadable(f"an attribute named {attr!r}")
                self.i += 1
                node = ("A", node, attr)
            elif tok == "(":
                self.i += 1
                node = self.call(node)
            elif tok == "[":
                self.i += 1
                index = self.exprlist()
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

    def dict(self) -> Expr:
        """``{'k': v, ...}`` (constant keys only: ``**`` or a computed key is refused) or
        ``{a, b}``, a set, after its ``{``."""
        if self.peek() == "}":
            self.i += 1
            return ("D", ())
        first = self.expr()
        if self.peek() != ":":  # a set
            elts = [first]
            while self.peek() != "}":
                self.take(",")
                if self.peek() == "}":
                    break
                elts.append(self.expr())
            self.i += 1
            return ("E", tuple(elts))
        pairs: list[tuple[Expr, Expr]] = []
        key = first
        while True:
            if key[0] != "C":
                raise Unreadable("a dict key that is no literal")
            self.take(":")
            pairs.append((key, self.expr()))
            if self.peek() == "}":
                break
            self.take(",")
            if self.peek() == "}":
                break
            key = self.expr()
        self.i += 1
        return ("D", tuple(pairs))

    def call(self, func: Expr) -> Expr:
        args: list[Expr] = []
        kwargs: list[tuple[str, Expr]] = []
        toks = self.toks
        while self.peek() != ")":
            if self.i + 1 < self.end and toks[self.i + 1] == "=":
                name = toks[self.i]
                if not is_name(name):
                    raise Unreadable(f"a keyword argument named {name!r}")
                if any(k == name for k, _ in kwargs):
                    raise Unreadable(f"the keyword argument {name} given twice")
                self.i += 2
                kwargs.append((name, self.expr()))
            elif kwargs:
                raise Unreadable("a positional argument after a keyword argument")
            else:
                args.append(self.expr())
            if self.peek() != ")":
                self.take(",")
        self.i += 1
        return ("K", func, tuple(args), tuple(kwargs))


def root(node: Expr) -> str | None:
    """The name an attribute chain starts from (``a`` of ``a.b.c``), if any."""
    while node[0] == "A":
        node = node[1]
    return str(node[1]) if node[0] == "N" else None


def unparse(node: Expr) -> str:
    """What ``ast.unparse`` prints for the same expression."""
    kind = node[0]
    if kind in ("N", "C"):
        return str(node[1])
    if kind == "A":
        return f"{unparse(node[1])}.{node[2]}"
    if kind == "K":
        parts = [unparse(a) for a in node[2]]
        parts += [f"{k}={unparse(v)}" for k, v in node[3]]
        return f"{unparse(node[1])}({', '.join(parts)})"
    if kind == "S":
        index = node[2]
        if index[0] == "T" and index[1]:  # a tuple index prints without its brackets
            inner = ", ".join(unparse(e) for e in index[1])
            return f"{unparse(node[1])}[{inner}{',' if len(index[1]) == 1 else ''}]"
        return f"{unparse(node[1])}[{unparse(index)}]"
    if kind == "L":
        return "[" + ", ".join(unparse(e) for e in node[1]) + "]"
    if kind == "T":
        elts = [unparse(e) for e in node[1]]
        return "(" + elts[0] + ",)" if len(elts) == 1 else "(" + ", ".join(elts) + ")"
    if kind == "D":
        return "{" + ", ".join(f"{unparse(k)}: {unparse(v)}" for k, v in node[1]) + "}"
    if kind == "E":
        return "{" + ", ".join(unparse(e) for e in node[1]) + "}"
    if kind == "U":
        op = str(node[1])
        return ("not " if op == "not" else op) + unparse(node[2])
    return f"{unparse(node[2])} {node[1]} {unparse(node[3])}"


def children(node: Expr) -> tuple[Expr, ...]:
    """A node's children as ``ast.iter_child_nodes`` orders them (name-free ones left out;
    a keyword is a node of its own, "W", so its value is one level deeper)."""
    kind = node[0]
    if kind == "K":
        return (node[1], *node[2], *(("W", v) for _, v in node[3]))
    if kind in ("A", "W"):
        return (node[1],)
    if kind in ("L", "T", "E"):
        return tuple(node[1])
    if kind == "D":
        return (*(k for k, _ in node[1]), *(v for _, v in node[1]))
    if kind == "U":
        return (node[2],)
    if kind == "S":
        return (node[1], node[2])
    if kind == "B":
        return (node[2], node[3])
    return ()


def levels(value: Expr) -> tuple[tuple[str, ...], ...]:
    """The names in ``value`` by depth below it (0: itself), each level in walk order."""
    out: list[tuple[str, ...]] = []
    level = [value]
    while level:
        out.append(tuple(str(node[1]) for node in level if node[0] == "N"))
        below: list[Expr] = []
        for node in level:
            below.extend(children(node))
        level = below
    while out and not out[-1]:
        out.pop()
    return tuple(out)


# keyword or None, expression, its unparsed text, the names at each level below it,
# the names below its top level
Argument = tuple[str | None, Expr, str, tuple[tuple[str, ...], ...], tuple[str, ...]]
_KEYWORD = re.compile(r" *([A-Za-z_]\w*) *= *(?!=)(.*)\Z", re.ASCII)


def argument(piece: str) -> Argument | None:
    """One call argument's text (``x``, ``k = [1, 2]``) read, or None."""
    name = piece.strip(" ")
    if name.isidentifier() and name.isascii() and name not in RESERVED:
        return None, ("N", name), name, ((name,),), ()
    m = _KEYWORD.match(piece)
    kw, text = (m[1], m[2]) if m else (None, piece)
    if kw in RESERVED:
        return None
    toks: list[str] = TOKEN.findall(text)
    if not toks or toks[-1][0] == "#":
        return None
    reader = Reader(toks, 0, len(toks))
    try:
        value = reader.expr()
        reader.done()
    except (Unreadable, IndexError):
        return None
    names = levels(value)
    if kw is not None:
        names = ((), *names)  # the keyword node stands between call and value
    return kw, value, unparse(value), names, tuple(r for lv in names[1:] for r in lv)
