"""``compiler.numerics`` as a Markdown section of the report (``explorer.report``)."""

from __future__ import annotations

from compiler.model import FinalNumerics, NodeNumerics, Numerics

__all__ = ["numerics_markdown"]


def _g(x: float | None) -> str:
    return "" if x is None else f"{x:.3g}"


def _cell(text: str) -> str:
    return " ".join(text.splitlines()).replace("|", "\\|")


def _where(n: NodeNumerics) -> str:
    return f"`{n.source}`" if n.source is not None else ""


def _verdict(n: NodeNumerics | FinalNumerics) -> str:
    same = "within" if n.within else "**outside**"
    if n.assert_close is not None and n.assert_close != n.within:
        same += f" (assert_close: {'within' if n.assert_close else 'outside'})"
    return same


def _end_to_end(n: Numerics) -> list[str]:
    if not n.end_to_end:
        return []
    out = ["**End to end** (the whole target's outputs and the gradients it left, compiled run "
           "against an eager rerun from the same state):", "",
           "| value | dtype | max abs | max rel | error / tolerance | verdict |",
           "|---|---|---|---|---|---|"]  # fmt: skip
    for f in n.end_to_end:
        verdict = _verdict(f) if f.compared else f"not compared: {f.reason}"
        row = [f"{f.kind} `{f.name}`", f.dtype.replace("torch.", ""), _g(f.max_abs),
               _g(f.max_rel), _g(f.ratio), verdict]  # fmt: skip
        out.append("| " + " | ".join(_cell(x) for x in row) + " |")
    return [*out, ""]


def numerics_markdown(n: Numerics, top: int = 10) -> list[str]:
    """The first divergence, the worst nodes, what could not be compared and why.

    Example:
        >>> numerics_markdown(Numerics(target="f"))[0]
        '## Numerics: compiled against eager'
    """
    out = ["## Numerics: compiled against eager", ""]
    first = n.first_divergence
    compared, skipped = n.compared, n.not_compared
    out.append(
        f"{len(compared)} of {len(n.nodes)} post-grad nodes compared (torch {n.torch_version}); "
        f"verdict: torch's `same()` against float64 at tolerance {n.tolerance:g}, "
        "`assert_close` shown where it disagrees."
    )
    out.append("")
    if first is None:
        out += ["No node leaves its tolerance: compiled and eager agree.", ""]
    else:
        out += [
            f"**First divergence:** `{first.node}` (`{first.target}`) in the {first.graph} graph "
            f"of {first.compile_id}, kernel `{first.kernel or 'none'}`, "
            f"at {_where(first) or 'no line'}: "
            f"max abs error {_g(first.max_abs)}, RMSE {_g(first.rmse)} against float64 where "
            f"{_g(first.rmse_bound)} is allowed ({_g(first.ratio)}x).",
            "",
        ]
    out += _end_to_end(n)
    if compared:
        out += ["| node | graph | kernel | line | dtype | max abs | max rel | error / tolerance "
                "| verdict | closer to float64 |",
                "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
        for m in n.worst(top):
            row = [f"`{m.node}`", m.graph, f"`{m.kernel}`" if m.kernel else "", _where(m),
                   m.dtype.replace("torch.", ""), _g(m.max_abs), _g(m.max_rel), _g(m.ratio),
                   _verdict(m), m.closer]  # fmt: skip
            out.append("| " + " | ".join(_cell(x) for x in row) + " |")
        out.append("")
    if skipped:
        reasons: dict[str, list[str]] = {}
        for m in skipped:
            reasons.setdefault(m.reason.split(":")[0], []).append(m.node)
        out.append("Not compared:")
        for reason, names in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
            shown = ", ".join(f"`{x}`" for x in names[:6]) + (" ..." if len(names) > 6 else "")
            out.append(f"- {reason} ({len(names)}): {shown}")
        out.append("")
    out += [f"- {note}" for note in n.notes] + ([""] if n.notes else [])
    return out
