"""Every id the explorer selects by, made here and nowhere else.

Five ids name what a user can select: a compile (``CompileKey``, ``0/1`` or ``rank1:0/1``),
an output code of a compile (``OutputKey``, ``forward``), a kernel (``KernelId``,
``forward/triton_poi_fused_add_0``), a stage of a compile (``PaneId``,
``dynamo_output_graph``, ``forward/inductor_output_code``) and a user source line
(``SrcKey``, ``/path/model.py:12``). Each is a plain string on the wire (JSON, the
exported page, the browser) and a ``NewType`` here, so mypy tells a pane id from a kernel
id; each has one constructor below. Nobody takes an id apart: what a reader needs to
know about it (the output code a pane shows, the short label of a source line) travels
beside it, made here too (``StageRef``, ``src_label``).

Example:
    >>> kernel_id(OutputKey("forward"), "triton_poi_fused_add_0")
    'forward/triton_poi_fused_add_0'
    >>> src_key("/home/me/model.py", 12), src_label("/home/me/model.py", 12)
    ('/home/me/model.py:12', 'model.py:12')
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NewType

from compiler.model import Compile, Kernel, OutputCode, SourceLoc
from compiler.model.stages import (
    COMPILE_GRAPHS,
    GUARDS,
    OUTPUT_CODE,
    POST_GRAD_GRAPHS,
    STAGES,
)

CompileKey = NewType("CompileKey", str)
OutputKey = NewType("OutputKey", str)
KernelId = NewType("KernelId", str)
PaneId = NewType("PaneId", str)
SrcKey = NewType("SrcKey", str)
SubgraphId = NewType("SubgraphId", str)

# The stages of a compile in the order the compiler ran them (the stage table's order):
# what a view lists. Graphs of torch.export and AOTInductor follow, by name.
_COMPILE_ORDER = tuple(
    s.key for s in STAGES if s.where == "frame" or (s.where == "compile" and s.form == "graph")
)
_LOWERED = "lowered"

# The advisor's findings: one pane for the whole exploration, not per compile.
FINDINGS = PaneId("findings")
# Every rank side by side (several ranks only): one pane for the whole exploration too.
RANKS = PaneId("ranks")
# The user's own profiled run (``compiler.attach_profile``): the whole exploration's too.
PROFILE = PaneId("profile")
# Where the run's compile time and memory went (``compiler.compile_time``, ``compiler.memory``).
COMPILE_TIME = PaneId("compile_time")
MEMORY = PaneId("memory")
NUMERICS = PaneId("numerics")
# What CUDA graphs did per call site (``compiler.cudagraphs``): the whole exploration's too.
CUDAGRAPHS = PaneId("cudagraphs")
# The panes of the whole exploration: every compile lists them, each is built once.
EXPLORATION_PANES = (FINDINGS, RANKS, PROFILE, COMPILE_TIME, MEMORY, CUDAGRAPHS, NUMERICS)


# --- compiles, output codes, kernels ------------------------------------------------------


def compile_key(c: Compile) -> CompileKey:
    """``0/1``, or ``rank1:0/1`` when the compile ran on a rank (several ranks); ``0/0#2``
    for the second compile that carried torch's id ``0/0`` (``Compile.id_reused``: two
    ``isolate_recompiles`` regions on newer torch).

    ``derive`` stores it as ``Compile.key``; read it back with ``key_of``.

    Example:
        >>> from compiler.model import CompileId
        >>> compile_key(Compile(compile_id=CompileId.from_string("0/1"), rank=1))
        'rank1:0/1'
        >>> compile_key(Compile(compile_id=CompileId.from_string("0/0"), id_reused=1))
        '0/0#2'
    """
    cid = compile_title(c)
    return CompileKey(cid if c.rank is None else f"rank{c.rank}:{cid}")


def compile_title(c: Compile) -> str:
    """torch's compile id as a reader sees it: ``0/1``; ``0/0#2`` where an earlier compile of
    the run carried the same id (``Compile.id_reused``). The rank is not in it.

    Example:
        >>> from compiler.model import CompileId
        >>> compile_title(Compile(compile_id=CompileId.from_string("0/0"), id_reused=2))
        '0/0#3'
    """
    cid = str(c.compile_id)
    return f"{cid}#{c.id_reused + 1}" if c.id_reused else cid


def key_of(c: Compile) -> CompileKey:
    """``Compile.key`` as the compiler stored it (``compile_key`` for a compile built by
    hand, which ``derive`` never saw)."""
    return CompileKey(c.key) if c.key else compile_key(c)


def output_keys(outputs: Iterable[OutputCode]) -> list[OutputKey]:
    """``forward``, ``backward``, ``inference``; ``forward#2`` for a second forward.

    ``derive`` stores each as ``OutputCode.key``.

    Example:
        >>> output_keys([OutputCode(graph="forward", aot_id="0", text="")] * 2)
        ['forward', 'forward#2']
    """
    keys: list[OutputKey] = []
    for oc in outputs:
        base = oc.graph or "output"
        key, n = base, 1
        while key in keys:
            n += 1
            key = f"{base}#{n}"
        keys.append(OutputKey(key))
    return keys


def kernel_id(output: OutputKey, name: str) -> KernelId:
    """``<output key>/<kernel name>``: kernel names repeat across output codes (the
    forward's and the backward's ``triton_poi_fused_0``). ``derive`` stores it as
    ``Kernel.id``; read it back with ``kernel_of``.

    Example:
        >>> kernel_id(OutputKey("backward"), "cpp_fused_0")
        'backward/cpp_fused_0'
    """
    return KernelId(f"{output}/{name}")


def kernel_of(k: Kernel) -> KernelId:
    """``Kernel.id`` as ``derive`` stored it."""
    return KernelId(k.id)


# --- stages of a compile (the panes a view can show) --------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class StageRef:
    """One stage of a compile a view can show, its id made here with what it points at:
    ``stage`` is the trace key (``inductor_output_code``, ``triton_lowering``,
    ``ir_post_fusion``, ...), ``output`` the ``OutputCode.key`` and ``kernel`` the
    ``Kernel.id`` it belongs to, where it belongs to one."""

    id: PaneId
    stage: str
    output: OutputKey | None = None
    kernel: KernelId | None = None


def subgraph_id(pane: PaneId, module: str) -> SubgraphId:
    """The id of a nested graph (a ``torch.cond`` branch, a ``while_loop`` body, a
    ``flex_attention`` score function, an ``invoke_subgraph`` region) inside the graph
    that pane ``pane`` shows; ``module`` is the nested module's name in the graph text.

    Example:
        >>> subgraph_id(compile_pane("dynamo_output_graph"), "cond_true_0")
        'dynamo_output_graph#cond_true_0'
    """
    return SubgraphId(f"{pane}#{module}")


def compile_pane(stage: str) -> PaneId:
    """The id of a stage that belongs to the compile as a whole: the trace key itself
    (``dynamo_output_graph``, ``compilation_metrics``).

    Raises:
        ValueError: for a stage of one output code (``output_pane`` makes those).

    Example:
        >>> compile_pane("compilation_metrics")
        'compilation_metrics'
    """
    if not stage or "/" in stage:
        msg = f"{stage!r} is not a compile-level stage; output-code stages use output_pane()"
        raise ValueError(msg)
    return PaneId(stage)


def output_pane(output: OutputKey, stage: str) -> PaneId:
    """The id of a stage of one output code.

    Example:
        >>> output_pane(OutputKey("forward"), "inductor_post_grad_graph")
        'forward/inductor_post_grad_graph'
    """
    return PaneId(f"{output}/{stage}")


def output_code_pane(oc: OutputCode) -> PaneId:
    """The id of the pane that shows ``oc``'s code (and so its kernels)."""
    return output_pane(OutputKey(oc.key), OUTPUT_CODE)


def lowering_pane(k: Kernel) -> PaneId | None:
    """The id of a Triton kernel's lowering, None when it has no compiled variants."""
    return PaneId(f"{k.id}/{_LOWERED}") if k.language == "triton" and k.variants else None


def stage_refs(c: Compile) -> tuple[StageRef, ...]:
    """Every stage ``c`` has, in the order the compiler ran them; a view picks which to
    show and how to label them. Reads no graph's nodes.

    Example:
        >>> import torch, compiler
        >>> c = compiler.explore(torch.sin, torch.randn(4), backend="eager").compiles[0]
        >>> [r.id for r in stage_refs(c)][:2]
        ['bytecode', 'dynamo_output_graph']
    """
    refs: list[StageRef] = []

    def add(stage: str) -> None:
        refs.append(StageRef(id=compile_pane(stage), stage=stage))

    extra = sorted(set(c.graphs) - set(COMPILE_GRAPHS))
    for stage in (*_COMPILE_ORDER, *extra):
        if (
            stage in c.graphs
            or (stage == "bytecode" and (c.bytecode is not None or _failed(c, stage)))
            or (stage == GUARDS and c.guards is not None)
            or (stage == "dynamo_graph_break_reason" and c.graph_breaks)
            or (stage == "recompile_reasons" and c.recompile_reasons)
        ):
            add(stage)
    first_output = None
    for oc in c.output_code:
        key = OutputKey(oc.key)
        for g in (*POST_GRAD_GRAPHS, *sorted(set(oc.graphs) - set(POST_GRAD_GRAPHS))):
            if g in oc.graphs:
                refs.append(StageRef(id=output_pane(key, g), stage=g, output=key))
        if oc.schedule is not None:
            stage = "ir_post_fusion"
            refs.append(StageRef(id=output_pane(key, stage), stage=stage, output=key))
        if oc.text:
            first_output = len(refs) if first_output is None else first_output
            refs.append(StageRef(id=output_code_pane(oc), stage=OUTPUT_CODE, output=key))
            for k in oc.kernels:
                lid = lowering_pane(k)
                if lid is not None:
                    kid = kernel_of(k)
                    refs.append(StageRef(id=lid, stage="triton_lowering", output=key, kernel=kid))
    if c.autotuning:
        at = first_output if first_output is not None else len(refs)
        refs.insert(at, StageRef(id=compile_pane("autotuning"), stage="autotuning"))
    if any(k.timing is not None for k in c.kernels()):
        add("kernel_timing")
    add("compilation_metrics")
    return tuple(refs)


def stage_ref(c: Compile, pane_id: str) -> StageRef | None:
    """The stage of ``c`` whose id is ``pane_id``, None when ``c`` has none."""
    return next((r for r in stage_refs(c) if r.id == pane_id), None)


def _failed(c: Compile, stage: str) -> bool:
    return any(e.stage == stage for e in c.errors)


# --- user source lines --------------------------------------------------------------------


def src_key(filename: str, line: int | None) -> SrcKey | None:
    """``file:line``, the key every view links a user source line by; None without a
    file or a line."""
    return SrcKey(f"{filename}:{line}") if filename and line else None


def loc_key(loc: SourceLoc | None) -> SrcKey | None:
    """The source key of a location (None without one)."""
    return None if loc is None else src_key(loc.filename, loc.line)


def src_label(filename: str, line: int) -> str:
    """How a view names a source line in little space: ``model.py:12``."""
    return f"{file_name(filename)}:{line}"


def file_name(filename: str) -> str:
    """The file's own name, without its folders: ``model.py``."""
    return filename.rsplit("/", 1)[-1]


def short_path(filename: str) -> str:
    """A long path by its last three parts, as the source panel titles a file.

    Example:
        >>> short_path("/site-packages/transformers/models/gpt2/modeling_gpt2.py")
        '…/models/gpt2/modeling_gpt2.py'
    """
    parts = filename.split("/")
    return "…/" + "/".join(parts[-3:]) if len(parts) > 3 else filename
