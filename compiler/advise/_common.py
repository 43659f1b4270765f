"""What every family of rules shares: ids for evidence links and a ranked finding."""

from __future__ import annotations

import re
from dataclasses import dataclass

from compiler.advise.findings import Evidence, Finding
from compiler.model import Compile, Exploration, SourceLoc

# problem > warning > info; the advisor sorts on this first, then on the score.
SEVERITY_ORDER = {"problem": 0, "warning": 1, "info": 2}
_RESUME = re.compile(r"^torch_dynamo_resume_in_(?P<fn>.+)_at_(?P<line>\d+)$")


@dataclass(frozen=True, slots=True)
class Ranked:
    """A finding and a number to order it among findings of the same severity:
    what it costs in comparable units (graphs, compiles, milliseconds)."""

    finding: Finding
    score: float = 0.0


def compile_key(exp: Exploration, c: Compile) -> str:
    """``Compile.key``: the compiler fills it for live captures, traces and old files."""
    del exp
    return c.key


def output_keys(c: Compile) -> list[str]:
    """``OutputCode.key`` of each output code (``forward``, ``backward``, ``#2`` ...)."""
    return [oc.key for oc in c.output_code]


def kernel_ids(c: Compile) -> list[tuple[str, str]]:
    """(kernel id, output code key) of every kernel of ``c``, ids as ``Kernel.id``."""
    out: list[tuple[str, str]] = []
    for key, oc in zip(output_keys(c), c.output_code, strict=True):
        out.extend((k.id, key) for k in oc.kernels)
    return out


def src(loc: SourceLoc | None) -> str | None:
    """The ``file:line`` source key of ``loc``."""
    return f"{loc.filename}:{loc.line}" if loc is not None and loc.line else None


def resume_of(c: Compile) -> tuple[str, int] | None:
    """(function, line) for a resume function's code name, else None."""
    m = _RESUME.match(c.code_name)
    return (m["fn"], int(m["line"])) if m else None


def plural(n: float, noun: str) -> str:
    """``1 graph``, ``3 graphs``."""
    count = f"{n:g}" if isinstance(n, float) else str(n)
    return f"{count} {noun}{'' if n == 1 else 's'}"


def finding(
    kind: str,
    severity: str,
    title: str,
    evidence: list[Evidence],
    suggestion: str,
    impact: str = "",
    score: float = 0.0,
) -> Ranked:
    """A Ranked Finding in one call, so rules read as their content."""
    return Ranked(
        Finding(
            kind=kind,
            severity=severity,
            title=title,
            evidence=tuple(evidence),
            suggestion=suggestion,
            impact=impact,
        ),
        score,
    )
