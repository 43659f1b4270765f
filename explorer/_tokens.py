"""Text as lines of pygments tokens: ``[[tokenclass, text], ...]`` per line.

The front-end builds one ``<span>`` per token with ``textContent``, so the token
texts of a line joined together must be exactly that line of the original text
(what torch emitted). When a lexer would change the text (pygments normalises
``\\r\\n`` and a BOM, for example) the line falls back to one plain token.
"""

from __future__ import annotations

import builtins
import keyword
import re
from functools import cache

from pygments.lexer import Lexer
from pygments.lexers import CppLexer, LlvmLexer, PtxLexer, PythonLexer, TextLexer
from pygments.token import STANDARD_TYPES, _TokenType

Token = list[str]  # [tokenclass, text]
Line = list[Token]

# Which lexer each kind of text gets: graphs, wrapper code and Triton are Python; C++
# kernels are C++; dis output, guard trees and Inductor IR are shown as plain text.
# Triton's lower stages: LLVM IR and PTX have pygments lexers; MLIR (TTIR, TTGIR) and
# SASS have none and go through the small regex tokenizers below.
LEXERS = {
    "python": PythonLexer,
    "cpp": CppLexer,
    "triton": PythonLexer,
    "text": TextLexer,
    "llvm": LlvmLexer,
    "ptx": PtxLexer,
}


@cache
def _lexer(language: str) -> Lexer:
    cls = LEXERS.get(language, TextLexer)
    return cls(stripnl=False, stripall=False, ensurenl=True, tabsize=0)


# Past this many lines Python text (big FX graphs) is lexed by one regex instead of
# pygments, which takes ~0.5 ms a line; same token classes, same exact text.
FAST_LINES = 500
_FAST = re.compile(
    r"(?P<c1>#[^\n]*)"
    r"|(?P<s>\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*')"
    r"|(?P<m>\b\d+(?:\.\d*)?(?:[eE][-+]?\d+)?\b)"
    r"|(?P<n>[A-Za-z_]\w*)"
    r"|(?P<o>[-+*/%=<>!&|^~@]+)"
    r"|(?P<p>[()\[\]{},.:;])"
    r"|(?P<w>\s+)"
    r"|(?P<x>.)",
    re.DOTALL,
)
_KEYWORDS = frozenset(keyword.kwlist) - {"None", "True", "False"}
_BUILTINS = frozenset(dir(builtins))


def _fast_python(text: str) -> list[tuple[str, str]]:
    out = []
    for m in _FAST.finditer(text):
        kind, value = m.lastgroup or "", m.group()
        if kind == "n":
            if value in _KEYWORDS:
                kind = "k"
            elif value in ("None", "True", "False"):
                kind = "kc"
            elif value in _BUILTINS:
                kind = "nb"
        elif kind in ("w", "x"):
            kind = ""
        out.append((kind, value))
    return out


_MLIR = re.compile(
    r"(?P<c1>//[^\n]*)"
    r"|(?P<s>\"(?:[^\"\\\n]|\\.)*\")"
    r"|(?P<nv>%[\w.$-]+)"
    r"|(?P<nd>#[\w.$-]+)"
    r"|(?P<nf>@[\w.$-]+)"
    r"|(?P<kt>![\w.$-]+|\b(?:tensor|memref|vector|ptr|[iuf]\d+|bf16|index)\b)"
    r"|(?P<m>\b0x[0-9a-fA-F]+\b|\b\d+(?:\.\d+)?(?:[eE][-+]?\d+)?\b)"
    r"|(?P<nb>\b[a-z_]+\.[\w.]+\b)"
    r"|(?P<k>\b(?:loc|module|attributes|public|private|dense|unknown|callsite|at|fused)\b)"
    r"|(?P<n>[A-Za-z_][\w$]*)"
    r"|(?P<o>->|[-+*/=<>:])"
    r"|(?P<w>\s+)"
    r"|(?P<x>.)",
    re.DOTALL,
)
_SASS = re.compile(
    r"(?P<c1>/\*.*?\*/|//[^\n]*)"
    r"|(?P<s>\"(?:[^\"\\\n]|\\.)*\")"
    r"|(?P<nv>\b(?:U?R\d+|U?P\d+|U?RZ|U?PT|SR_[\w.]+)\b)"
    r"|(?P<m>\b0x[0-9a-fA-F]+\b|\b\d+(?:\.\d+)?\b)"
    r"|(?P<k>\b[A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*\b)"
    r"|(?P<nd>\.[\w]+)"
    r"|(?P<n>[A-Za-z_][\w$]*)"
    r"|(?P<w>\s+)"
    r"|(?P<x>.)",
    re.DOTALL,
)
_REGEX_LEXERS = {"mlir": _MLIR, "sass": _SASS}


def _regex_tokens(text: str, pattern: re.Pattern[str]) -> list[tuple[str, str]]:
    return [
        ("" if m.lastgroup in ("w", "x", "n") else m.lastgroup or "", m.group())
        for m in pattern.finditer(text)
    ]


def _short(ttype: _TokenType) -> str:
    while ttype not in STANDARD_TYPES:
        ttype = ttype.parent
    return STANDARD_TYPES[ttype]


def token_lines(text: str, language: str = "text") -> list[Line]:
    """``text`` split into lines (``str.split("\\n")``), each a list of tokens.

    Args:
        text: the text exactly as torch emitted it.
        language: ``python``, ``cpp``, ``triton``, ``text``, ``llvm``, ``ptx``,
            ``mlir`` or ``sass``.

    Returns:
        One list of ``[class, text]`` pairs per line; adjacent tokens of one class
        are merged. ``"".join(t for _, t in line)`` is the original line.

    Example:
        >>> token_lines("x = 1", "python")[0][0]
        ['n', 'x']
    """
    originals = text.split("\n")
    if language == "text" or not text:
        return [[["", line]] if line else [] for line in originals]
    lines: list[Line] = [[]]
    if language in _REGEX_LEXERS:
        tokens = _regex_tokens(text, _REGEX_LEXERS[language])
    elif language == "python" and text.count("\n") > FAST_LINES:
        tokens = _fast_python(text)
    else:
        tokens = [(_short(t), v) for t, v in _lexer(language).get_tokens(text)]
    for cls, value in tokens:
        parts = value.split("\n")
        for i, part in enumerate(parts):
            if i:
                lines.append([])
            if not part:
                continue
            cur = lines[-1]
            if cur and cur[-1][0] == cls:
                cur[-1][1] += part
            else:
                cur.append([cls, part])
    out: list[Line] = []
    for i, original in enumerate(originals):
        got = lines[i] if i < len(lines) else []
        if "".join(t for _, t in got) != original:
            got = [["", original]] if original else []
        out.append(got)
    return out
