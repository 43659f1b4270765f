"""Inductor's panes: fused schedule, output code with its kernels, Triton lowering."""

from __future__ import annotations

from typing import TYPE_CHECKING

from compiler import Exploration, OutputCode
from compiler.gpu.lowered_lines import def_line_of
from compiler.link import ids
from compiler.model import TritonVariant

from .frame import PaneNotFound, errors_of, find_compile
from .labels import STAGE_LABELS, group_of, label_of

if TYPE_CHECKING:  # the kernel lab (and its worker) is imported only where it runs
    from compiler import Relowered

from .types import (
    Block,
    FusedInfo,
    KernelInfo,
    LabResult,
    LoweredStageInfo,
    OutputCodePane,
    SchedulePane,
    TritonLoweringPane,
    VariantInfo,
)

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


def output_code(exp: Exploration, compile_key: str, pane_id: str) -> OutputCode:
    """The output code pane ``pane_id`` shows (its code, or its schedule)."""
    c = find_compile(exp, compile_key)
    ref = ids.stage_ref(c, pane_id)
    for oc in c.output_code if ref is not None and ref.output is not None else ():
        if oc.key == ref.output:
            return oc
    msg = f"compile {compile_key} has no output code pane {pane_id!r}"
    raise PaneNotFound(msg)


def kernel_sources(oc: OutputCode) -> dict[str, tuple[str, ...]]:
    """Kernel id -> the source keys of the user lines it came from (``Kernel.user_lines``)."""
    return {k.id: tuple(filter(None, map(ids.loc_key, k.user_lines))) for k in oc.kernels}


def build_output_code(exp: Exploration, compile_key: str, pane_id: str) -> OutputCodePane:
    """One output code verbatim and its kernels, each with the lines it spans and the
    lines that call it (the browser marks each line's kernel from them).

    Example:
        >>> build_output_code(exp, "0/0", "inference/inductor_output_code").kernels[0].id
        ...  # doctest: +SKIP
        'inference/cpp_fused_add_0'
    """
    oc = output_code(exp, compile_key, pane_id)
    srcs = kernel_sources(oc)
    kernels = []
    for k in oc.kernels:
        kernels.append(
            KernelInfo(
                id=k.id,
                name=k.name,
                language=k.language,
                first_line=k.first_line,
                last_line=k.last_line,
                call_lines=k.call_lines,
                post_grad_nodes=k.post_grad_nodes,
                source_nodes=k.source_nodes,
                src=srcs.get(k.id, ()),
                timing=k.timing,
                grid=k.grid,
                lowering=ids.lowering_pane(k),
            )
        )
    stage = "inductor_output_code"
    return OutputCodePane(
        id=pane_id,
        stage=stage,
        label=label_of(stage, oc.key),
        group=group_of(stage),
        errors=errors_of(oc.errors),
        text=oc.text,
        kernels=tuple(kernels),
        path=oc.path,
    )


def build_schedule(exp: Exploration, compile_key: str, pane_id: str) -> SchedulePane:
    """Inductor's fused schedule of one output code."""
    oc = output_code(exp, compile_key, pane_id)
    s = oc.schedule
    if s is None:
        msg = f"output code {oc.key} of compile {compile_key} has no schedule"
        raise PaneNotFound(msg)
    blocks = tuple(
        Block(
            title=STAGE_LABELS[t],
            note="" if text is not None else "not logged",
            text=text or "",
            language="text",
        )
        for t, text in (("ir_post_fusion", s.post_fusion), ("ir_pre_fusion", s.pre_fusion))
    )
    fused = tuple(
        FusedInfo(
            name=f.name,
            kind=f.kind,
            members=f.members,
            buffers=f.buffers,
            extern_kernel=f.extern_kernel,
        )
        for f in s.fused
    )
    stage = "ir_post_fusion"
    return SchedulePane(
        id=pane_id,
        stage=stage,
        label=label_of(stage, oc.key),
        group=group_of(stage),
        errors=errors_of(oc.errors, "schedule"),
        blocks=blocks,
        fused=fused,
    )


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
