"""Numerics: compiled results that leave eager's (``compiler.numerics``), named at the
first node past its tolerance, with torch's own ways to narrow the cause down."""

from __future__ import annotations

from compiler.advise._common import Ranked, cause_key, finding
from compiler.advise.findings import Evidence
from compiler.link.ids import CompileKey, KernelId, OutputKey, loc_key, output_pane
from compiler.model import Exploration, NodeNumerics, Numerics

_REDUCTIONS = ("sum", "mean", "amax", "amin", "var", "std", "prod", "cumsum", "logsumexp",
               "softmax", "norm")  # fmt: skip


def _op(node: NodeNumerics) -> str:
    # "aten.sum.dim_IntList" -> "sum"
    parts = node.target.split(".")
    return parts[1] if len(parts) > 2 else node.target


def _fixes(n: Numerics, node: NodeNumerics) -> list[str]:
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
    if _op(node).startswith(_REDUCTIONS) and n.low_precision:
        fixes.append(
            f"Keep the reduction `{_op(node)}` in float32: reduce `x.float()` and cast the "
            f"result back (`.to(torch.{n.low_precision})`)."
        )
    fixes.append(
        "Rule out a graph rewrite: `torch._inductor.config.pattern_matcher = False` turns "
        "off Inductor's pattern passes (the pass that produced this node among them); if the "
        "error goes, compare the post-grad graph with `aot_forward_graph` to see what changed."
    )
    fixes.append(
        "Bisect by backend: run with `backend=\"eager\"`, `\"aot_eager\"`, "
        "`\"aot_eager_decomp_partition\"`, then `\"inductor\"`; the first that differs owns "
        "the bug (`torch._dynamo.config.repro_tolerance` is the tolerance used here)."
    )
    fixes.append(
        "Shrink it to a repro: the accuracy minifier writes a small script that still "
        "fails:\n```\nTORCHDYNAMO_REPRO_AFTER=\"aot\" TORCHDYNAMO_REPRO_LEVEL=4 "
        f"python {_script(node)}\n```"
    )
    return fixes


def _script(node: NodeNumerics) -> str:
    if node.source is not None and node.source.filename.endswith(".py"):
        return node.source.filename
    return "your_program.py"


def _number(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3g}"


def findings(exp: Exploration) -> list[Ranked]:
    """``numerics.divergence`` at the first node past its tolerance, if any.

    Example:
        >>> from compiler.model import Exploration
        >>> findings(Exploration(source="live"))
        []
    """
    n = exp.numerics
    node = n.first_divergence if n is not None else None
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
    suggestion = "\n\n".join(_fixes(n, node))
    ratio = node.ratio if node.ratio is not None else 1.0
    return [
        finding(
            "numerics.divergence", "problem", title, evidence, suggestion,
            impact=f"error {ratio:.3g}x the tolerance", score=ratio,
            cause=cause_key("numerics", node.compile_id, node.graph, node.node),
        )
    ]  # fmt: skip
