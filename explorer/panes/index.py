"""The index: what the explorer's first paint needs, without building any pane.

``build_index(exp)`` lists the compile tree, each compile's panes as ``PaneRef`` (id,
stage, label, group, kind), the user source lines the panes link to, and the default
selection. It reads no graph's nodes, so it stays fast on a model of any size.
"""

from __future__ import annotations

import linecache
from dataclasses import asdict

from compiler import Compile, Exploration
from compiler.link.user_code import graph_source_lines

from .frame import line_key, src_key
from .inductor import lowering_id
from .labels import STAGE_LABELS, group_of, label_of
from .runtime import has_timing
from .types import (
    CompileEntry,
    Index,
    KernelRef,
    PaneError,
    PaneRef,
    Selection,
    SourceFile,
    SourceWindow,
)

_GRAPH_ORDER = (
    "dynamo_output_graph",
    "before_pre_grad_graph",
    "after_pre_grad_graph",
    "aot_joint_graph",
    "before_joint_graph",
    "after_joint_graph",
    "aot_forward_graph",
    "aot_backward_graph",
    "aot_inference_graph",
)
_FRAME_ORDER = (
    "bytecode",
    "dynamo_output_graph",
    "dynamo_cpp_guards_str",
    "dynamo_graph_break_reason",
    "recompile_reasons",
)
_POST_GRAD = ("before_post_grad_graph", "inductor_post_grad_graph")
CONTEXT = 3  # lines shown around each linked line
GAP = 8  # windows closer than this merge into one


def _ref(pid: str, stage: str, kind: str, suffix: str = "") -> PaneRef:
    return PaneRef(
        id=pid, stage=stage, label=label_of(stage, suffix), group=group_of(stage), kind=kind
    )


def pane_refs(c: Compile, findings: PaneRef | None = None) -> tuple[PaneRef, ...]:
    """The panes of one compile, in the order the compiler ran the stages."""
    refs: list[PaneRef] = [findings] if findings is not None else []
    extra = sorted(set(c.graphs) - set(_GRAPH_ORDER))
    for stage in (*_FRAME_ORDER, *_GRAPH_ORDER[1:], *extra):
        if stage in c.graphs:
            refs.append(_ref(stage, stage, "graph"))
        elif (
            stage == "bytecode"
            and (c.bytecode is not None or any(e.stage == "bytecode" for e in c.errors))
        ) or (stage == "dynamo_cpp_guards_str" and c.guards is not None):
            refs.append(_ref(stage, stage, "code"))
        elif stage == "dynamo_graph_break_reason" and c.graph_breaks:
            refs.append(_ref(stage, stage, "graph_breaks"))
        elif stage == "recompile_reasons" and c.recompile_reasons:
            refs.append(_ref(stage, stage, "recompile_reasons"))
    first_output = None
    for oc in c.output_code:
        key = oc.key
        for gid in (*_POST_GRAD, *sorted(set(oc.graphs) - set(_POST_GRAD))):
            if gid in oc.graphs:
                refs.append(_ref(f"{key}/{gid}", gid, "graph", key))
        if oc.schedule is not None:
            refs.append(_ref(f"{key}/ir_post_fusion", "ir_post_fusion", "schedule", key))
        if oc.text:
            first_output = len(refs) if first_output is None else first_output
            refs.append(
                _ref(output_code_pane(key), "inductor_output_code", "output_code", key)
            )
            for k in oc.kernels:
                lid = lowering_id(k)
                if lid is not None:
                    refs.append(_ref(lid, "triton_lowering", "triton_lowering", k.name))
    if c.autotuning:
        at = first_output if first_output is not None else len(refs)
        refs.insert(at, _ref("autotuning", "autotuning", "autotuning"))
    if has_timing(c):
        refs.append(_ref("kernel_timing", "kernel_timing", "kernel_timing"))
    refs.append(_ref("compilation_metrics", "compilation_metrics", "metrics"))
    return tuple(refs)


def output_code_pane(key: str) -> str:
    """The pane id of the output code whose ``OutputCode.key`` is ``key``."""
    return f"{key}/inductor_output_code"


def kernel_refs(c: Compile) -> dict[str, KernelRef]:
    """Each kernel of ``c`` by ``Kernel.id``: its name and its output-code pane."""
    return {
        k.id: KernelRef(name=k.name, pane=output_code_pane(oc.key) if oc.text else None)
        for oc in c.output_code
        for k in oc.kernels
    }


def _name(c: Compile) -> str:
    r = c.resumes
    return f"resume {r.function} at line {r.line}" if r is not None else c.code_name


def _markers(c: Compile) -> tuple[str, ...]:
    out = []
    if c.graph_breaks:
        out.append("graph_break")
    if c.is_recompile:
        out.append("recompile")
    if c.status == "failed":
        out.append("failed")
    return tuple(out)


def _errors(errors: tuple[object, ...]) -> tuple[PaneError, ...]:
    return tuple(PaneError(stage=e.stage, message=e.message) for e in errors)  # type: ignore[attr-defined]


class _Lines:
    """The user source lines the panes link to, and the text torch recorded for them."""

    def __init__(self) -> None:
        self.lines: dict[str, set[int]] = {}
        self.code: dict[tuple[str, int], str] = {}
        self.functions: dict[str, list[tuple[int, str]]] = {}

    def add(self, filename: str, line: int | None, code: str = "") -> None:
        if filename and line:
            self.lines.setdefault(filename, set()).add(line)
            if code:
                self.code.setdefault((filename, line), code)


def _collect(exp: Exploration) -> _Lines:
    seen = _Lines()
    for c in exp.compiles:
        seen.add(c.filename, c.first_line)
        b = c.bytecode
        if b is not None:
            for n in (*b.original_lines, *b.transformed_lines):
                seen.add(c.filename, n)
            if b.source and not c.is_resume and c.filename and c.first_line:
                entry = (c.first_line, b.source.rstrip("\n"))
                if entry not in seen.functions.setdefault(c.filename, []):
                    seen.functions[c.filename].append(entry)
        for gb in c.graph_breaks:
            if gb.location is not None:
                seen.add(gb.location.filename, gb.location.line, gb.location.code)
            for loc, user in zip(gb.user_stack, gb.user_frames, strict=False):
                if user:
                    seen.add(loc.filename, loc.line, loc.code)
        graphs = [*c.graphs.values()]
        for oc in c.output_code:
            graphs.extend(oc.graphs.values())
            for k in oc.kernels:
                for loc in k.user_stack:
                    seen.add(loc.filename, loc.line, loc.code)
        # the graph texts name every source line their nodes came from: read the
        # comments rather than parse every graph before the first paint
        for g in graphs:
            for filename, line in graph_source_lines(g.text):
                seen.add(filename, line)
    return seen


def _windows(lines: list[int], last: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for line in sorted(set(lines)):
        lo, hi = max(1, line - CONTEXT), min(last, line + CONTEXT)
        if out and lo <= out[-1][1] + GAP:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _sources(seen: _Lines, first: frozenset[str]) -> tuple[SourceFile, ...]:
    """One entry per file, read with ``linecache`` (IPython cells included); when a
    file is not on this machine, the function source or the lines torch recorded."""
    files = []
    for filename in sorted(seen.lines, key=lambda f: (f not in first, f)):
        wanted = sorted(seen.lines[filename])
        text_lines = [ln.rstrip("\n") for ln in linecache.getlines(filename)]
        if text_lines:
            changed = [
                n
                for n in wanted
                if (filename, n) in seen.code
                and n <= len(text_lines)
                and text_lines[n - 1].strip() != seen.code[(filename, n)].strip()
            ]
            note = (
                f"{filename} changed since the capture (line {changed[0]} differs "
                "from what torch recorded); lines may not match."
                if changed
                else ""
            )
            windows = [
                SourceWindow(start=lo, lines=tuple(text_lines[lo - 1 : hi]))
                for lo, hi in _windows(wanted, len(text_lines))
            ]
            files.append(
                SourceFile(filename=filename, available=True, note=note, windows=tuple(windows))
            )
            continue
        recorded = seen.functions.get(filename)
        if recorded:
            note = (
                f"{filename} is not on this machine: showing the function source "
                "recorded at capture."
            )
            windows = [
                SourceWindow(start=s, lines=tuple(t.split("\n"))) for s, t in sorted(recorded)
            ]
        else:
            note = (
                f"{filename} is not on this machine: showing only the lines torch recorded "
                "(put the file at this path to see it all)."
            )
            windows = [
                SourceWindow(start=n, lines=(seen.code.get((filename, n), ""),)) for n in wanted
            ]
        files.append(
            SourceFile(filename=filename, available=False, note=note, windows=tuple(windows))
        )
    return tuple(files)


def build_index(exp: Exploration) -> Index:
    """The compile tree, pane list, source table and default selection of ``exp``.

    Example:
        >>> import torch, compiler
        >>> idx = build_index(compiler.explore(torch.sin, torch.randn(4), backend="eager"))
        >>> [p.id for p in idx.compiles[0].panes][:2]
        ['bytecode', 'dynamo_output_graph']
    """
    errors = list(_errors(exp.errors))
    try:
        findings = exp.findings()
    except Exception as exc:  # the advisor must never take the explorer down
        findings = ()
        errors.append(PaneError(stage="findings", message=f"the advisor failed: {exc}"))
    fref = _ref("findings", "findings", "findings") if findings else None
    seen = _collect(exp)
    compiles = tuple(
        CompileEntry(
            key=c.key,
            compile_id=str(c.compile_id),
            rank=c.rank,
            label=c.label,
            code_name=c.code_name,
            status=c.status,
            is_resume=c.is_resume,
            attempts=c.attempts,
            restart_reasons=c.restart_reasons,
            markers=_markers(c),
            parent=c.parent,
            src=line_key(c.filename, c.first_line),
            errors=_errors(c.errors),
            panes=pane_refs(c, fref),
            kernels=kernel_refs(c),
            name=_name(c),
        )
        for c in exp.compiles
    )
    first = compiles[0] if compiles else None
    stage = None
    if first is not None and first.panes:
        ids = [p.id for p in first.panes]
        if any(f.severity == "problem" for f in findings):
            stage = "findings"
        else:
            stage = "dynamo_output_graph" if "dynamo_output_graph" in ids else ids[0]
    frame_files = frozenset(c.filename for c in exp.compiles if c.filename)
    src_keys = tuple(f"{f}:{n}" for f in sorted(seen.lines) for n in sorted(seen.lines[f]))
    return Index(
        title=f"torch.compile explorer: {exp.target}" if exp.target else "torch.compile explorer",
        source=exp.source,
        target=exp.target,
        environment=asdict(exp.environment),
        options=asdict(exp.options) if exp.options is not None else None,
        notes=exp.notes,
        errors=tuple(errors),
        labels=dict(STAGE_LABELS),
        src_keys=src_keys,
        sources=_sources(seen, frame_files),
        compiles=compiles,
        findings=fref,
        default_selection=Selection(compile=first.key if first else None, stage=stage),
    )


__all__ = ["build_index", "pane_refs", "src_key"]
