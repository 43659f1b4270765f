"""A Markdown report of an Exploration, for terminals, CI logs and code review.

``summarize`` turns an Exploration into text and touches nothing else;
``write_markdown`` is the one function here that writes files (``python -m explorer
report`` writes it beside the HTML page). Strings that torch
wrote for people (graph break summaries, hints, recompile reasons) are kept as
they are; names, paths, ids and code go in backticks.
"""

from __future__ import annotations

import os
from pathlib import Path

from compiler.advise.breaks.registry import registry_note
from compiler.advise.costs.time_phases import compile_time
from compiler.advise.findings import Finding, tried_summary
from compiler.costs.caches import uncacheable
from compiler.errors import ExploreError
from compiler.link.ids import compile_title
from compiler.link.user_code import compiled_files, is_user_file
from compiler.model import (
    Bytecode,
    Compile,
    CompileMetrics,
    Exploration,
    GraphBreak,
    Kernel,
    Options,
    OutputCode,
    Phase,
    Profile,
    RegionCalls,
    SourceLoc,
    StageError,
)
from compiler.profile.regions import calls_text, frame_text, frames_of, no_calls_note
from explorer.markdown import block as _block
from explorer.markdown import cell as _cell
from explorer.markdown import code as _code
from explorer.markdown import count as _count
from explorer.markdown import first_line as _first_line
from explorer.markdown import loc as _loc
from explorer.markdown import seconds as _seconds
from explorer.markdown import us as _us
from explorer.numerics_report import numerics_markdown

__all__ = ["findings_markdown", "profile_markdown", "summarize", "write_markdown"]

_SOURCES = {"live": "live capture", "trace": "`TORCH_TRACE` log"}
_STATUS = {
    "ok": "ok",
    "graph_break": "graph break",
    "no_graph": "no graph (Dynamo traced nothing to compile)",
    "failed": "failed",
}


def summarize(exp: Exploration) -> str:
    """The Exploration as a Markdown report: header, one section per compile, errors.

    Args:
        exp: what ``compiler.explore``, ``compiler.recording`` or
            ``compiler.load_trace`` returned.

    Returns:
        Markdown text ending in a newline.

    Example:
        >>> import torch, compiler
        >>> from explorer.report import summarize
        >>> exp = compiler.explore(torch.sin, torch.randn(4), backend="eager")
        >>> summarize(exp).startswith("# torch.compile report:")
        True
    """
    out: list[str] = []
    _header(exp, out)
    # what to fix comes first: the rest of the report is the evidence
    out += [*findings_markdown(exp.findings()).splitlines(), ""]
    _overview(exp, out)
    _time_and_caches(exp, out)
    _costs(exp, out)
    if exp.profile is not None:
        out += profile_markdown(exp.profile)
    out += numerics_markdown(exp.numerics) if exp.numerics is not None else []
    compiled = compiled_files(exp.compiles)
    for c in exp.compiles:
        _compile(c, multi_rank=len(exp.ranks) > 1, compiled=compiled, out=out,
                 regions=exp.profile.regions if exp.profile is not None else ())  # fmt: skip
    _closing(exp, out)
    return "\n".join(out).rstrip("\n") + "\n"


def write_markdown(exp: Exploration, path: str | os.PathLike[str]) -> Path:
    """Write ``summarize(exp)`` to ``path`` (its folder is created if needed).

    Args:
        exp: the Exploration to describe.
        path: the Markdown file; an existing file is replaced.

    Returns:
        The path written.

    Raises:
        ExploreError: the file cannot be written.

    Example:
        >>> import compiler, tempfile
        >>> exp = compiler.load_trace("tests/data/traces/graph_break_eager")
        >>> folder = tempfile.mkdtemp()
        >>> write_markdown(exp, f"{folder}/report/report.md").read_text().startswith("# ")
        True
    """
    target = Path(path)
    # Render before touching the disk, so a rendering failure leaves no half-written file.
    text = summarize(exp)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        msg = f"cannot write the report {target}: {exc}. Choose a folder you can write to."
        raise ExploreError(msg, exploration=exp) from exc
    return target


def profile_markdown(p: Profile, top: int = 10) -> list[str]:
    """The user's own profiled run (``compiler.attach_profile``) as a Markdown section:
    kernel events linked out of seen, then the kernels, source lines and modules that
    took the most time.

    Example:
        >>> import compiler
        >>> exp = compiler.Exploration.from_json(open(
        ...     "tests/data/profiles/cpu_mlp.exploration.json").read())
        >>> p = compiler.attach_profile(exp, "tests/data/profiles/cpu_mlp.trace.json.gz").profile
        >>> profile_markdown(p)[0]
        '## Profiled run'
    """
    out = ["## Profiled run", ""]
    unlinked = ", ".join(f"{_code(n)} ({k})" for n, k in p.unlinked.items())
    out += [
        f"From {_code(p.path)} ({p.device}): {p.linked_events} of "
        f"{_count(p.kernel_events, 'kernel event')} in compiled regions linked to their "
        f"kernels" + (f"; not linked: {unlinked}" if unlinked else "") + ". "
        f"{_us(p.total_us - p.outside_us)} in compiled regions, {_us(p.outside_us)} "
        "in kernels outside them."
        + (" Source lines from torch's provenance in the trace." if p.provenance else ""),
        "",
    ]
    if p.kernels:
        out += ["| kernel | compile | module | events | time |", "|---|---|---|---|---|"]
        for k in p.kernels[:top]:
            row = [_code(k.kernel), _code(k.compile), _code(k.module), str(k.events)]
            out.append("| " + " | ".join(_cell(x) for x in [*row, _us(k.total_us)]) + " |")
        out.append("")
    if p.lines:
        out += ["Source lines by the time of the kernels that ran them, each kernel at its "
                "innermost user lines (one fused from several lines counts for each):",
                ""]  # fmt: skip
        out += [f"- {_us(pl.total_us)}: {_loc(pl.loc) if pl.loc else _code(pl.place)}"
                for pl in p.lines[:top]]  # fmt: skip
        out.append("")
    if p.modules:
        out += ["Modules: " + ", ".join(
            f"{_code(m.place)} {_us(m.total_us)}" for m in p.modules[:top]) + ".", ""]  # fmt: skip
    out += [f"- {n}" for n in p.notes] + ([""] if p.notes else [])
    return out


# -- sections ---------------------------------------------------------------------------


def _time_and_caches(exp: Exploration, out: list[str]) -> None:
    """Where the run's compile time went (biggest compile and phase first), and the
    compiles torch would not cache."""
    times = compile_time(exp)
    if times.compiles:
        out += ["## Where compile time went", ""]
        out += [f"{times.total:.2f} s in {_count(len(times.compiles), 'compile')}; "
                f"recompiles {times.recompile_seconds:.2f} s; a warm process would still pay "
                f"{times.warm_seconds:.2f} s (Dynamo tracing, guards, cache keys) plus "
                "cache loads.",
                ""]  # fmt: skip
        out += ["| phase | seconds | share |", "|---|---|---|"]
        for name, seconds in times.by_phase():
            out.append(f"| {name} | {seconds:.2f} | {seconds / times.total:.0%} |")
        out += ["", "| compile | function | seconds | biggest phases |", "|---|---|---|---|"]
        for c in times.compiles[:20]:
            top = ", ".join(f"{n} {s:.2f} s" for n, s in c.phases[:3])
            tag = " (recompile)" if c.is_recompile else ""
            out.append(f"| {_code(c.compile)}{tag} | {_cell(_code(c.code_name))} | "
                       f"{c.seconds:.2f} | {_cell(top)} |")  # fmt: skip
        out.append("")
    blocked = uncacheable(exp)
    if blocked:
        out += ["## Compiles torch cannot cache", ""]
        out += [f"- {_code(u.compile)} {_code(u.code_name)}, {u.cache} cache: "
                f"{_cell(u.reason)}" for u in blocked]  # fmt: skip
        out.append("")


_MARK = {"problem": "Problem", "warning": "Warning", "info": "Note"}


def findings_markdown(findings: tuple[Finding, ...] | list[Finding]) -> str:
    """The findings as a Markdown section (``## Findings``), most important first.

    Torch's own words and the suggestions' code blocks are kept as they are; ids go in
    backticks. An empty tuple gives a one-line section saying nothing was found.

    Example:
        >>> from explorer.report import findings_markdown
        >>> f = Finding(kind="graph_break.logging", severity="problem", title="print breaks")
        >>> findings_markdown((f,)).splitlines()[2]
        '1. **Problem** print breaks'
    """
    out = ["## Findings", ""]
    if not findings:
        out.append("No problems found: no graph breaks, recompiles or slow parts to report.")
        return "\n".join(out) + "\n"
    for i, f in enumerate(findings, start=1):
        impact = f" (costs {f.impact})" if f.impact else ""
        out.append(f"{i}. **{_MARK.get(f.severity, f.severity)}** {f.title}{impact}")
        if f.chain:
            out.append("   - reached from: " + " → ".join(e.text for e in f.chain))
        for e in f.evidence:
            where = [f"`{v}`" for v in (e.compile, e.stage, e.src, e.node, e.kernel) if v]
            out.append(f"   - {e.text}" + (f" — {' · '.join(where)}" if where else ""))
        if f.suggestion:
            out.append("")
            out.extend(f"   {line}" if line else "" for line in f.suggestion.splitlines())
        tried = tried_summary(f)
        if tried:
            out += ["", f"   {tried}"]
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def _header(exp: Exploration, out: list[str]) -> None:
    title = _code(exp.target) if exp.target else "(unnamed target)"
    env = exp.environment
    parts = [f"torch {_code(env.torch)}" if env.torch else "torch version unknown"]
    if env.triton:
        parts.append(f"triton {_code(env.triton)}")
    if env.python:
        parts.append(f"Python {_code(env.python)}")
    if env.platform:
        parts.append(_code(env.platform))
    parts.append(f"device {_code(env.device)}" if env.device else "device unknown")
    out += [
        f"# torch.compile report: {title}",
        "",
        f"- **Source:** {_SOURCES.get(exp.source, _code(exp.source))}",
        f"- **Target:** {_code(exp.target) if exp.target else '(not recorded)'}",
        f"- **Options:** {_options(exp.options, exp.source)}",
        f"- **Environment:** {', '.join(parts)}",
    ]
    if exp.graph_breaks:  # the registry read as a file: torch's, else the shipped copy
        out.append(f"- **Registry:** {registry_note(env.torch)}")
    out.append("")


def _options(opts: Options | None, source: str) -> str:
    if opts is None:
        if source == "live":
            return "those of the program's own `torch.compile` calls (not recorded)"
        if source == "trace":  # tlparse #71: which torch.compile call and options
            return (
                "not in a TORCH_TRACE log (torch logs no backend, mode or call site per "
                "compile); a live capture (`compiler.explore`, `%%compile`) records them"
            )
        return "not recorded in this source"
    default = "torch's default"
    parts = [
        f"backend {_code(opts.backend) if opts.backend else default}",
        f"mode {_code(opts.mode) if opts.mode else default}",
        f"dynamic {_code(repr(opts.dynamic)) if opts.dynamic is not None else default}",
        f"fullgraph {_code(repr(opts.fullgraph))}",
    ]
    if opts.options:
        parts.append("options " + ", ".join(_code(f"{k}={v}") for k, v in opts.options.items()))
    parts.append("caches kept" if opts.keep_caches else "FX graph and AOTAutograd caches off")
    parts.append("compiled by `explore`" if opts.wrapped else "target run as given")
    return "; ".join(parts)


def _overview(exp: Exploration, out: list[str]) -> None:
    out += ["## Overview", ""]
    if not exp.compiles:
        out += ["No torch.compile compiles were recorded.", ""]
        return
    frames = {
        (c.rank, c.compile_id.frame_id, c.compile_id.compiled_autograd_id) for c in exp.compiles
    }
    kernels = sum(len(c.kernels()) for c in exp.compiles)
    out += [
        f"{_count(len(exp.compiles), 'compile')} of {_count(len(frames), 'frame')}, "
        f"{_count(len(exp.recompiles), 'recompile')}, "
        f"{_count(len(exp.graph_breaks), 'graph break')}, {_count(kernels, 'kernel')}.",
        "",
    ]
    multi_rank = len(exp.ranks) > 1
    head = ["compile", "frame", "location", "status", "graph breaks", "recompile of", "kernels",
            "compile time"]  # fmt: skip
    if multi_rank:
        head.insert(0, "rank")
    # how often the run called each compile's code (tlparse #46): a profiled run's only
    calls = {r.compile: r for r in exp.profile.regions} if exp.profile is not None else {}
    if calls:
        head.append("calls in your run")
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in exp.compiles:
        row = [
            _code(compile_title(c)),
            _code(c.code_name) if c.code_name else "—",
            _code(_where(c)) if c.filename else "—",
            _STATUS.get(c.status, c.status).split(" (")[0],
            str(len(c.graph_breaks)) if c.graph_breaks else "",
            ", ".join(_code(r.previous) for r in c.recompile_reasons if r.previous),
            str(len(c.kernels())) if c.kernels() else "",
            _seconds(c.metrics.entire_frame_seconds),
        ]
        if multi_rank:
            row.insert(0, "—" if c.rank is None else str(c.rank))
        if calls:
            r = calls.get(c.key)
            row.append(f"{r.calls} ({_us(r.total_us)})" if r is not None else "0")
        out.append("| " + " | ".join(_cell(x) for x in row) + " |")
    out.append("")
    if not calls:
        out += [f"Calls in your run per compile: {no_calls_note(exp.source)}.", ""]


def _calls(c: Compile, regions: tuple[RegionCalls, ...]) -> list[str]:
    mine = next((r for r in regions if r.compile == c.key), None)
    if mine is None:
        return ["- **Calls in your run:** none"] if regions else []
    frame = frames_of(regions)[mine.frame]
    whole = f"; its frame: {frame_text(frame)}" if len(frame) > 1 else ""
    return [f"- **Calls in your run:** {calls_text(mine)}{whole}"]


def _compile(c: Compile, *, multi_rank: bool, compiled: frozenset[str], out: list[str],
             regions: tuple[RegionCalls, ...] = ()) -> None:  # fmt: skip
    rank = f" (rank {c.rank})" if multi_rank and c.rank is not None else ""
    name = f": {_code(c.code_name)}" if c.code_name else ""
    out += [f"## Compile {_code(compile_title(c))}{name}{rank}", ""]
    where = _code(_where(c)) if c.filename else "unknown"
    if c.is_resume:
        where += " (a resume function Dynamo made after a graph break)"
    out.append(f"- **Location:** {where}")
    caller = _caller(c, compiled)
    if caller is not None:
        out.append(f"- **Reached from:** {_loc(caller)}")
    out.append(f"- **Status:** {_STATUS.get(c.status, c.status)}")
    if c.id_reused:
        out.append(f"- **Compile id:** torch gave {_code(str(c.compile_id))} to an earlier "
                   "compile of this run too (newer torch numbers the compiles of each "
                   "`isolate_recompiles=True` region apart); shown as "
                   f"{_code(compile_title(c))}")  # fmt: skip
    if c.metrics.fail_type:
        out.append(f"- **Failure:** {_code(c.metrics.fail_type)}")
        if c.metrics.fail_reason:
            out += _block(c.metrics.fail_reason, indent="  ")
    summaries = {gb.summary for gb in c.graph_breaks}
    if c.attempts > 1 or c.restart_reasons:
        out.append(
            f"- **Attempts:** {c.attempts}" + ("; restarted because:" if c.restart_reasons else "")
        )
        for reason in c.restart_reasons:
            first = _first_line(reason)
            see = " (the graph break below)" if first in summaries else ""
            out.append(f"  - {first}{see}")
    if c.recompile_reasons:
        out.append("- **Recompiled because** guards failed:")
        for r in c.recompile_reasons:
            prefix = f"guard of {_code(r.previous)} failed: " if r.previous else ""
            out.append(f"  - {prefix}{r.reason or r.text}")
    out += _calls(c, regions)
    out.append(f"- **Guards:** {_guards(c)}")
    if c.bytecode is not None:
        out.append(f"- **Bytecode:** {_bytecode(c.bytecode)}")
    out.append("")
    if c.graph_breaks:
        out += ["### Graph breaks", ""]
        for number, gb in enumerate(c.graph_breaks, start=1):
            out += _graph_break(number, gb)
        out.append("")
    if c.graphs:
        out += ["### Graphs", "", "| stage | nodes |", "|---|---|"]
        for stage, graph in c.graphs.items():
            nodes = str(len(graph.nodes))
            if graph.parse_error:
                nodes += f" (could not parse: {graph.parse_error})"
            out.append(f"| {_cell(_code(stage))} | {_cell(nodes)} |")
        out.append("")
    for index, oc in enumerate(c.output_code, start=1):
        _output_code(oc, index, len(c.output_code), out)
    _metrics(c.metrics, out)
    if c.errors:
        out += ["### Stage errors", ""]
        out += [_stage_error(e) for e in c.errors]
        out.append("")


def _graph_break(number: int, gb: GraphBreak) -> list[str]:
    where = ""
    if gb.location is not None:
        where = f" at {_code(str(gb.location))}"
        if gb.location.function:
            where += f" in {_code(gb.location.function)}"
    lines = [f"{number}. **{gb.summary or _first_line(gb.reason) or 'graph break'}**{where}"]
    if gb.location is not None and gb.location.code:
        lines.append(f"   - Code: {_code(gb.location.code.strip())}")
    lines += [f"   - Hint: {hint}" for hint in gb.hints]
    if gb.documentation:
        lines.append(f"   - More: <{gb.documentation}>")
    return lines


def _guards(c: Compile) -> str:
    parts = []
    if c.guards is not None:
        parts.append(_count(len(c.guards.guards), "guard") + " in the guard tree")
        if c.guards.symbolic:
            shown = ", ".join(_code(s) for s in c.guards.symbolic[:5])
            more = f" and {len(c.guards.symbolic) - 5} more" if len(c.guards.symbolic) > 5 else ""
            parts.append(f"symbolic: {shown}{more}")
    if c.metrics.guard_count is not None:
        parts.append(f"torch's `guard_count`: {c.metrics.guard_count}")
    return "; ".join(parts) if parts else "none recorded"


def _bytecode(bc: Bytecode) -> str:
    have = [w for w, text in (("original", bc.original), ("transformed", bc.transformed)) if text]
    text = " and ".join(have) + " recorded" if have else "not recorded"
    if bc.decompiled:
        text += "; decompiled"
    elif bc.decompile_error:
        text += f"; not decompiled ({_first_line(bc.decompile_error)})"
    return text


def _output_code(oc: OutputCode, index: int, total: int, out: list[str]) -> None:
    aot = f" ({_code(oc.aot_id)})" if oc.aot_id else ""
    out += [f"### Output code {index} of {total}: {oc.graph}{aot}", ""]
    if oc.path:
        out.append(
            f"- **File:** {_code(oc.path)}"
            + (f", {_count(len(oc.text.splitlines()), 'line')}" if oc.text else "")
        )
    if oc.graphs:
        shown = ", ".join(
            f"{_code(k)} ({_count(len(g.nodes), 'node')})" for k, g in oc.graphs.items()
        )
        out.append(f"- **Graphs:** {shown}")
    out.append(f"- **Kernels:** {len(oc.kernels) or 'none'}")
    for k in oc.kernels:
        out += _kernel(k)
    linked = any(k.post_grad_nodes for k in oc.kernels)
    if oc.kernels and not linked and not any(e.stage == "provenance" for e in oc.errors):
        out.append(
            "  - (Inductor's provenance maps link none of these kernels to post-grad nodes.)"
        )
    if oc.schedule is not None and oc.schedule.fused:
        out.append(f"- **Scheduler nodes after fusion:** {len(oc.schedule.fused)}")
        for f in oc.schedule.fused:
            members = ""
            if f.members != (f.name,):
                members = " fuses " + ", ".join(_code(m) for m in f.members)
            extern = f" calls {_code(f.extern_kernel)}" if f.extern_kernel else ""
            writes = f"; writes {', '.join(_code(b) for b in f.buffers)}" if f.buffers else ""
            out.append(f"  - {_code(f.name)} ({f.kind}){members}{extern}{writes}")
    for e in oc.errors:
        out.append(_stage_error(e))
    out.append("")


def _kernel(k: Kernel) -> list[str]:
    size = _count(len(k.source.splitlines()), "call line" if k.language == "extern" else "line")
    nodes = ""
    if k.post_grad_nodes:
        verb = "runs" if k.language == "extern" else "fuses"
        nodes = f"; {verb} post-grad nodes " + ", ".join(_code(n) for n in k.post_grad_nodes)
    lines = [f"  - {_code(k.name)} ({k.language}, {size}){nodes}"]
    lines += [f"    - from {_loc(loc)}" for loc in k.user_lines]
    return lines


def _metrics(m: CompileMetrics, out: list[str]) -> None:
    figures = m.times()
    phases = _top_phases(m.phases)
    caches = m.fx_cache_hits + m.fx_cache_misses + m.aot_cache_hits + m.aot_cache_misses
    if not (figures or phases or caches or m.graph_op_count is not None):
        return
    out += ["### Compile time", ""]
    if figures:
        out.append("- " + ", ".join(f"{label} {_seconds(v)}" for label, v in figures))
    for top, children in phases:
        inner = ", ".join(f"{_code(p.name)} {_seconds(p.seconds)}" for p in children)
        out.append(f"- {_code(top.name)} {_seconds(top.seconds)}" + (f": {inner}" if inner else ""))
    if caches:
        out.append(
            f"- FX graph cache: {_count(m.fx_cache_hits, 'hit')}, "
            f"{_count(m.fx_cache_misses, 'miss')}; AOTAutograd cache: "
            f"{_count(m.aot_cache_hits, 'hit')}, {_count(m.aot_cache_misses, 'miss')}"
        )
    if m.graph_op_count is not None:
        out.append(f"- Ops in the Dynamo graph (`graph_op_count`): {m.graph_op_count}")
    out.append("")


def _top_phases(phases: tuple[Phase, ...]) -> list[tuple[Phase, list[Phase]]]:
    """Depth-0 phases, each with the depth-1 phases that ended inside it.

    Phases are recorded when they end, so a phase's children come before it.
    """
    result: list[tuple[Phase, list[Phase]]] = []
    children: list[Phase] = []
    for p in phases:
        if p.depth == 1:
            children.append(p)
        elif p.depth == 0:
            result.append((p, children))
            children = []
    return result


def _costs(exp: Exploration, out: list[str]) -> None:
    """Memory (saved for backward, measured peaks) and CUDA graphs, where there are any."""
    import compiler
    from compiler.costs.cudagraphs import markdown

    mem = compiler.memory(exp)
    if any(c.saved for c in mem.compiles) or mem.peaks:
        out += ["## Memory", "", mem.table(), ""]
    graphs = markdown(compiler.cudagraphs(exp))
    if graphs:
        out += ["## CUDA graphs", "", graphs, ""]


def _closing(exp: Exploration, out: list[str]) -> None:
    errors = exp.stage_errors()  # the capture's and the advisor's
    if errors:
        out += ["## Stage errors", ""]
        out += [_stage_error(e) for e in errors]
        out.append("")
    notes = list(exp.notes)
    if exp.unknown_keys:
        keys = ", ".join(_code(k) for k in exp.unknown_keys)
        notes.append(f"The JSON this was read from had keys this version does not know: {keys}.")
    if notes:
        out += ["## Notes", ""]
        out += [f"- {note}" for note in notes]
        out.append("")


def _caller(c: Compile, compiled: frozenset[str]) -> SourceLoc | None:
    """The innermost frame of user code (``is_user_file``, ``compiled``: the compiled
    files) in torch's stack above the compiled frame. Torch leaves some frames out of
    this stack, so it is not always the direct caller.
    """
    above = reversed(c.stack[:-1])
    return next((loc for loc in above if is_user_file(loc.filename, compiled)), None)


def _where(c: Compile) -> str:
    return f"{c.filename}:{c.first_line}" if c.first_line else c.filename


def _stage_error(e: StageError) -> str:
    line = f"- **{e.stage}:** {e.message}"
    if not e.traceback:
        return line
    # where the explorer's own code failed: its innermost frames, for a bug report
    tail = e.traceback.rstrip().splitlines()[-_TRACEBACK_LINES:]
    return "\n".join([line, "", "  ```text", *(f"  {t}" for t in tail), "  ```"])


_TRACEBACK_LINES = 12


