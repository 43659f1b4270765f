"""Shared by tests/test_advisor.py and benchmarks/advisor_corpus.py: run a corpus case
and check that each finding's evidence points at something that exists."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from compiler import Exploration
from compiler.advise.findings import Evidence, Finding

GPU_RECORDINGS = {
    # recording: the kind that must come first (None: no problem or warning)
    # re-recorded with call timing: the two graphs per call make it slower than eager, on
    # the host side: the break is the cause, so it comes first and the slowdown names it
    "graph_break": "graph_break.data_dependent_branch",
    # re-recorded with call timing: host-bound (0.098 ms of 0.403 ms on the device), so
    # its fp32 matmuls are a note, not a warning
    "transformer_block": None,
    "pointwise": None,
    # re-recorded with call timing (issue 24): one 1024x1024 matmul is host-bound, 0.75x
    "matmul_max_autotune": "gpu.slower_than_eager",
    # a 2-layer GPT-2 training step, default mode (issue 24's capstone): transformers'
    # logger.warning_once in loss_function breaks it; its fp32 matmuls run without TF32
    "capstone_gpt2_default": "graph_break.logging",
    "conv_net": None,
    # made for the advisor by scripts/record_advisor_gpu.py
    # the branch's break makes it slower than eager (host side): the break comes first
    "advisor_slower_than_eager": "graph_break.data_dependent_branch",
    "advisor_cudagraph_skipped": "gpu.cudagraphs_skipped",
    "advisor_gather": "gpu.low_bandwidth",
    # made by scripts/record_gpu.py: compiled slower than eager, host-bound
    "slow_tiny_inputs": "gpu.slower_than_eager",
    "slow_reduce_overhead": "gpu.slower_than_eager",
    "training_step": "gpu.slower_than_eager",
}
# problems a recording has besides its planted one, on purpose: true, not false alarms
GPU_ALSO = {
    # the slowdown the branch causes (two graphs per call), shown after it
    "advisor_slower_than_eager": {"gpu.slower_than_eager"},
    "graph_break": {"gpu.slower_than_eager"},
    "capstone_gpt2_default": {"gpu.fp32_matmul"},
}
# the planted line of a recording made by scripts/record_advisor_gpu.py, by its code
GPU_PLANTED = {
    "advisor_slower_than_eager": "if y.sum() > 0:",
    "advisor_cudagraph_skipped": "x.add_(1)",
}
ROOT = Path(__file__).resolve().parents[2]


def load_case(name: str) -> Any:
    return importlib.import_module(f"advisor_corpus.{name}")


def planted_src(module: Any) -> str | None:
    """``file:line`` of the line marked ``# PLANTED`` in the case's file."""
    path = Path(module.__file__)
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if "# PLANTED" in line:
            return f"{path}:{number}"
    return None


def recorded_planted_line(name: str) -> int | None:
    """The line of ``GPU_PLANTED[name]`` in scripts/record_advisor_gpu.py."""
    code = GPU_PLANTED.get(name)
    script = ROOT / "scripts" / "record_advisor_gpu.py"
    for number, line in enumerate(script.read_text().splitlines(), start=1):
        if code is not None and line.strip() == code:
            return number
    return None


def load_recording(name: str) -> Exploration:
    """A recording of the notebooks, or one made for this corpus (``advisor_*``)."""
    here = Path(__file__).parent / "recordings" / f"{name}.json"
    path = here if here.exists() else ROOT / "notebooks" / "recordings" / f"{name}.json"
    return Exploration.from_json(path.read_text())


_SRC = "*src*"  # the key under which pane_ids keeps the view's source-line keys


def pane_ids(exp: Exploration) -> dict[str, set[str]]:
    """Compile key -> the pane ids the explorer builds for it (the links' targets), and
    under ``_SRC`` the source-line keys the view can select."""
    from explorer.panes import build_index

    index = build_index(exp)
    out = {c.key: {p.id for p in c.panes} for c in index.compiles}
    out[_SRC] = set(index.src_keys)
    return out


def evidence_errors(exp: Exploration, f: Finding, panes: dict[str, set[str]]) -> list[str]:
    """What in ``f``'s evidence does not point at a real place of ``exp``."""
    errors = []
    for e in f.evidence:
        errors.extend(_one(exp, e, panes))
        if e.src is not None and e.src not in panes[_SRC]:
            errors.append(f"the view has no source line {e.src}")
    return errors


def _one(exp: Exploration, e: Evidence, panes: dict[str, set[str]]) -> list[str]:
    if e.compile is None:
        return [] if e.stage is None else [f"stage {e.stage} without a compile"]
    if e.compile not in panes:
        return [f"no compile {e.compile} (have {sorted(panes)})"]
    errors = []
    if e.stage is not None and e.stage not in panes[e.compile]:
        errors.append(f"compile {e.compile} has no pane {e.stage}")
    c = next(c for c in exp.compiles if c.key == e.compile)
    if e.node is not None:
        graph = c.graphs.get(e.stage or "")
        if graph is None or graph.node(e.node) is None:
            errors.append(f"no node {e.node} in {e.compile} {e.stage}")
    if e.kernel is not None:
        keys = {k.id for k in c.kernels()}
        if e.kernel not in keys:
            errors.append(f"no kernel {e.kernel} in {e.compile}")
    return errors


def verdict(exp: Exploration, expect: str | None, also: set[str]) -> tuple[bool, bool]:
    """(the planted kind is the first finding and its evidence resolves, or nothing was
    planted; no problem or warning but the planted kind and ``also``), as
    benchmarks/advisor_corpus.py scores a case."""
    findings = exp.findings()
    alarms = [f for f in findings if f.severity in ("problem", "warning")]
    first = findings[0] if findings else None
    ok_first = expect is None or (
        first is not None
        and first.kind == expect
        and not evidence_errors(exp, first, pane_ids(exp))
    )
    return ok_first, all(f.kind == expect or f.kind in also for f in alarms)
