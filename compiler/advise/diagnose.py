"""The advisor: the ranked diagnosis of an Exploration (``Exploration.findings()``).

Each family of rules lives in ``compiler/advise/``; this module runs them all and
orders what they found: problems before warnings before notes, and within one
severity the costlier first (graphs split off, extra compiles, milliseconds).
"""

from __future__ import annotations

from dataclasses import replace

from compiler.advise import caches, call_time, compile_time, gpu, graph_breaks, ranks, recompiles
from compiler.advise._common import SEVERITY_ORDER, Ranked
from compiler.advise.findings import Finding
from compiler.model import Exploration

# Order of families when severity and cost tie: what breaks the program first (ranks
# that diverge hang the whole run).
_FAMILIES = (ranks, graph_breaks, recompiles, call_time, gpu, caches, compile_time)


def diagnose(exp: Exploration) -> tuple[Finding, ...]:
    """The ranked findings of ``exp``, most important first.

    Args:
        exp: a live capture, a loaded recording or a ``TORCH_TRACE`` log.

    Returns:
        Findings ordered by severity (``problem``, ``warning``, ``info``), then by
        estimated cost; an empty tuple for a program with nothing to say.

    Example:
        >>> import torch, compiler
        >>> def f(x):
        ...     print("hi")
        ...     return x + 1
        >>> exp = compiler.explore(f, torch.randn(4), backend="eager")
        hi
        >>> diagnose(exp)[0].kind
        'graph_break.logging'
    """
    ranked: list[tuple[int, Ranked]] = []
    for order, family in enumerate(_FAMILIES):
        ranked.extend((order, r) for r in family.findings(exp))
    ranked.sort(
        key=lambda item: (SEVERITY_ORDER[item[1].finding.severity], -item[1].score, item[0])
    )
    # every rank of a multi-rank run reports the same cause (a bypass, a recompile): one
    # finding per cause, the first in order, with the evidence of all
    first: dict[str, Finding] = {}
    for _, r in ranked:
        f = first.setdefault(r.finding.cause, r.finding)
        if f is not r.finding:
            more = tuple(e for e in r.finding.evidence if e not in f.evidence)
            first[f.cause] = replace(f, evidence=f.evidence + more)
    return tuple(_with_tried(exp, f) for f in first.values())


def _with_tried(exp: Exploration, f: Finding) -> Finding:
    """``f`` with what trying its fix measured (``Exploration.tried_fixes``), or why it
    was not tried."""
    if f.fix is None:
        return f
    tried = next((t for t in exp.tried_fixes if t.fix == f.fix), None)
    if tried is not None:
        return replace(f, tried=tried)
    if exp.source != "live":
        note = (f"Not tried: this exploration was loaded from a {exp.source} file, so the "
                "explorer cannot run the program again.")  # fmt: skip
    else:
        note = ("Not tried yet: compiler.try_fixes(exp, target, *inputs) compiles the target "
                "again with this fix and measures before and after.")  # fmt: skip
    return replace(f, tried_note=note)
