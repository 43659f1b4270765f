"""The Triton lowering pane: a Triton kernel's source beside every stage of every compiled
variant (TTIR to SASS), and the kernel lab's re-lowering of it. Only a GPU capture has
these, so their classes are here, beside their builders, imported with the first such
pane (``explorer.panes.kinds``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from compiler import Exploration
from compiler.gpu.lowered_lines import def_line_of
from compiler.link import ids
from compiler.model import TritonVariant

from ..frame import PaneNotFound, find_compile
from ..labels import STAGE_LABELS, group_of, label_of
from ..types import _FROZEN, PaneHead

if TYPE_CHECKING:  # the kernel lab (and its worker) is imported only where it runs
    from compiler import Relowered

STAGE_LANGUAGE = {"ttir": "mlir", "ttgir": "mlir", "llir": "llvm", "ptx": "ptx", "sass": "sass"}
_STAGE_ORDER = ("ttir", "ttgir", "llir", "ptx", "sass")
NO_LINES_SASS = (
    "cuobjdump -sass prints no line information, so SASS lines are not linked to the source."
)
_INFO_LABELS = (
    ("autotune_cache_state", "autotune cache"),
    ("num_configs", "configs tried"),
    ("compile_time_us", "compile time (µs)"),
    ("best_config", "best config"),
)


@dataclass(**_FROZEN)
class LoweredStageInfo:
    """One stage of a Triton variant: its text and the kernel-source line of each line."""

    stage: str
    label: str
    text: str
    language: str
    source_line: tuple[int | None, ...]
    error: str
    note: str


@dataclass(**_FROZEN)
class VariantInfo:
    """One compiled variant of a Triton kernel."""

    hash: str
    cache_key: str
    config: dict[str, str]
    chosen: bool
    target: str
    triton_version: str
    shared_memory: int
    stages: tuple[LoweredStageInfo, ...]


@dataclass(**_FROZEN)
class LabResult:
    """A kernel lowered again in the kernel lab (``compiler.relower``): the new variant
    as the lowering pane shows variants, the lines of each stage that differ from the
    captured stage (0-based, in the new text), and ptxas's report."""

    variant: VariantInfo
    changed: dict[str, tuple[int, ...]]
    removed: dict[str, int]
    registers: int | None
    spill_stores: int | None
    spill_loads: int | None
    stack_bytes: int | None
    reproduced: bool | None
    note: str
    seconds: float


@dataclass(**_FROZEN)
class LabFailure:
    """Why an edit did not lower: ``kind`` as ``compiler.LabError``'s, ``line`` the
    1-based kernel-source line it points at (None where unknown)."""

    kind: str
    message: str
    line: int | None


@dataclass(**_FROZEN)
class TritonLoweringPane(PaneHead):
    """A Triton kernel's source beside TTIR, TTGIR, LLVM IR, PTX and SASS."""

    kind: str = "triton_lowering"
    kernel: str
    kernel_name: str
    source: str
    def_line: int | None = None
    info: tuple[tuple[str, str], ...] = ()
    default_variant: int = 0
    variants: tuple[VariantInfo, ...] = ()


def grid_text(grid: tuple[int, ...]) -> str:
    """A launch grid as Python writes the tuple: ``(8192,)``, ``(128, 1, 1)``."""
    return str(tuple(grid))


def build_triton_lowering(exp: Exploration, compile_key: str, pane_id: str) -> TritonLoweringPane:
    """A Triton kernel's source beside every stage of every compiled variant.

    Lines are linked through ``LoweredStage.source_lines`` (the compiler's map).
    """
    c = find_compile(exp, compile_key)
    ref = ids.stage_ref(c, pane_id)
    kid = ref.kernel if ref is not None else None
    k = next((k for k in c.kernels() if k.id == kid), None) if kid is not None else None
    if k is None:
        msg = f"compile {compile_key} has no Triton lowering {pane_id!r}"
        raise PaneNotFound(msg)
    variants = [variant_info(v) for v in k.variants]
    info = [(label, k.info[name]) for name, label in _INFO_LABELS if k.info.get(name)]
    info += [(name, value) for name, value in k.info.items() if name not in dict(_INFO_LABELS)]
    if k.grid:
        info.append(("grid", grid_text(k.grid)))
    stage = "triton_lowering"
    return TritonLoweringPane(
        id=pane_id,
        stage=stage,
        label=label_of(stage, k.name),
        group=group_of(stage),
        kernel=k.id,
        kernel_name=k.name,
        source=k.source,
        def_line=def_line_of(k.source, k.name),
        info=tuple(info),
        default_variant=next((i for i, v in enumerate(k.variants) if v.chosen), 0),
        variants=tuple(variants),
    )


def variant_info(v: TritonVariant) -> VariantInfo:
    """One variant as the lowering pane shows it: its stages in pipeline order, each
    line with the kernel-source line it came from."""
    stages = []
    for s in sorted(v.stages, key=lambda s: _rank(s.stage)):
        lines = s.source_lines or (None,) * (s.text.count("\n") + 1)
        note = ""
        if s.stage == "sass" and s.text:
            note = NO_LINES_SASS
        elif s.text and not any(n is not None for n in lines):
            note = "This stage records no line locations in the kernel's module."
        stages.append(
            LoweredStageInfo(
                stage=s.stage,
                label=STAGE_LABELS.get(s.stage, s.stage),
                text=s.text,
                language=STAGE_LANGUAGE.get(s.stage, "text"),
                source_line=tuple(lines),
                error=s.error,
                note=note,
            )
        )
    return VariantInfo(
        hash=v.hash,
        cache_key=v.cache_key,
        config=v.config,
        chosen=v.chosen,
        target=v.target,
        triton_version=v.triton_version,
        shared_memory=v.shared_memory,
        stages=tuple(stages),
    )


def build_lab_result(v: Relowered) -> LabResult:
    """What the kernel lab shows of one re-lowering (``compiler.relower``)."""
    changed: dict[str, tuple[int, ...]] = {}
    removed: dict[str, int] = {}
    for d in v.diffs:
        if not d.captured:
            continue
        edits = [op for op in d.ops if op.tag != "equal"]
        changed[d.stage] = tuple(i for op in edits for i in range(op.b_start, op.b_end))
        removed[d.stage] = d.removed
    return LabResult(
        variant=variant_info(v),
        changed=changed,
        removed=removed,
        registers=v.registers,
        spill_stores=v.spill_stores,
        spill_loads=v.spill_loads,
        stack_bytes=v.stack_bytes,
        reproduced=v.reproduced,
        note=v.note,
        seconds=v.seconds,
    )


def _rank(stage: str) -> int:
    return _STAGE_ORDER.index(stage) if stage in _STAGE_ORDER else len(_STAGE_ORDER)
