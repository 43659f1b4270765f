"""Inductor's panes: fused schedule, output code with its kernels."""

from __future__ import annotations

from compiler import Exploration, OutputCode
from compiler.link import ids

from .frame import PaneNotFound, errors_of, find_compile
from .labels import STAGE_LABELS, group_of, label_of
from .types import Block, FusedInfo, KernelInfo, OutputCodePane, SchedulePane


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
