"""The index: what the explorer's first paint needs, without building any pane.

``build_index(exp)`` lists the compile tree, each compile's panes as ``PaneRef`` (id,
stage, label, group, kind), the user source lines the panes link to, and the default
selection. It reads no graph's nodes, so it stays fast on a model of any size.
"""

from __future__ import annotations

import linecache
from collections.abc import Callable, Mapping
from dataclasses import asdict

from compiler import Compile, Exploration, cudagraphs
from compiler.link import ids
from compiler.link.user_code import graph_source_lines
from compiler.measure.memory_peak import from_counters

from .index_types import (
    CompileEntry,
    Index,
    KernelRef,
    PaneRef,
    Selection,
    SourceFile,
    SourceWindow,
)
from .labels import STAGE_LABELS, default_pane, group_of, kind_of, label_of
from .types import PaneError

CONTEXT = 3  # lines shown around each linked line
GAP = 8  # windows closer than this merge into one


def _ref(ref: ids.StageRef, suffix: str = "") -> PaneRef:
    stage = ref.stage
    return PaneRef(
        id=ref.id,
        stage=stage,
        label=label_of(stage, suffix),
        group=group_of(stage),
        kind=kind_of(stage),
    )


# When each pane of the whole exploration is listed. Here, not beside each pane's
# builder: the index is built for every page, and a pane's module (its dataclasses, about
# 1 ms each to create) is imported only when a pane of its kind is built.


def has_compile_time(exp: Exploration) -> bool:
    """Whether ``exp`` has a run to rank: two compiles or more with torch's entire-frame
    compile time (one compile's phases are its own compile-time pane)."""
    return sum(1 for c in exp.compiles if c.metrics.entire_frame_seconds) > 1


def has_cudagraphs(exp: Exploration) -> bool:
    """Whether torch said anything about CUDA graphs in ``exp`` (the pane is listed then).

    >>> has_cudagraphs(Exploration(source=""))
    False
    """
    g = cudagraphs(exp)
    return bool(g.sites or g.overwritten or g.pending_backwards)


def has_memory(exp: Exploration) -> bool:
    """Whether ``exp`` has a backward (and so saved tensors) or measured peaks; reads no
    graph's nodes."""
    peaks = bool(from_counters(exp.counters))
    return peaks or any("aot_backward_graph" in c.graphs for c in exp.compiles)


def has_numerics(exp: Exploration) -> bool:
    """Whether ``exp`` carries ``compiler.numerics``' record."""
    return exp.numerics is not None


def has_ranks(exp: Exploration) -> bool:
    """Whether ``exp`` ran on several ranks (and so has a ranks pane)."""
    return len(exp.ranks) > 1


# the run's cost panes (``explorer.panes.costs``), listed where they have something to show
_COSTS = (
    (ids.COMPILE_TIME, has_compile_time),
    (ids.MEMORY, has_memory),
    (ids.CUDAGRAPHS, has_cudagraphs),
    (ids.NUMERICS, has_numerics),
)


def pane_refs(c: Compile, *shared: PaneRef | None) -> tuple[PaneRef, ...]:
    """The panes of one compile, in the order the compiler ran the stages: the panes of
    the whole exploration every compile lists first (findings, ranks), then every stage
    the compiler lists (``compiler.link.ids.stage_refs``), labelled; a stage of one output
    code is labelled with its key, a kernel's lowering with the kernel's name."""
    refs: list[PaneRef] = [r for r in shared if r is not None]
    names = {k.id: k.name for k in c.kernels()}
    for r in ids.stage_refs(c):
        refs.append(_ref(r, names.get(r.kernel, "") if r.kernel is not None else r.output or ""))
    return tuple(refs)


def kernel_refs(c: Compile) -> dict[str, KernelRef]:
    """Each kernel of ``c`` by ``Kernel.id``: its name and its output-code pane."""
    return {
        k.id: KernelRef(name=k.name, pane=ids.output_code_pane(oc) if oc.text else None)
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
    return tuple(
        PaneError(
            stage=getattr(e, "stage", ""),
            message=getattr(e, "message", ""),
            traceback=getattr(e, "traceback", ""),
        )
        for e in errors
    )


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


def _window(filename: str, start: int, lines: tuple[str, ...], linked: set[int]) -> SourceWindow:
    """A window of ``lines`` from ``start``, with the source key of each linked line."""
    src = tuple(
        ids.src_key(filename, n) if n in linked else None for n in range(start, start + len(lines))
    )
    return SourceWindow(start=start, lines=lines, src=src)


def _sources(seen: _Lines, first: frozenset[str]) -> tuple[SourceFile, ...]:
    """One entry per file, read with ``linecache`` (IPython cells included); when a
    file is not on this machine, the function source or the lines torch recorded."""
    files = []
    for filename in sorted(seen.lines, key=lambda f: (f not in first, f)):
        linked = seen.lines[filename]
        wanted = sorted(linked)
        short = ids.short_path(filename)
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
                _window(filename, lo, tuple(text_lines[lo - 1 : hi]), linked)
                for lo, hi in _windows(wanted, len(text_lines))
            ]
            files.append(
                SourceFile(
                    filename=filename,
                    short_name=short,
                    available=True,
                    note=note,
                    windows=tuple(windows),
                )
            )
            continue
        recorded = seen.functions.get(filename)
        if recorded:
            note = (
                f"{filename} is not on this machine: showing the function source "
                "recorded at capture."
            )
            windows = [
                _window(filename, s, tuple(t.split("\n")), linked) for s, t in sorted(recorded)
            ]
        else:
            note = (
                f"{filename} is not on this machine: showing only the lines torch recorded "
                "(put the file at this path to see it all)."
            )
            windows = [
                _window(filename, n, (seen.code.get((filename, n), ""),), linked) for n in wanted
            ]
        files.append(
            SourceFile(
                filename=filename,
                short_name=short,
                available=False,
                note=note,
                windows=tuple(windows),
            )
        )
    return tuple(files)


def _entry(c: Compile, panes: tuple[PaneRef, ...]) -> CompileEntry:
    return CompileEntry(
        key=c.key,
        compile_id=ids.compile_title(c),
        rank=c.rank,
        label=c.label,
        code_name=c.code_name,
        status=c.status,
        is_resume=c.is_resume,
        attempts=c.attempts,
        restart_reasons=c.restart_reasons,
        markers=_markers(c),
        parent=c.parent,
        src=ids.src_key(c.filename, c.first_line),
        errors=_errors(c.errors),
        panes=panes,
        kernels=kernel_refs(c),
        name=_name(c),
        default_stage=default_pane([p.id for p in panes]),
    )


def build_index(exp: Exploration, *, whole: Exploration | None = None) -> Index:
    """The compile tree, pane list, source table and default selection of ``exp``;
    the advisor and the ranks pane judge ``whole`` when given (the outline of every rank,
    while ``exp`` holds one rank's compiles in full and the others in outline).

    Example:
        >>> import torch, compiler
        >>> idx = build_index(compiler.explore(torch.sin, torch.randn(4), backend="eager"))
        >>> [p.id for p in idx.compiles[0].panes][:2]
        ['bytecode', 'dynamo_output_graph']
    """
    judged = whole or exp
    findings = judged.findings()  # never raises: a failure is an ``advisor`` stage error
    errors = [*_errors(exp.errors), *_errors(judged.stage_errors()[len(judged.errors) :])]
    fref = _ref(ids.StageRef(id=ids.FINDINGS, stage="findings")) if findings else None
    rref = _ref(ids.StageRef(id=ids.RANKS, stage="ranks")) if has_ranks(whole or exp) else None
    pref = _ref(ids.StageRef(id=ids.PROFILE, stage="profile")) if exp.profile else None
    costs = [_ref(ids.StageRef(id=i, stage=i)) for i, has in _COSTS if has(exp)]
    seen = _collect(exp)
    compiles = tuple(_entry(c, pane_refs(c, fref, rref, pref, *costs)) for c in exp.compiles)
    first = compiles[0] if compiles else None
    stage = first.default_stage if first is not None else None
    if stage is not None and any(f.severity == "problem" for f in findings):
        stage = ids.FINDINGS  # a problem the advisor found opens first
    frame_files = frozenset(c.filename for c in exp.compiles if c.filename)
    lines = [(f, n) for f in sorted(seen.lines) for n in sorted(seen.lines[f])]
    return Index(
        title=f"torch.compile explorer: {exp.target}" if exp.target else "torch.compile explorer",
        source=exp.source,
        target=exp.target,
        environment=asdict(exp.environment),
        options=asdict(exp.options) if exp.options is not None else None,
        notes=exp.notes,
        errors=tuple(errors),
        labels=dict(STAGE_LABELS),
        # every line was added with a file and a line, so each has a key
        src_keys=tuple(filter(None, (ids.src_key(f, n) for f, n in lines))),
        src_labels=tuple(ids.src_label(f, n) for f, n in lines),
        sources=_sources(seen, frame_files),
        compiles=compiles,
        findings=fref,
        default_selection=Selection(compile=first.key if first else None, stage=stage),
        exploration_panes=ids.EXPLORATION_PANES,
    )


def kept_selection(
    index: Index, old: Mapping[str, str | None], has_node: Callable[[str, str, str], bool]
) -> Selection:
    """What to select in ``index``, a new version (a live recompile), of what the user had
    selected, ``old``: each of its ids that still exists there (the stage, else the
    compile's ``default_stage``; the node when its stage is kept and ``has_node(compile,
    stage, node)``), and the index's default selection when the compile is gone. The one
    repair of a selection: the browser shows the selection it gets.

    Example:
        >>> import torch, compiler
        >>> idx = build_index(compiler.explore(torch.sin, torch.randn(4), backend="eager"))
        >>> old = {"compile": "0/0", "stage": "ttir", "node": "sin", "kernel": "k"}
        >>> kept_selection(idx, old, lambda compile, stage, node: True)
        Selection(compile='0/0', stage='dynamo_output_graph', src=None, node=None, kernel=None)
        >>> kept_selection(idx, {"compile": "9/9"}, lambda *_: True) == idx.default_selection
        True
    """
    entry = next((c for c in index.compiles if c.key == old.get("compile")), None)
    if entry is None:
        return index.default_selection
    stage, node, src, kernel = (old.get(k) for k in ("stage", "node", "src", "kernel"))
    if not any(p.id == stage for p in entry.panes):
        stage, node = entry.default_stage, None  # a node of another stage is not here
    if stage is None or not node or not has_node(entry.key, stage, node):
        node = None
    return Selection(
        compile=entry.key,
        stage=stage,
        src=src if src is not None and src in set(index.src_keys) else None,
        node=node,
        kernel=kernel if kernel is not None and kernel in entry.kernels else None,
    )


__all__ = ["build_index", "kept_selection", "pane_refs"]
