"""``compiler.diff``: what changed between two compiles, stage by stage, in one line too.

Compiles pair up by key (``0/0`` with ``0/0``); within a compile, every text stage is
compared line by line, every graph node by stable identity (``compiler.diff.identity``),
guards by what they guard, kernels by name and fusion group. Object ids and addresses
that differ between any two processes are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.diff.identity import node_identities
from compiler.diff.parts import (
    GuardChange,
    KernelDiff,
    LineOp,
    NodeChange,
    StageDiff,
    compare_guards,
    compare_kernels,
    graph_stage,
    line_diff_lines,
    text_stage,
)
from compiler.link.ids import compile_pane, key_of, output_keys, output_pane
from compiler.model import Compile, Exploration, GraphBreak
from compiler.model.stages import DYNAMO_GRAPH

_FROZEN = {"frozen": True, "kw_only": True, "slots": True}

# The graph whose node changes the summary names: the user-level one first.
_SUMMARY_GRAPHS = (DYNAMO_GRAPH, "aot_inference_graph", "aot_forward_graph")
_MAX_NAMED = 3


@dataclass(**_FROZEN)
class CompileDiff:
    """Two compiles compared (``a`` or ``b`` may be missing: ``presence``)."""

    key: str
    presence: str = "both"
    stages: tuple[StageDiff, ...] = ()
    guards: tuple[GuardChange, ...] = ()
    graph_breaks: tuple[tuple[str, str], ...] = ()
    recompile_reasons: tuple[tuple[str, str], ...] = ()
    kernels: KernelDiff | None = None
    seconds: tuple[float | None, float | None] = (None, None)

    def stage(self, name: str) -> StageDiff | None:
        """The comparison of stage ``name`` (a trace key), or None."""
        return next((s for s in self.stages if s.stage == name), None)


@dataclass(**_FROZEN)
class Diff:
    """What changed from ``a`` to ``b``: per compile, per stage, and one summary line.

    ``stages`` lists every stage of every compile, with line operations for text and
    node changes for graphs, which is what a side-by-side view draws.
    """

    a_label: str
    b_label: str
    compiles: tuple[CompileDiff, ...]
    summary: str

    @property
    def stages(self) -> tuple[StageDiff, ...]:
        """Every stage compared, compile by compile."""
        return tuple(s for c in self.compiles for s in c.stages)

    @property
    def changed(self) -> bool:
        """Whether anything but compile time differs."""
        return self.summary != "no change" and not self.summary.startswith("no change ")

    def compile(self, key: str) -> CompileDiff:
        """The comparison of compile ``key`` (``"0/0"``); ``KeyError`` if absent."""
        for c in self.compiles:
            if c.key == key:
                return c
        raise KeyError(f"no compile {key} in this diff ({', '.join(c.key for c in self.compiles)})")

    def to_text(self) -> str:
        """A readable report: the summary, then per compile what changed and where."""
        out = [f"diff {self.a_label} -> {self.b_label}", self.summary, ""]
        for c in self.compiles:
            out.extend(_compile_text(c))
        return "\n".join(out).rstrip() + "\n"

    def __repr__(self) -> str:
        return f"<Diff {self.a_label} -> {self.b_label}: {self.summary}>"


def diff(a: Exploration | Compile, b: Exploration | Compile) -> Diff:
    """Compare two Explorations (compiles paired by key) or two Compiles.

    Args:
        a: the earlier capture (or compile).
        b: the later one, of the same kind as ``a``.

    Returns:
        A frozen ``Diff`` with ``.summary`` (one line), ``.to_text()`` and the
        per-stage structure in ``.compiles``/``.stages``.

    Example:
        >>> import torch, compiler
        >>> a = compiler.explore(lambda x: x.relu() + 1, torch.randn(4), backend="aot_eager")
        >>> b = compiler.explore(lambda x: x + 1, torch.randn(4), backend="aot_eager")
        >>> compiler.diff(a, b).summary  # doctest: +ELLIPSIS
        'node relu removed...'
    """
    compiles: tuple[CompileDiff, ...]
    if isinstance(a, Compile) and isinstance(b, Compile):
        compiles = (_compare(key_of(a), a, b),)
        labels = (a.label, b.label)
    elif isinstance(a, Exploration) and isinstance(b, Exploration):
        a_by = {key_of(c): c for c in a.compiles}
        b_by = {key_of(c): c for c in b.compiles}
        keys = [*a_by, *(k for k in b_by if k not in a_by)]
        compiles = tuple(_compare(k, a_by.get(k), b_by.get(k)) for k in keys)
        labels = (a.target or "a", b.target or "b")
    else:
        msg = (
            f"diff() compares two Explorations or two Compiles, not a {type(a).__name__} "
            f"and a {type(b).__name__}."
        )
        raise TypeError(msg)
    return Diff(a_label=labels[0], b_label=labels[1], compiles=compiles,
                summary=_summary(compiles))  # fmt: skip


def _compare(key: str, a: Compile | None, b: Compile | None) -> CompileDiff:
    if a is None or b is None:
        return CompileDiff(key=key, presence="added" if a is None else "removed")
    stages: list[StageDiff] = []
    ab, bb = a.bytecode, b.bytecode
    stages.append(text_stage(key, "bytecode/original", ab.original if ab else None,
                             bb.original if bb else None))  # fmt: skip
    stages.append(text_stage(key, "bytecode/transformed", ab.transformed if ab else None,
                             bb.transformed if bb else None))  # fmt: skip
    for name in [*a.graphs, *(g for g in b.graphs if g not in a.graphs)]:
        stages.append(graph_stage(key, compile_pane(name), a.graphs.get(name),
                                  b.graphs.get(name)))  # fmt: skip
    stages.append(text_stage(key, "guards", a.guards.tree if a.guards else None,
                             b.guards.tree if b.guards else None))  # fmt: skip
    # keys as ``derive`` made them, also for a compile built by hand
    a_out = dict(zip(output_keys(a.output_code), a.output_code, strict=True))
    b_out = dict(zip(output_keys(b.output_code), b.output_code, strict=True))
    for ok in [*a_out, *(k for k in b_out if k not in a_out)]:
        ao, bo = a_out.get(ok), b_out.get(ok)
        names = [*(ao.graphs if ao else {}), *(g for g in (bo.graphs if bo else {})
                                               if not ao or g not in ao.graphs)]  # fmt: skip
        for name in names:
            stages.append(graph_stage(key, output_pane(ok, name),
                                      ao.graphs.get(name) if ao else None,
                                      bo.graphs.get(name) if bo else None))  # fmt: skip
        stages.append(text_stage(key, output_pane(ok, "inductor_output_code"),
                                 ao.text if ao else None, bo.text if bo else None))  # fmt: skip
    guards = compare_guards(a.guards.guards if a.guards else (),
                            b.guards.guards if b.guards else ())  # fmt: skip
    guards += tuple(
        GuardChange(status=status, kind="symbolic", subject=expr)
        for status, exprs in (("removed", _sym(a) - _sym(b)), ("added", _sym(b) - _sym(a)))
        for expr in sorted(exprs)
    )
    return CompileDiff(
        key=key,
        stages=tuple(s for s in stages if s.a_text or s.b_text),
        guards=guards,
        graph_breaks=_set_changes(
            [_break_text(g) for g in a.graph_breaks], [_break_text(g) for g in b.graph_breaks]
        ),
        recompile_reasons=_set_changes(
            [r.reason for r in a.recompile_reasons], [r.reason for r in b.recompile_reasons]
        ),
        kernels=compare_kernels(a.kernels(), b.kernels(), _post_grad_ids(a), _post_grad_ids(b)),
        seconds=(a.metrics.entire_frame_seconds, b.metrics.entire_frame_seconds),
    )


def _post_grad_ids(c: Compile) -> dict[str, str]:
    ids: dict[str, str] = {}
    for oc in c.output_code:
        graph = oc.graphs.get("inductor_post_grad_graph")
        if graph is not None:
            ids.update(node_identities(graph))
    return ids


def _sym(c: Compile) -> set[str]:
    return set(c.guards.symbolic) if c.guards else set()


def _break_text(gb: GraphBreak) -> str:
    where = f" at line {gb.location.line} ({gb.location.code.strip()})" if gb.location else ""
    return f"{gb.summary or gb.reason}{where}"


def _set_changes(a: list[str], b: list[str]) -> tuple[tuple[str, str], ...]:
    gone = [("removed", x) for x in a if x not in b]
    return tuple(gone + [("added", x) for x in b if x not in a])


def _summary(compiles: tuple[CompileDiff, ...]) -> str:
    parts: list[str] = []
    added = [c.key for c in compiles if c.presence == "added"]
    removed = [c.key for c in compiles if c.presence == "removed"]
    both = [c for c in compiles if c.presence == "both"]
    if added or removed:
        a_n, b_n = len(compiles) - len(added), len(compiles) - len(removed)
        parts.append(f"{a_n} compile{'s' * (a_n != 1)} -> {b_n}")
    for c in both:
        for status, text in c.graph_breaks:
            parts.append(f"graph break {text} {status}")
    for c in both:
        k = c.kernels
        if k is None:
            continue
        if k.a_count != k.b_count:
            parts.append(f"{k.a_count} kernel{'s' * (k.a_count != 1)} -> {k.b_count}")
        elif k.fusion_changed:
            parts.append(f"fusion changed ({_groups(k.a_groups)} -> {_groups(k.b_groups)})")
        elif k.changed_code:
            parts.append(f"kernel code changed ({', '.join(k.changed_code[:_MAX_NAMED])})")
    for c in both:
        parts.extend(_node_phrases(c))
    for c in both:
        guards = _dedup(g.describe() for g in c.guards if g.kind != "GuardManager")
        parts.extend(guards[:_MAX_NAMED])
        if len(guards) > _MAX_NAMED:
            parts.append(f"{len(guards) - _MAX_NAMED} more guard changes")
    for c in both:
        for status, text in c.recompile_reasons:
            parts.append(f"recompile reason {text!r} {status}")
    if parts:
        return "; ".join(_dedup(parts))
    texts = [s.stage for c in both for s in c.stages if s.changed]
    if texts:
        return f"text changed in {', '.join(texts[:_MAX_NAMED])}"
    return "no change" + _time_phrase(both)


def _node_phrases(c: CompileDiff) -> list[str]:
    stage = next((s for g in _SUMMARY_GRAPHS if (s := c.stage(g)) is not None and s.nodes), None)
    if stage is None:
        stage = next((s for s in c.stages if s.kind == "graph" and s.nodes), None)
    if stage is None:
        return []
    phrases: list[str] = []
    for status in ("removed", "added", "changed"):
        names = _dedup(n.name for n in stage.nodes if n.status == status)
        shown = names[:_MAX_NAMED]
        if not shown:
            continue
        more = f" (+{len(names) - len(shown)} more)" if len(names) > len(shown) else ""
        noun = "node" if len(shown) == 1 else "nodes"
        phrases.append(f"{noun} {', '.join(shown)} {status}{more}")
    return phrases


def _time_phrase(both: list[CompileDiff]) -> str:
    a = sum(c.seconds[0] or 0.0 for c in both)
    b = sum(c.seconds[1] or 0.0 for c in both)
    return f" (compile time {a:.2f} s -> {b:.2f} s)" if a or b else ""


def _groups(groups: tuple[tuple[str, ...], ...]) -> str:
    return " ".join("{" + ",".join(g) + "}" for g in groups)


def _dedup(items: object) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:  # type: ignore[attr-defined]
        seen.setdefault(str(item), None)
    return list(seen)


def _compile_text(c: CompileDiff) -> list[str]:
    out = [f"== compile {c.key}" + ("" if c.presence == "both" else f" ({c.presence})")]
    if c.presence != "both":
        return [*out, ""]
    a_s, b_s = c.seconds
    if a_s is not None or b_s is not None:
        out.append(f"compile time: {_sec(a_s)} -> {_sec(b_s)}")
    if c.kernels is not None:
        k = c.kernels
        out.append(f"kernels: {k.a_count} -> {k.b_count}")
        if k.fusion_changed:
            out.append(f"  fusion groups: {_groups(k.a_groups)} -> {_groups(k.b_groups)}")
        out.extend(f"  kernel {name} added" for name in k.added)
        out.extend(f"  kernel {name} removed" for name in k.removed)
        out.extend(f"  kernel {name}: code changed" for name in k.changed_code)
    out.extend(f"graph break {status}: {text}" for status, text in c.graph_breaks)
    out.extend(f"recompile reason {status}: {text}" for status, text in c.recompile_reasons)
    out.extend(f"{g.kind}: {g.describe()}" for g in c.guards)
    for s in c.stages:
        if not s.changed:
            continue
        out.append(f"-- {s.stage}" + ("" if s.presence == "both" else f" ({s.presence})"))
        out.extend(_node_line(n) for n in s.nodes)
        if s.kind == "text" or not s.nodes:
            out.extend(f"  {line}" for line in line_diff_lines(s.a_text, s.b_text))
    out.append("")
    return out


def _node_line(n: NodeChange) -> str:
    detail = f": {n.detail}" if n.detail else ""
    names = n.name if n.a_name in ("", n.b_name) or not n.b_name else f"{n.a_name} -> {n.b_name}"
    return f"  node {names} {n.status}{detail}"


def _sec(value: float | None) -> str:
    return "?" if value is None else f"{value:.2f} s"


__all__ = ["CompileDiff", "Diff", "GuardChange", "KernelDiff", "LineOp", "NodeChange",
           "StageDiff", "diff"]  # fmt: skip
