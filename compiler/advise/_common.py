"""What every family of rules shares: a ranked finding (ids come from ``compiler.link.ids``)."""

from __future__ import annotations

from dataclasses import dataclass

from compiler.advise.findings import Evidence, Finding
from compiler.model import Compile, Fix
from compiler.parse.resume_names import resume_name

# problem > warning > info; the advisor sorts on this first, then on the score.
SEVERITY_ORDER = {"problem": 0, "warning": 1, "info": 2}


@dataclass(frozen=True, slots=True)
class Ranked:
    """A finding and a number to order it among findings of the same severity:
    what it costs in comparable units (graphs, compiles, milliseconds)."""

    finding: Finding
    score: float = 0.0


def resume_of(c: Compile) -> tuple[str, int] | None:
    """(function, line) for a resume function's code name, else None."""
    r = resume_name(c.code_name)
    return (r.function, r.line) if r is not None and r.line is not None else None


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
    chain: tuple[Evidence, ...] = (),
    fix: Fix | None = None,
    cause: str = "",
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
            chain=chain,
            fix=fix,
            cause=cause or f"{kind}|{title}",
        ),
        score,
    )


def cause_key(family: str, *parts: object) -> str:
    """The one spelling of a cause key: ``family|part|part``. Findings that share it are
    one cause (a break's registry id and place, a recompile's guard source, a backend
    failure's op and library function).

    Example:
        >>> cause_key("break", "GB0025", "transformers/modeling_utils.py:4778")
        'break|GB0025|transformers/modeling_utils.py:4778'
    """
    return "|".join([family, *(str(p) for p in parts if p is not None and p != "")])
