"""``compile_log``: a ``compiler.compare`` result as the Markdown compile log the
"compile and compare" lab asks for (``COMPILE_LOG.md``)."""

from __future__ import annotations

from compiler.compare.comparison import CompareRow, Comparison, cpu_count

__all__ = ["compile_log", "table"]


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


def _steady(row: CompareRow) -> str:
    if row.median_ms is None or row.spread_ms is None:
        return "-"
    low, high = row.spread_ms
    return f"{_ms(row.median_ms)} ({_ms(low)}-{_ms(high)})"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table(comparison: Comparison) -> list[str]:
    """The comparison as a Markdown table, one row per configuration."""
    lines = [
        "| configuration | first call (ms) | steady state (ms): median (min-max) | speedup "
        "| compiles | recompiles | graph breaks | matches eager |",
        "|---|---:|---:|---:|---:|---:|---:|:---:|",
    ]
    for r in comparison.rows:
        if r.error:
            lines.append(f"| {r.name} | failed: {_cell(r.error)} | | | | | | |")
            continue
        speed = f"{r.speedup:.2f}x" if r.speedup is not None else "-"
        match = {True: "yes", False: "**no**", None: "-"}[r.matches_eager]
        eager = r.config.spec.backend is None
        lines.append(
            f"| {r.name} | {_ms(r.first_call_ms)} | {_steady(r)} | {speed} | "
            f"{'-' if eager else r.compiles} | {'-' if eager else r.recompiles} | "
            f"{'-' if eager else r.graph_breaks} | {'-' if eager else match} |"
        )
    return lines


def compile_log(comparison: Comparison) -> str:
    """The whole log: what ran where, the table, and the breaks and recompiles to triage.

    Example:
        >>> import torch, compiler
        >>> from explorer.compile_log import compile_log
        >>> c = compiler.compare(torch.nn.Linear(4, 4), torch.randn(2, 4), configs=["aot_eager"])
        >>> compile_log(c).splitlines()[0]
        '# Compile log: Linear'
    """
    env = comparison.environment
    triton = f", Triton {env.triton}" if env.triton else ""
    out = [
        f"# Compile log: {comparison.target}",
        "",
        "## Environment",
        "",
        f"- torch {env.torch}, Python {env.python}{triton}",
        f"- device: {env.device}; {comparison.threads} torch threads, {cpu_count()} CPUs",
        f"- platform: {env.platform}",
        f"- inputs: {', '.join(comparison.inputs) or '(none: the target reads its own)'}",
        f"- each configuration: 1 first call (compile included), {comparison.warmup} warm-up "
        f"calls, then {comparison.steps} timed calls"
        + (", synchronised with torch.cuda.synchronize()" if "cuda" in env.device else ""),
        "- FX graph and AOTAutograd caches off: every first call is a full compile",
        "",
        "## Results",
        "",
        *table(comparison),
        "",
        "Configurations:",
        "",
        *(f"- {r.name}: `{r.config.describe()}`" for r in comparison.rows),
        "",
    ]
    breaks: list[str] = []
    recompiles: list[str] = []
    for r in comparison.rows:
        exp = r.exploration
        if exp is None:
            continue
        seen: set[str] = set()
        for gb in exp.graph_breaks:
            entry = f"- {r.name}: {gb.summary or gb.reason}" + (
                f" at `{gb.location}`" if gb.location else ""
            )
            if entry not in seen:
                seen.add(entry)
                breaks.append(entry)
        for c in exp.recompiles:
            for reason in c.recompile_reasons:
                recompiles.append(f"- {r.name}: compile {c.compile_id}: {reason.reason}")
    out += ["## Graph breaks", "", *(breaks or ["None."]), ""]
    out += ["## Recompiles", "", *(recompiles or ["None."]), ""]
    notes = list(comparison.notes)
    if any(r.exploration is not None for r in comparison.rows):
        notes.append(
            "first calls were recorded by the explorer (compiler.compare(record=True)), "
            "which adds its own cost to them; record=False times torch.compile alone"
        )
    if notes:
        out += ["## Notes", "", *(f"- {n}" for n in notes), ""]
    return "\n".join(out)
