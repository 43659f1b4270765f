"""The numerics pane (``compiler.numerics``): every post-grad node in graph order coloured
by its error over tolerance, the first divergence linked to its node, kernel and line, the
worst nodes, the error's growth along the graphs, and the advisor's finding.

Every figure and word is the compiler's; the browser draws them."""

from __future__ import annotations

from dataclasses import dataclass

from compiler import Exploration, FinalNumerics, NodeNumerics, Numerics
from compiler.link import ids

from ..findings import build_findings
from ..labels import group_of, label_of
from ..types import FindingItem, PaneHead

_FROZEN = {"frozen": True, "kw_only": True, "slots": True}


@dataclass(**_FROZEN)
class NumericsRow:
    """One post-grad node: ``level`` is ``agree`` (ratio up to 0.5), ``near`` (up to 1),
    ``over`` (past tolerance) or ``skip`` (not compared, ``reason`` says why); ``ratio``
    error over tolerance; ``stage`` the post-grad graph pane, ``kernel`` a ``Kernel.id``,
    ``src`` a source key; ``figures`` the error, tolerance and verdict as text."""

    order: int
    node: str
    target: str
    graph: str
    compile: str
    stage: str | None
    kernel: str | None
    kernel_name: str
    src: str | None
    dtype: str
    level: str
    ratio: float | None
    figures: str
    reason: str
    output: str


@dataclass(**_FROZEN)
class FinalRow:
    """One output or gradient of the whole target, compiled against an eager rerun:
    ``kind`` ``output`` or ``gradient``, ``level`` and ``figures`` as ``NumericsRow``'s."""

    kind: str
    name: str
    dtype: str
    level: str
    ratio: float | None
    figures: str
    reason: str


@dataclass(**_FROZEN)
class NumericsPane(PaneHead):
    """``compiler.numerics`` of this exploration."""

    kind: str = "numerics"
    summary: str = ""
    first: NumericsRow | None = None
    nodes: tuple[NumericsRow, ...] = ()
    worst: tuple[NumericsRow, ...] = ()
    not_compared: tuple[tuple[str, int], ...] = ()
    notes: tuple[str, ...] = ()
    advice: tuple[FindingItem, ...] = ()
    end_to_end_summary: str = ""
    end_to_end: tuple[FinalRow, ...] = ()


def _g(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3g}"


def _level(n: NodeNumerics | FinalNumerics) -> str:
    if not n.compared:
        return "skip"
    ratio = n.ratio if n.ratio is not None else 0.0
    return "over" if not n.within else "near" if ratio > 0.5 else "agree"


def _figures(n: NodeNumerics | FinalNumerics) -> str:
    verdict = "within" if n.within else "outside"
    if n.assert_close is not None and n.assert_close != n.within:
        verdict += f" (assert_close: {'within' if n.assert_close else 'outside'})"
    against64 = (f"; RMSE against float64 {_g(n.rmse)} (eager {_g(n.rmse_eager)}, allowed "
                 f"{_g(n.rmse_bound)})") if n.rmse is not None else ""  # fmt: skip
    return (
        f"max abs {_g(n.max_abs)}, max rel {_g(n.max_rel)}{against64}; {_g(n.ratio)}x "
        f"tolerance: {verdict}" + (f"; {n.closer} is closer to float64" if n.closer else "")
    )


def _final_row(f: FinalNumerics) -> FinalRow:
    return FinalRow(kind=f.kind, name=f.name, dtype=f.dtype.replace("torch.", ""),
                    level=_level(f), ratio=f.ratio, figures=_figures(f) if f.compared else "",
                    reason=f.reason)  # fmt: skip


def _end_to_end_summary(n: Numerics) -> str:
    if not n.end_to_end:
        return ""
    compared = [f for f in n.end_to_end if f.compared]
    if not compared:
        why = n.end_to_end[0].reason
        return f"The whole target against an eager rerun of it: not compared ({why})."
    off = [f.name for f in compared if f.diverges]
    outputs = sum(f.kind == "output" for f in compared)
    return (
        f"The whole target against an eager rerun of it: {outputs} output(s) and "
        f"{len(compared) - outputs} gradient(s) compared; "
        + (f"{len(off)} leave their tolerance ({', '.join(off[:4])}"
           + (", ..." if len(off) > 4 else "") + ")." if off else "all within tolerance.")
    )  # fmt: skip


def _row(exp: Exploration, n: NodeNumerics) -> NumericsRow:
    compiled = {c.key for c in exp.compiles}
    stage = ids.output_pane(ids.OutputKey(n.graph), "inductor_post_grad_graph")
    figures = _figures(n) if n.compared else ""
    return NumericsRow(
        order=n.order, node=n.node, target=n.target, graph=n.graph, compile=n.compile_id,
        stage=stage if n.compile_id in compiled else None,
        kernel=n.kernel_id or None, kernel_name=n.kernel, src=ids.loc_key(n.source),
        dtype=n.dtype.replace("torch.", ""), level=_level(n), ratio=n.ratio, figures=figures,
        reason=n.reason, output=n.output,
    )  # fmt: skip


def build_numerics(exp: Exploration, compile_key: str | None, pane_id: str) -> NumericsPane:
    """The numerics pane of ``exp`` (empty with a summary that says how to get one).

    Example:
        >>> import compiler
        >>> build_numerics(compiler.Exploration(source="live"), None, "numerics").summary[:30]
        'No numerics in this capture: r'
    """
    head = {"id": ids.NUMERICS, "stage": "numerics", "label": label_of("numerics"),
            "group": group_of("numerics")}  # fmt: skip
    n = exp.numerics
    if n is None:
        summary = ("No numerics in this capture: run compiler.numerics(target, *inputs) to "
                   "compare compiled with eager.")  # fmt: skip
        return NumericsPane(**head, summary=summary)
    rows = tuple(_row(exp, m) for m in n.nodes)
    by_order = {r.order: r for r in rows}
    first = n.first_divergence
    counts: dict[str, int] = {}
    for m in n.not_compared:
        reason = m.reason.split(":")[0]
        counts[reason] = counts.get(reason, 0) + 1
    summary = (
        f"{len(n.compared)} of {len(n.nodes)} post-grad nodes compared with eager "
        f"(torch's same() against float64, tolerance {n.tolerance:g}); "
        + ("none leaves its tolerance." if first is None else
           f"the first past its tolerance is {first.node} in kernel {first.kernel or 'none'}"
           + (f" at {first.source}" if first.source else "") + ".")
    )  # fmt: skip
    findings = build_findings(exp, None, ids.FINDINGS).items
    return NumericsPane(
        **head, summary=summary, first=by_order[first.order] if first is not None else None,
        nodes=rows, worst=tuple(by_order[m.order] for m in n.worst(10)),
        not_compared=tuple(sorted(counts.items(), key=lambda kv: -kv[1])), notes=n.notes,
        advice=tuple(f for f in findings if f.kind.startswith("numerics.")),
        end_to_end_summary=_end_to_end_summary(n),
        end_to_end=tuple(_final_row(f) for f in n.end_to_end),
    )  # fmt: skip
