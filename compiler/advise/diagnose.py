"""The advisor: the ranked diagnosis of an Exploration (``Exploration.findings()``).

Each family of rules lives in ``compiler/advise/``; this module runs them all and
orders what they found: problems before warnings before notes, and within one
severity the costlier first (graphs split off, extra compiles, milliseconds).
"""

from __future__ import annotations

from compiler.advise import caches, compile_time, gpu, graph_breaks, ranks, recompiles
from compiler.advise._common import SEVERITY_ORDER, Ranked
from compiler.advise.findings import Finding
from compiler.model import Exploration

# Order of families when severity and cost tie: what breaks the program first (ranks
# that diverge hang the whole run).
_FAMILIES = (ranks, graph_breaks, recompiles, gpu, caches, compile_time)


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
        >>> exp = compiler.explore(f, torch.randn(4), backend="eager")  # doctest: +SKIP
        >>> exp.findings()[0].kind  # doctest: +SKIP
        'graph_break.logging'
    """
    ranked: list[tuple[int, Ranked]] = []
    for order, family in enumerate(_FAMILIES):
        ranked.extend((order, r) for r in family.findings(exp))
    ranked.sort(
        key=lambda item: (SEVERITY_ORDER[item[1].finding.severity], -item[1].score, item[0])
    )
    return tuple(r.finding for _, r in ranked)
