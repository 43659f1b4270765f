"""The advisor: the ranked diagnosis of an Exploration (``Exploration.findings()``).

Each family of rules lives in ``compiler/advise/``; this module runs them all, keeps one
finding per cause key (``Finding.cause``: whatever family found it, however many frames,
compiles or ranks it showed in) and orders what is left: problems before warnings before
notes, and within one severity the costlier first (graphs split off, extra compiles,
milliseconds). A measured slowdown that breaks or recompiles explain ranks below them.
"""

from __future__ import annotations

from dataclasses import replace

from compiler.advise import (
    caches,
    call_time,
    compile_time,
    gpu,
    graph_breaks,
    numerics,
    ranks,
    recompiles,
)
from compiler.advise._common import SEVERITY_ORDER, Ranked
from compiler.advise.breaks.consequences import fold
from compiler.advise.costs import cudagraphs, memory
from compiler.advise.findings import Evidence, Finding, fix_reach
from compiler.model import Exploration

# Order of families when severity and cost tie: what breaks the program first (ranks
# that diverge hang the whole run).
_FAMILIES = (ranks, numerics, graph_breaks, recompiles, call_time, gpu, cudagraphs, memory, caches,
             compile_time)  # fmt: skip
_IMPACTS = 3  # impacts of merged findings listed, the rest counted
# the families whose findings explain each part of a slow compiled call (``largest_part``)
_EXPLAINS: dict[str, tuple[str, ...]] = {
    "host": ("graph_break", "recompile"),
    "recordings": ("recompile",),
    "warmups": ("recompile",),
}


def diagnose(exp: Exploration) -> tuple[Finding, ...]:
    """The ranked findings of ``exp``, most important first, one per cause.

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
    ranked = _below_its_causes(exp, merge_causes(fold(exp, ranked)))
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


def merge_causes(ranked: list[tuple[int, Ranked]]) -> list[tuple[int, Ranked]]:
    """One finding per cause key: the most severe, then costliest, of each key is the
    head; the others' evidence joins it (each place once), their impacts are listed
    after its own, their costs add up, and the head's fix stays (else the first one).

    Example:
        >>> from compiler.advise._common import finding
        >>> a = finding("k", "info", "t", [Evidence(text="rank 0")], "", cause="c")
        >>> b = finding("k", "warning", "t", [Evidence(text="rank 1")], "", cause="c")
        >>> [(r.finding.severity, len(r.finding.evidence)) for _, r in merge_causes(
        ...     [(0, a), (1, b)])]
        [('warning', 2)]
    """
    groups: dict[str, list[tuple[int, Ranked]]] = {}
    for item in ranked:
        groups.setdefault(item[1].finding.cause, []).append(item)
    out: list[tuple[int, Ranked]] = []
    for items in groups.values():
        if len(items) == 1:
            out.append(items[0])
            continue
        items = sorted(
            items, key=lambda it: (SEVERITY_ORDER[it[1].finding.severity], -it[1].score, it[0])
        )
        head = items[0][1].finding
        rest = [r.finding for _, r in items[1:]]
        impacts = list(dict.fromkeys(f.impact for f in (head, *rest) if f.impact))
        impact = "; ".join(impacts[:_IMPACTS])
        if len(impacts) > _IMPACTS:
            impact += f"; and {len(impacts) - _IMPACTS} more"
        merged = replace(
            head,
            evidence=tuple(dict.fromkeys(e for f in (head, *rest) for e in f.evidence)),
            chain=head.chain or next((f.chain for f in rest if f.chain), ()),
            impact=impact,
            suggestion=head.suggestion or next((f.suggestion for f in rest if f.suggestion), ""),
            fix=head.fix or next((f.fix for f in rest if f.fix is not None), None),
        )
        out.append((items[0][0], Ranked(merged, sum(r.score for _, r in items))))
    return out


_Ordered = list[tuple[int, Ranked]]


def _below_its_causes(exp: Exploration, ranked: _Ordered) -> _Ordered:
    """"Compiled is slower than eager" where the time goes to the host (or to CUDA graph
    re-recordings) and graph breaks or recompiles are found: those are where the time
    comes from, so they rank first, at least as severe as the slowdown they cause, with
    the slowdown in the first one's impact; the slowdown names them (their cause keys)
    and follows them."""
    slow = next((i for i, (_, r) in enumerate(ranked) if r.finding.kind in call_time.KINDS), None)
    # host time: each break adds a graph call, guards and Python between; recordings and
    # warm-ups of CUDA graphs: each new shape (a recompile) records again
    explains = _EXPLAINS.get(call_time.largest_part(exp), ()) if slow is not None else ()
    if slow is None or not explains:
        return ranked
    order, s = ranked[slow]
    causes = [
        i
        for i, (_, r) in enumerate(ranked)
        if r.finding.kind.startswith(explains) and r.finding.severity != "info"
    ]
    if not causes:
        return ranked
    causes.sort(key=lambda i: -ranked[i][1].score)
    level = SEVERITY_ORDER[s.finding.severity]
    out = list(ranked)
    for n, i in enumerate(causes):
        o, r = out[i]
        f = r.finding
        severity = f.severity if SEVERITY_ORDER[f.severity] <= level else s.finding.severity
        impact = f.impact
        if n == 0 and s.finding.impact:
            gap = s.finding.impact.split(";", 1)[0]
            impact = (f"{impact}; " if impact else "") + f"with it, compiled runs {gap}"
        out[i] = (o, Ranked(replace(f, severity=severity, impact=impact), r.score))
    named = [out[i][1].finding for i in causes]
    lowest = min(out[i][1].score for i in causes)
    f = s.finding
    evidence = (
        *f.evidence,
        *(
            Evidence(text=f"comes from: {c.title} (cause key {c.cause.replace('`', '')})")
            for c in named[:4]
        ),
    )
    families = {c.kind.split(".")[0] for c in named}
    noun = "graph break" if families == {"graph_break"} else (
        "recompile" if families == {"recompile"} else "graph break and recompile")
    what = f"the {noun}s above" if len(named) > 1 else f"the {noun} above"
    suggestion = (
        f"This slowdown comes from {what}: fix {'them' if len(named) > 1 else 'it'} first, "
        "then measure again.\n\n" + f.suggestion
    )
    out[slow] = (
        order,
        Ranked(
            replace(f, title=f"{f.title}, which {what} {'cause' if len(named) > 1 else 'causes'}",
                    evidence=evidence, suggestion=suggestion),
            min(s.score, lowest - 1.0),
        ),
    )  # fmt: skip
    return out


def _with_tried(exp: Exploration, f: Finding) -> Finding:
    """``f`` with what trying its fix measured (``Exploration.tried_fixes``), or why it
    was not tried."""
    if f.fix is None:
        return f
    reaches, how = fix_reach(f.fix, exp.options)
    tried = next((t for t in exp.tried_fixes if t.fix == f.fix), None)
    if tried is not None:
        return replace(f, tried=tried, tried_note=how)
    if not reaches:
        note = how
    elif exp.source != "live":
        note = (f"Not tried: this exploration was loaded from a {exp.source} file, so the "
                "explorer cannot run the program again.")  # fmt: skip
    else:
        note = ("Not tried yet: compiler.try_fixes(exp, target, *inputs) compiles the target "
                "again with this fix and measures before and after.")  # fmt: skip
    return replace(f, tried_note=note)
