"""What each family of Python 3.10-3.13 opcodes means as Python syntax.

The bytecode differs between versions (3.10 has ``BINARY_ADD``, 3.11 ``BINARY_OP``;
3.11 and 3.12 push NULL below a callable, 3.13 above it; 3.13 fuses ``LOAD_FAST_LOAD_FAST``);
these tables and ``instructions`` bring them to one vocabulary, so the machine in
``machine.py`` reads every version with one set of rules.
"""

from __future__ import annotations

import ast
import dis
import sys
from dataclasses import dataclass
from types import CodeType
from typing import Any

# 3.13 pushes NULL after the callable (``callable, self_or_null``), earlier versions before
NULL_AFTER_CALLABLE = sys.version_info >= (3, 13)

BINARY: dict[str, type[ast.operator]] = {
    "+": ast.Add,
    "-": ast.Sub,
    "*": ast.Mult,
    "/": ast.Div,
    "//": ast.FloorDiv,
    "%": ast.Mod,
    "**": ast.Pow,
    "@": ast.MatMult,
    "<<": ast.LShift,
    ">>": ast.RShift,
    "&": ast.BitAnd,
    "|": ast.BitOr,
    "^": ast.BitXor,
}

# 3.10's one opcode per operator, named as BINARY_OP's argrepr is in 3.11+
BINARY_3_10 = {
    "ADD": "+",
    "SUBTRACT": "-",
    "MULTIPLY": "*",
    "TRUE_DIVIDE": "/",
    "FLOOR_DIVIDE": "//",
    "MODULO": "%",
    "POWER": "**",
    "MATRIX_MULTIPLY": "@",
    "LSHIFT": "<<",
    "RSHIFT": ">>",
    "AND": "&",
    "OR": "|",
    "XOR": "^",
}

# in-place operators mutate lists and tensors: ``operator.iadd(a, b)`` keeps that
INPLACE_FUNCTION = {
    "+": "iadd",
    "-": "isub",
    "*": "imul",
    "/": "itruediv",
    "//": "ifloordiv",
    "%": "imod",
    "**": "ipow",
    "@": "imatmul",
    "<<": "ilshift",
    ">>": "irshift",
    "&": "iand",
    "|": "ior",
    "^": "ixor",
}

COMPARE: dict[str, type[ast.cmpop]] = {
    "<": ast.Lt,
    "<=": ast.LtE,
    "==": ast.Eq,
    "!=": ast.NotEq,
    ">": ast.Gt,
    ">=": ast.GtE,
}

UNARY: dict[str, type[ast.unaryop]] = {
    "UNARY_NEGATIVE": ast.USub,
    "UNARY_POSITIVE": ast.UAdd,
    "UNARY_INVERT": ast.Invert,
    "UNARY_NOT": ast.Not,
}

# opcodes that change nothing a decompiled function needs to say
NO_OPS = frozenset(
    {
        "NOP",
        "RESUME",
        "CACHE",
        "PRECALL",
        "EXTENDED_ARG",
        "MAKE_CELL",
        "COPY_FREE_VARS",
        "POP_BLOCK",
        "SETUP_FINALLY",
        "SETUP_CLEANUP",
        "SETUP_LOOP",
        "TO_BOOL",  # 3.13: the jump that follows tests truth the same way
        "NOT_TAKEN",
        "END_FOR",
        "GEN_START",
        "RESUME_CHECK",
        "INSTRUMENTED_RESUME",
    }
)


@dataclass(frozen=True, slots=True)
class Instr:
    """One instruction, with its jump target resolved to an index in the list."""

    index: int
    offset: int
    opname: str
    arg: int | None
    argval: Any
    argrepr: str
    target: int | None  # index of the jump target, for jumps
    line: int | None


def instructions(code: CodeType) -> list[Instr]:
    """``dis.get_instructions(code)`` with jump targets as indices into the list."""
    raw = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
    at = {ins.offset: n for n, ins in enumerate(raw)}
    jumps = set(dis.hasjrel) | set(dis.hasjabs)
    out = []
    line: int | None = None
    for n, ins in enumerate(raw):
        starts = getattr(ins, "starts_line", None)
        # 3.13's starts_line is a bool and the number is ``line_number``
        number = getattr(ins, "line_number", None) if sys.version_info >= (3, 13) else starts
        if isinstance(number, int) and not isinstance(number, bool):
            line = number
        target = at.get(ins.argval) if ins.opcode in jumps else None
        out.append(
            Instr(
                index=n,
                offset=ins.offset,
                opname=ins.opname,
                arg=ins.arg,
                argval=ins.argval,
                argrepr=ins.argrepr,
                target=target,
                line=line,
            )
        )
    return out


def signature(code: CodeType) -> ast.arguments:
    """The parameters of the function whose code this is."""
    positional = code.co_argcount
    kwonly = code.co_kwonlyargcount
    posonly = getattr(code, "co_posonlyargcount", 0)
    names = tuple(local_name(n) for n in code.co_varnames)
    args = [ast.arg(arg=name) for name in names[:positional]]
    at = positional + kwonly
    vararg = kwarg = None
    if code.co_flags & 0x04:  # CO_VARARGS
        vararg = ast.arg(arg=names[at])
        at += 1
    if code.co_flags & 0x08:  # CO_VARKEYWORDS
        kwarg = ast.arg(arg=names[at])
    return ast.arguments(
        posonlyargs=args[:posonly],
        args=args[posonly:],
        vararg=vararg,
        kwonlyargs=[ast.arg(arg=n) for n in names[positional : positional + kwonly]],
        kw_defaults=[None] * kwonly,
        kwarg=kwarg,
        defaults=[],
    )


def local_name(name: str) -> str:
    """A local variable's name as source can write it: a comprehension function's
    iterator argument ``.0`` is ``_iter0``."""
    return name if name.isidentifier() else "_iter" + "".join(c for c in name if c.isalnum())
