"""Torch's graph text read line by line: the one parser of ``parse_nodes``.

Torch prints a graph (``GraphModule.print_readable``) as a class whose ``forward`` holds
one simple statement a node: ``name: "f32[4]" = torch.ops.aten.add.Tensor(a, b);  a =
None``, placeholders as parameters, ``return (...)``; a submodule (a ``torch.cond``
branch, a flex_attention score function) as a nested class. This module follows the
blocks, indents and ``# File:`` comments; ``graph_line_shapes`` reads the commonest lines
by one regular expression each and ``graph_statements`` any other statement. Text outside
what torch prints (``graph_exprs`` says what that is) is a ``GraphTextError`` naming its
line, never a guess. Nothing is evaluated.
"""

from __future__ import annotations

import re
from typing import NoReturn

from compiler.model import Node, SourceLoc, TensorMeta
from compiler.parse.graph_exprs import TOKEN, Unreadable, depth, is_dotted, is_name, string_value
from compiler.parse.graph_line_shapes import CALL_LINE, NAME_LINE, Block, LineShapes
from compiler.parse.graph_nodes import NodeTable, comment_source
from compiler.parse.graph_statements import Statement

# Characters whose meaning to Python's tokenizer this reader does not model: a line
# break or a null anywhere; tabs and feeds outside a comment line (a ``# File:`` comment
# quotes the user's source, which may hold a tab). A backslash is read only inside
# strings and comments: elsewhere no token takes it.
_UNMODELLED = "\r\x00"
_BLANKS = "\t\f\v"
_CLASS_NAME = re.compile(r"(\w+)>")


class GraphTextError(ValueError):
    """A graph's text holds a line outside what torch prints; the message names it."""


def scan_nodes(text: str) -> tuple[Node, ...]:
    """The nodes of a graph's text, every ``forward`` of it, in order.

    Raises ``GraphTextError`` for text that is not a graph torch printed.

    Example:
        >>> text = "class M(torch.nn.Module):\\n    def forward(self, x):\\n        return x"
        >>> [n.op for n in scan_nodes(text)]
        ['placeholder', 'output']
    """
    for c in _UNMODELLED:  # a substring test per character: no regex pass
        if c in text:
            _refuse_character(text, text.index(c), c, "")
    for c in _BLANKS:
        at = text.find(c)
        while at >= 0:
            start = text.rfind("\n", 0, at) + 1
            if not text[start:at].lstrip(" ").startswith("#"):
                _refuse_character(text, at, c, " outside a comment")
            end = text.find("\n", at)
            at = -1 if end < 0 else text.find(c, end)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise GraphTextError(f"the graph text is not valid Unicode: {exc}") from None
    if "class <" in text:
        text = _lambda_classes(text)
    return Scanner(text.split("\n")).run()


def _refuse_character(text: str, at: int, c: str, where: str) -> NoReturn:
    number = text.count("\n", 0, at) + 1
    raise GraphTextError(
        f"line {number} of the graph text holds {c!r}{where}, which torch never prints in a graph"
    )


def _lambda_classes(text: str) -> str:
    """``class <lambda>`` (how AOT graphs are printed) as ``class _lambda`` at a line's
    start, by ``str.find``: a regex tries every line of a long text for the one header."""
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


class Scanner(LineShapes):
    """One graph text's lines, read once, top to bottom."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__()
        self.lines = lines
        self.out: list[Node] = []
        self.stack: list[Block] = []
        self.metas: dict[str, tuple[TensorMeta, ...]] = {}
        self.classes = 0
        self.comments: dict[str, tuple[bool, SourceLoc | None]] = {}

    def run(self) -> tuple[Node, ...]:
        lines = self.lines
        i, n = 0, len(lines)
        stack = self.stack
        call_line, name_line = CALL_LINE.match, NAME_LINE.match
        body: Block | None = None  # the open ``forward``, if the innermost block is one
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
                    if self.call_line(call, body, i, indent):
                        continue
                else:
                    alias = name_line(line)
                    if alias is not None and self.name_line(alias, body, i, indent):
                        continue
            if bare.startswith(("class ", "def ")):
                self.current = None
            first = i
            try:
                i = self._statement(line, indent, i)
            except (Unreadable, IndexError, RecursionError) as exc:
                raise _error(first, exc, lines) from None
            body = stack[-1] if stack and stack[-1].fn is not None else None
        if stack and stack[-1].body == -1:
            number = stack[-1].line
            raise _error(number, Unreadable("a class or def with no body"), lines)
        self._close(0)
        if not self.classes:
            raise GraphTextError(
                "no graph module class in the graph text (torch prints one: "
                "class GraphModule(torch.nn.Module):)"
            )
        return tuple(self.out)

    def _statement(self, line: str, indent: int, first: int) -> int:
        """Read the logical line that starts at line ``first`` (1-based); the number of
        the last physical line it takes."""
        lines, i, n = self.lines, first, len(self.lines)
        toks: list[str] = TOKEN.findall(line)
        if toks and toks[-1][0] == "#":
            toks.pop()
        if not toks:
            return i
        open_brackets = depth(toks)
        where: list[int] | None = None
        # the source in force at each line of a statement that spans several: a
        # statement after `;` on a later line has that line's
        sources: dict[int, SourceLoc | None] | None = None
        while open_brackets:
            if open_brackets < 0:
                raise Unreadable("a closing bracket that no bracket opened")
            if i >= n:
                raise Unreadable("a bracket never closed")
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
            more: list[str] = TOKEN.findall(more_line)
            if more and more[-1][0] == "#":
                more.pop()
            open_brackets += depth(more)
            toks += more
            where += [i] * len(more)
        self._logical(toks, indent, first, where, sources)
        return i

    def _comment(self, line: str) -> None:
        # once per distinct comment: a model's layers repeat the same source lines
        stripped = line.strip()
        effect = self.comments.get(stripped)
        if effect is None:
            effect = self.comments[stripped] = comment_source(stripped)
        if effect[0]:
            self.current = effect[1]

    def _close(self, indent: int) -> None:
        """Pop the blocks that ``indent`` ends."""
        stack = self.stack
        while stack and indent < stack[-1].body:
            block = stack.pop()
            if block.fn is not None:
                self.out.extend(block.fn.finish())
        if stack and indent != stack[-1].body:
            raise Unreadable("a dedent to no enclosing block's indent")

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
                raise Unreadable("a block without a body")
            stack[-1].body = indent
        else:
            self._close(indent)
            if not stack and indent:
                raise Unreadable("an indented line outside any class")
        top = stack[-1] if stack else None
        head = toks[0]
        if top is not None and top.fn is not None:
            self._body(toks, line, top.fn, where, sources)
        elif head == "class":
            self._class(toks, line, indent, top.module if top else "")
        elif head == "def" and top is not None:
            self._def(toks, indent, top.module, line, where)
        else:
            raise Unreadable("neither a class nor a forward method where one belongs")

    def _class(self, toks: list[str], line: int, indent: int, module: str) -> None:
        # class NAME: / class NAME(dotted.base):
        if len(toks) < 3 or toks[-1] != ":" or not is_name(toks[1]):
            raise Unreadable("a class header torch does not print")
        if len(toks) != 3:
            base = toks[3:-2]
            if toks[2] != "(" or toks[-2] != ")" or not is_dotted(base):
                raise Unreadable("a class header torch does not print")
        name = toks[1]
        if not self.stack:
            self.classes += 1
            name = ""  # the graph module itself; nested classes are its submodules
        self.stack.append(Block(line, indent, f"{module}.{name}" if module else name, None))

    def _def(
        self, toks: list[str], indent: int, module: str, line: int, where: list[int] | None
    ) -> None:
        # def forward(self, a: "ann", b, ...):   a graph module's one method
        if toks[:3] != ["def", "forward", "("] or toks[-2:] != [")", ":"]:
            raise Unreadable("a method other than forward(self, ...)")
        fn = NodeTable(module, self.metas)
        params: list[tuple[str, str, int]] = []
        seen: set[str] = set()
        j, end = 3, len(toks) - 2
        while j < end:
            name = toks[j]
            if not is_name(name):
                raise Unreadable(f"a parameter {name!r}")
            if name in seen:
                raise Unreadable(f"the parameter {name} twice")
            seen.add(name)
            at = where[j] if where else line
            annotation = ""
            if toks[j + 1] == ":":
                # compiled autograd's graph annotates its one input unquoted: ``: list``
                ann = toks[j + 2]
                annotation = ann if is_name(ann) else string_value(ann)
                j += 2
            params.append((name, annotation, at))
            j += 1
            if j < end:
                if toks[j] != ",":
                    raise Unreadable(f"expected ',' between parameters, found {toks[j]!r}")
                j += 1
        for name, annotation, at in params[1:]:  # skip self
            fn.add(name, op="placeholder", target=name, annotation=annotation, line=at)
            fn.unused_params.add(name)
        self.stack.append(Block(line, indent, module, fn))

    def _body(
        self,
        toks: list[str],
        line: int,
        fn: NodeTable,
        where: list[int] | None,
        sources: dict[int, SourceLoc | None] | None,
    ) -> None:
        start = 0
        n = len(toks)
        while start < n:
            end = _statement_end(toks, start)
            if end == start:
                raise Unreadable("an empty statement")
            if where is None or sources is None:
                Statement(fn, toks, start, end, line, self.current).run()
            else:  # a statement's line is where it starts, as ast.stmt.lineno
                at = where[start]
                Statement(fn, toks, start, end, at, sources[at]).run()
            start = end + 1


def _statement_end(toks: list[str], start: int) -> int:
    try:
        return toks.index(";", start)
    except ValueError:
        return len(toks)


def _error(number: int, exc: BaseException, lines: list[str]) -> GraphTextError:
    """The error of an unreadable line: its number, what was found, the line itself."""
    why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc) or "cut short"
    text = lines[number - 1].strip() if 0 < number <= len(lines) else ""
    if len(text) > 120:
        text = text[:117] + "..."
    return GraphTextError(
        f"line {number} of the graph text is not a graph statement torch prints ({why}): {text}"
    )
