"""Ids travel whole: every id the explorer's data carries (index, every pane, the advisor's
evidence, the diff) is one the compiler made (``compiler.link.ids``), verbatim, and every
pane id the index lists, the advisor cites or the diff names opens as itself."""

from __future__ import annotations

from pathlib import Path

import programs
import pytest
import torch

import compiler
from compiler.link import ids
from compiler.model import Compile, SourceLoc
from explorer.panes import build_index, build_pane, runtime
from explorer.panes import types as pt
from explorer.panes.costs.compile_time import CompileTimePane
from explorer.panes.costs.memory import MemoryPane
from explorer.panes.kernels import lowering
from explorer.panes.why import reasons

ROOT = Path(__file__).parent.parent
RECORDINGS = [
    ROOT / "notebooks" / "recordings" / "graph_break.json",
    ROOT / "notebooks" / "recordings" / "matmul_max_autotune.json",
    ROOT / "notebooks" / "recordings" / "slow_tiny_inputs.json",
    ROOT / "notebooks" / "recordings" / "training_step.json",
    ROOT / "tests" / "data" / "recordings" / "cuda_pointwise.json",
    ROOT / "tests" / "data" / "recordings" / "cuda_mlp_block_timed.json",
]


def _locations(c: Compile) -> list[SourceLoc]:
    """Every user location the model records for ``c``."""
    out = [*c.stack]
    for gb in c.graph_breaks:
        out.extend(gb.user_stack)
        if gb.location is not None:
            out.append(gb.location)
    graphs = [*c.graphs.values(), *(g for oc in c.output_code for g in oc.graphs.values())]
    out.extend(n.source for g in graphs for n in g.nodes if n.source is not None)
    for k in c.kernels():
        out.extend((*k.user_lines, *k.user_stack))
    return out


def _made_by_the_compiler(exp: compiler.Exploration) -> dict[str, set[str]]:
    """The ids ``compiler.link.ids`` made for ``exp``, by kind (what the view may carry)."""
    made: dict[str, set[str]] = {"compile": set(), "kernel": set()}
    made["pane"] = set(ids.EXPLORATION_PANES)
    src: set[str] = set()
    for c in exp.compiles:
        made["compile"].add(ids.key_of(c))
        made["pane"].update(r.id for r in ids.stage_refs(c))
        made["kernel"].update(ids.kernel_of(k) for k in c.kernels())
        src.update(filter(None, map(ids.loc_key, _locations(c))))
        b = c.bytecode
        lines = (*b.original_lines, *b.transformed_lines) if b is not None else ()
        src.update(filter(None, (ids.src_key(c.filename, n) for n in (c.first_line, *lines))))
    made["src"] = src
    return made


def _carried_by_the_view(exp: compiler.Exploration) -> dict[str, set[str]]:
    """Every id in the index and in every pane built, by kind: what the browser selects by."""
    index = build_index(exp)
    got: dict[str, set[str]] = {"compile": set(), "pane": set(), "kernel": set(), "src": set()}
    got["src"].update(index.src_keys)
    for f in index.sources:
        got["src"].update(s for w in f.windows for s in w.src if s is not None)
    for c in index.compiles:
        got["compile"].update(filter(None, (c.key, c.parent)))
        got["src"].update(filter(None, (c.src,)))
        got["kernel"].update(c.kernels)
        got["pane"].update(r.pane for r in c.kernels.values() if r.pane is not None)
        for ref in c.panes:
            got["pane"].add(ref.id)
            pane = build_pane(exp, c.key, ref.id)
            assert pane.id == ref.id, (c.key, ref.id, pane.id)
            _collect(pane, got)
    return got


def _collect(pane: pt.Pane, got: dict[str, set[str]]) -> None:
    src, kernel = got["src"], got["kernel"]
    if isinstance(pane, pt.GraphPane):
        src.update(s.src for s in pane.sources if s.src is not None)
        kernel.update(k for ks in pane.kernel_sets for k in ks)
    elif isinstance(pane, pt.CodePane):
        src.update(s for b in pane.blocks for s in b.line_src if s is not None)
    elif isinstance(pane, pt.OutputCodePane):
        for k in pane.kernels:
            kernel.add(k.id)
            src.update(k.src)
            got["pane"].update(filter(None, (k.lowering,)))
    elif isinstance(pane, reasons.GraphBreaksPane):
        for item in pane.items:
            src.update(filter(None, (item.src, *(f.src for f in item.user_stack))))
    elif isinstance(pane, runtime.KernelTimingPane):
        for row in pane.rows:
            kernel.add(row.kernel)
            src.update(row.src)
    elif isinstance(pane, runtime.AutotuningPane):
        for op in pane.ops:
            kernel.update(filter(None, (op.kernel, *(r.kernel for r in op.rows))))
    elif isinstance(pane, lowering.TritonLoweringPane):
        kernel.add(pane.kernel)
    elif isinstance(pane, CompileTimePane):
        for b in pane.bars:
            got["compile"].add(b.compile)
            got["pane"].update(filter(None, (b.stage, b.graph)))
            src.update(filter(None, (b.src,)))
    elif isinstance(pane, MemoryPane):
        for c in pane.compiles:
            got["compile"].add(c.compile)
            got["pane"].update(filter(None, (r.stage for r in c.rows)))
            src.update(filter(None, (r.src for r in c.rows)))
    elif isinstance(pane, pt.FindingsPane):
        for e in (e for f in pane.items for e in f.evidence):
            got["compile"].update(filter(None, (e.compile,)))
            got["pane"].update(filter(None, (e.stage,)))
            got["kernel"].update(filter(None, (e.kernel,)))
            src.update(filter(None, (e.src,)))


def _assert_every_view_id_is_the_compilers(exp: compiler.Exploration) -> dict[str, set[str]]:
    made = _made_by_the_compiler(exp)
    carried = _carried_by_the_view(exp)
    for kind, values in carried.items():
        assert values, f"the view carries no {kind} id: nothing checked"
        assert values <= made[kind], f"{kind} ids the compiler never made: {values - made[kind]}"
    return carried


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.stem)
def test_every_id_in_a_recordings_view_is_one_the_compiler_made(path):
    exp = compiler.Exploration.from_json(path.read_text())
    carried = _assert_every_view_id_is_the_compilers(exp)
    index = build_index(exp)
    # the short labels travel beside their keys, one each, made from the same location
    assert len(index.src_labels) == len(index.src_keys)
    for key, label in zip(index.src_keys, index.src_labels, strict=True):
        assert key == label or key.endswith("/" + label), (key, label)
    assert all(f.short_name.endswith(Path(f.filename).name) for f in index.sources)
    assert carried["src"] <= set(index.src_keys), "a pane links a line the source panel lacks"


def test_a_live_capture_with_a_graph_break_and_inductor_kernels_carries_only_compiler_ids():
    exp = compiler.explore(programs.data_dependent, torch.randn(8), backend="inductor")
    carried = _assert_every_view_id_is_the_compilers(exp)
    assert any("/" in p for p in carried["pane"]), "no output-code pane checked"
    assert exp.findings(), "no finding: evidence ids unchecked"


def test_evidence_of_a_real_finding_opens_the_pane_and_selects_what_it_names():
    exp = compiler.explore(programs.with_print, torch.randn(4), backend="aot_eager")
    (finding,) = [f for f in exp.findings() if f.kind.startswith("graph_break")]
    index = build_index(exp)
    panes = {c.key: {p.id for p in c.panes} for c in index.compiles}
    for e in finding.evidence:
        assert e.compile in panes
        if e.stage is not None:
            assert e.stage in panes[e.compile]
            assert build_pane(exp, e.compile, e.stage).id == e.stage
        if e.src is not None:
            assert e.src in index.src_keys
    assert any(e.src for e in finding.evidence), "the break names no source line"


def test_every_stage_id_resolves_to_its_own_stage_and_no_other():
    exp = compiler.Exploration.from_json(RECORDINGS[3].read_text())  # training: fwd + bwd
    for c in exp.compiles:
        refs = ids.stage_refs(c)
        assert len({r.id for r in refs}) == len(refs), "two stages of one compile share an id"
        for r in refs:
            assert ids.stage_ref(c, r.id) == r
        outputs = {oc.key for oc in c.output_code}
        assert {r.output for r in refs if r.output is not None} <= outputs
    assert ids.stage_ref(exp.compiles[0], "forward/no_such_stage") is None
    with pytest.raises(ValueError, match="output_pane"):
        ids.compile_pane("forward/inductor_output_code")


def test_the_diff_names_output_code_stages_by_the_panes_ids():
    a = compiler.explore(programs.pointwise, torch.randn(4, 4), backend="inductor")
    b = compiler.explore(lambda x: torch.sin(x) + 2, torch.randn(4, 4), backend="inductor")
    d = compiler.diff(a, b)
    index = build_index(b)
    panes = {c.key: {p.id for p in c.panes} for c in index.compiles}
    # bytecode and guards are compared as texts of their own, not as panes
    texts = ("bytecode/original", "bytecode/transformed", "guards")
    stages = [s for s in d.stages if s.stage not in texts]
    assert any(s.stage.endswith("/inductor_output_code") for s in stages), [s.stage for s in stages]
    assert all(s.stage in panes[s.compile] for s in stages), [s.stage for s in stages]
