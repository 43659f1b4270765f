"""Numerics: compiled results that leave eager's (``compiler.numerics``), named at the
first node past its tolerance, or, where no compared node leaves it, at the target's own
outputs and gradients (``Numerics.end_to_end``), with torch's own ways to narrow the cause
down."""

from __future__ import annotations

from compiler.advise._common import Ranked, cause_key, finding
from compiler.advise.findings import Evidence
from compiler.link.ids import CompileKey, KernelId, OutputKey, loc_key, output_pane
from compiler.model import Exploration, FinalNumerics, NodeNumerics, Numerics

_REDUCTIONS = ("sum", "mean", "amax", "amin", "var", "std", "prod", "cumsum", "logsumexp",
               "softmax", "norm")  # fmt: skip


def _op(node: NodeNumerics) -> str:
    # "aten.sum.dim_IntList" -> "sum"
    parts = node.target.split(".")
    return parts[1] if len(parts) > 2 else node.target


def _fixes(n: Numerics, node: NodeNumerics | None) -> list[str]:
    """torch's fixes, those that fit ``n``; ``node`` the first divergence, None where only
    the end-to-end comparison diverges (no node to name a reduction or a pass by)."""
    fixes: list[str] = []
    if n.low_precision:
        fixes.append(
            f"Round like eager: `torch._inductor.config.emulate_precision_casts = True` makes "
            f"Inductor round every {n.low_precision} intermediate as eager does; if the "
            "divergence goes away, it was precision, not a wrong kernel."
        )
    if any("random" in m.reason for m in n.nodes):
        fixes.append(
            "Draw eager's random numbers: `torch._inductor.config.fallback_random = True` "
            "(or `numerics(..., options={'fallback_random': True})`) runs random ops through "
            "ATen, so dropout and friends match and can be compared."
        )
    if node is not None and _op(node).startswith(_REDUCTIONS) and n.low_precision:
        fixes.append(
            f"Keep the reduction `{_op(node)}` in float32: reduce `x.float()` and cast the "
            f"result back (`.to(torch.{n.low_precision})`)."
        )
    fixes.append(
        "Rule out a graph rewrite: `torch._inductor.config.pattern_matcher = False` turns "
        "off Inductor's pattern passes" + (" (the pass that produced this node among them)"
                                           if node is not None else "")
        + "; if the error goes, compare the post-grad graph with `aot_forward_graph` to see "
        "what changed."
    )
    fixes.append(
        "Bisect by backend: run with `backend=\"eager\"`, `\"aot_eager\"`, "
        "`\"aot_eager_decomp_partition\"`, then `\"inductor\"`; the first that differs owns "
        "the bug (`torch._dynamo.config.repro_tolerance` is the tolerance used here)."
    )
    fixes.append(
        "Shrink it to a repro: the accuracy minifier writes a small script that still "
        "fails:\n```\nTORCHDYNAMO_REPRO_AFTER=\"aot\" TORCHDYNAMO_REPRO_LEVEL=4 "
        f"python {_script(n, node)}\n```"
    )
    return fixes


def _script(n: Numerics, node: NodeNumerics | None) -> str:
    """The user's file: the diverging node's, else the first node's that has one."""
    nodes = [node] if node is not None else list(n.nodes)
    for m in nodes:
        if m.source is not None and m.source.filename.endswith(".py"):
            return m.source.filename
    return "your_program.py"


def _number(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3g}"


def _final_figures(row: FinalNumerics) -> str:
    """How far one end-to-end value is off: against eager, and against float64 where the
    rerun had a float64 reference."""
    text = (f"{row.kind} `{row.name}` ({row.dtype or 'no dtype'}): max abs error "
            f"{_number(row.max_abs)}, max relative {_number(row.max_rel)}")  # fmt: skip
    if row.rmse_bound is not None:
        return text + (f", RMSE against float64 {_number(row.rmse)} where torch's same() "
                       f"allows {_number(row.rmse_bound)}")  # fmt: skip
    return text + f", allclose tolerance {_number(row.tolerance)}"


def _worst_final(n: Numerics) -> FinalNumerics | None:
    """The diverging end-to-end value to name: a returned one before a gradient (what the
    user reads first), then the furthest past its tolerance."""
    return max((f for f in n.end_to_end if f.diverges),
               key=lambda f: (f.kind == "output", f.ratio or 0.0), default=None)  # fmt: skip


def findings(exp: Exploration) -> list[Ranked]:
    """``numerics.divergence`` at the first node past its tolerance, if any (saying whether
    the target's own results diverge too); else ``numerics.end_to_end`` where the target's
    outputs or gradients leave an eager rerun's though no compared node does.

    Example:
        >>> from compiler.model import Exploration
        >>> findings(Exploration(source="live"))
        []
    """
    n = exp.numerics
    node = n.first_divergence if n is not None else None
    if n is not None and node is None:
        return _end_to_end_only(n)
    if n is None or node is None:
        return []
    where = str(node.source) if node.source is not None else f"node {node.node}"
    kernel = node.kernel or "no kernel"
    allowed = node.rmse_bound if node.rmse_bound is not None else node.tolerance
    title = (
        f"compiled results differ from eager at {where} (kernel {kernel}): max abs error "
        f"{_number(node.max_abs)}, tolerance {_number(allowed)}"
    )
    later = sum(m.diverges for m in n.nodes) - 1
    worst = _worst_final(n)
    if worst is not None:
        title += f"; the target's own {worst.kind} `{worst.name}` differs too"
    stage = output_pane(OutputKey(node.graph), "inductor_post_grad_graph")
    evidence = [
        Evidence(
            text=(
                f"{node.node} ({node.target}, {node.dtype}) in the {node.graph} graph of "
                f"{node.compile_id}: RMSE against float64 {_number(node.rmse)} where torch's "
                f"same() allows {_number(node.rmse_bound)}; {later} later node(s) also differ"
            ),
            compile=CompileKey(node.compile_id) if node.compile_id else None,
            stage=stage,
            src=loc_key(node.source),
            node=node.node,
            kernel=KernelId(node.kernel_id) if node.kernel_id else None,
        )
    ]
    diverging = [f for f in n.end_to_end if f.diverges]
    if worst is not None:
        evidence.append(Evidence(text=(
            f"End to end, {len(diverging)} of the target's outputs and gradients leave an eager "
            f"rerun's, among them {_final_figures(worst)}"
        )))  # fmt: skip
    suggestion = "\n\n".join(_fixes(n, node))
    ratio = node.ratio if node.ratio is not None else 1.0
    return [
        finding(
            "numerics.divergence", "problem", title, evidence, suggestion,
            impact=f"error {ratio:.3g}x the tolerance", score=ratio,
            cause=cause_key("numerics", node.compile_id, node.graph, node.node),
        )
    ]  # fmt: skip


def _end_to_end_only(n: Numerics) -> list[Ranked]:
    """``numerics.end_to_end``: what the target returned or the gradients it left differ
    from an eager rerun's while every compared node agrees, so the divergence is where the
    node-by-node comparison did not look (a later call of a graph, a node it could not
    compare, code Dynamo changed outside the graphs)."""
    worst = _worst_final(n)
    if worst is None:
        return []
    diverging = [f for f in n.end_to_end if f.diverges]
    title = (
        f"compiled results differ from an eager rerun of {n.target or 'the target'} at its "
        f"{worst.kind} `{worst.name}` (max abs error {_number(worst.max_abs)}), though no "
        "compared node differs"
    )
    evidence = [Evidence(text=_final_figures(f)) for f in diverging]
    skipped: dict[str, int] = {}
    for m in n.not_compared:
        kind = m.reason.split(":", 1)[0]
        skipped[kind] = skipped.get(kind, 0) + 1
    unseen = ", ".join(f"{count} {kind}" for kind, count in sorted(skipped.items()))
    later = [note for note in n.notes if "later call(s) of a graph were not compared" in note]
    evidence.append(Evidence(text=(
        f"Node by node, {len(n.compared)} node(s) agree with eager"
        + (f"; not compared: {unseen}" if unseen else "")
        + (f"; {later[0][0].lower()}{later[0][1:]}" if later else "")
    )))  # fmt: skip
    where = (
        "Where to look: the node-by-node comparison covers the first call of each Inductor "
        "graph and the nodes it could compare; the divergence is elsewhere: in a later call of "
        "a graph (inputs the first call did not have), in a node it could not compare (the "
        "evidence lists them), or outside the graphs, in what Dynamo runs around them (guards, "
        "side effects, graph breaks): the backend ladder below tells which."
    )
    ratio = worst.ratio if worst.ratio is not None else 1.0
    return [
        finding(
            "numerics.end_to_end", "problem", title, evidence,
            "\n\n".join([where, *_fixes(n, None)]),
            impact=f"error {ratio:.3g}x the tolerance", score=ratio,
            cause=cause_key("numerics", "end_to_end", worst.kind, worst.name),
        )
    ]  # fmt: skip
