"""Advice for a slow compile, each with what it was measured to save.

- **Regional compilation**: a graph made mostly of N copies of one block (the Dynamo
  graph's module stacks; the block's class from the guard tree) traces and compiles that
  block N times. Cause key ``compile_time.regional|<class>``.
- **Warm caches, the mega-cache**: building kernels and autotuning took most of a run's
  compile time with nothing loaded from the caches. Cause key ``compile_time.cold_build``.
- **dynamic shapes**: two or more recompiles of one frame took a third or more of the run's
  compile time.
  Cause key ``compile_time.recompiles|<frame>``.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.advise._common import Ranked, cause_key, finding
from compiler.advise.costs import time_phases
from compiler.advise.findings import Evidence
from compiler.link.ids import compile_pane, key_of
from compiler.model import Compile, Exploration, Node
from compiler.model.stages import DYNAMO_GRAPH
from compiler.parse.words.module_types import module_types

_MIN_SECONDS = 2.0  # below this a compile is not slow enough to restructure code for
_COVERAGE = 0.5  # the copies of the block hold at least this share of the graph's ops
_BLOCK_OPS = 4  # ops in each copy at least: a block of layers, not one Linear
# two copies save at most half the block's time, at the measured efficiency below under a
# third of the compile: not worth restructuring code for
_MIN_COPIES = 3
# the estimated saving (``regional_saving``): at least this many seconds and this share
_MIN_SAVING = 2.0
_SAVING_SHARE = 0.2
# of the ideal saving, what compiling GPT2Block once reached on a 4-layer GPT-2
# (1.68x, so 40% of a compile whose 4 copies held 88% of the ops: 0.40 / (0.88 * 3/4))
_EFFICIENCY = 0.6
_DOMINANT = 0.5
# recompiles: a share of the run's compile time that is theirs (a process's first compile
# also pays one-time costs, so recompiles rarely reach half even when every shape pays again)
_RECOMPILE_SHARE = 1 / 3
_OPS = ("call_function", "call_method", "call_module")

# measured: benchmarks/regional_compile.py (4-layer GPT-2, width 128, CPU, caches off)
REGIONAL_MEASURED = (
    "Measured here: `nested_compile_region` on `GPT2Block.forward` cut a 4-layer GPT-2's "
    "cold compile 1.68x (width 128, CPU, caches off; `benchmarks/regional_compile.py`)."
)
# measured: scripts/record_compile_gpu.py (tests/data/recordings/*gpt2_compile_*): torch's
# entire_frame_compile_time_s of the cold and the warm process
WARM_MEASURED = (
    "Measured here: a 2-layer GPT-2 (width 128) compiled in 8.6 s cold and 1.0 s in a second "
    "process whose FX graph and AOTAutograd caches hit on an H200 (20.5 s and 5.7 s on the "
    "CPU; `scripts/record_compile_gpu.py`)."
)


@dataclass(frozen=True, slots=True)
class RepeatedBlock:
    """A block the graph holds several copies of."""

    cls: str  # the module class, or "" where the guard tree names none
    container: str  # the path of the copies' parent (``transformer.h``)
    instances: tuple[str, ...]  # module paths of the copies, in graph order
    ops: int  # op nodes inside the copies
    total_ops: int  # op nodes in the graph

    @property
    def coverage(self) -> float:
        return self.ops / self.total_ops if self.total_ops else 0.0

    @property
    def name(self) -> str:
        return self.cls or f"{self.container}[i]"


def repeated_block(c: Compile) -> RepeatedBlock | None:
    """The block whose copies cover most of ``c``'s Dynamo graph, else None.

    Example:
        >>> import compiler
        >>> repeated_block(compiler.model.Compile(
        ...     compile_id=compiler.model.CompileId.from_string("0/0"))) is None
        True
    """
    graph = c.graphs.get(DYNAMO_GRAPH)
    if graph is None:
        return None
    ops = [n for n in graph.nodes if n.op in _OPS]
    if not ops or any("invoke_subgraph" in str(n.target) for n in ops):
        return None  # nothing to trace, or already a nested compile region
    types = module_types(c.guards.tree) if c.guards is not None else {}
    # copies: sibling paths that end in an index (``h.0``, ``h.1``), or that share a class
    groups: dict[tuple[str, str], list[str]] = {}
    for path in dict.fromkeys(p for n in ops for p in n.module_stack):
        parent, _, last = path.rpartition(".")
        cls = types.get(path, "")
        if cls:
            groups.setdefault((cls, ""), []).append(path)
        elif last.isdigit():
            groups.setdefault(("", parent), []).append(path)
    best: RepeatedBlock | None = None
    for (cls, parent), paths in groups.items():
        # a copy nested in another copy of the same class is part of that one
        tops = [p for p in paths if not any(p.startswith(q + ".") for q in paths)]
        if len(tops) < 2:
            continue
        inside = sum(1 for n in ops if any(p in tops for p in n.module_stack))
        container = parent or _common_parent(tops)
        block = RepeatedBlock(cls, container, tuple(tops), inside, len(ops))
        if block.coverage >= _COVERAGE and (best is None or block.ops > best.ops):
            best = block
    return best


def _common_parent(paths: list[str]) -> str:
    parts = [p.split(".")[:-1] for p in paths]
    common = []
    for level in zip(*parts, strict=False):
        if len(set(level)) != 1:
            break
        common.append(level[0])
    return ".".join(common)


def regional_saving(c: Compile, block: RepeatedBlock) -> float:
    """Seconds compiling ``block`` once would save, estimated: every copy but one of the
    block's share of the per-copy work (tracing, lowering, code generation), at the
    efficiency measured on GPT-2 (``REGIONAL_MEASURED``). Building
    kernels and autotuning are left out: Inductor builds a kernel whose source it has
    built once, and autotunes a GEMM shape it has tuned once, only once, whatever
    number of copies asked for it.

    Example:
        >>> import compiler
        >>> c = compiler.model.Compile(compile_id=compiler.model.CompileId.from_string("0/0"))
        >>> regional_saving(c, RepeatedBlock("Block", "h", ("h.0", "h.1"), 16, 20))
        0.0
    """
    seconds = c.metrics.entire_frame_seconds or 0.0
    spent = dict(time_phases.phases(c))
    build = spent.get(time_phases.BUILD, 0.0) + spent.get(time_phases.AUTOTUNE, 0.0)
    n = len(block.instances)
    return max(0.0, seconds - build) * block.coverage * (n - 1) / n * _EFFICIENCY


def _regional(c: Compile) -> Ranked | None:
    """Regional compilation where it is worth restructuring code for: a substantial block
    (not a leaf layer), named by its class, whose estimated saving is a real share of a
    compile that takes seconds (a 2-layer model compiling in 3 s is left alone)."""
    seconds = c.metrics.entire_frame_seconds or 0.0
    block = repeated_block(c) if seconds >= _MIN_SECONDS else None
    if block is None or not block.cls or len(block.instances) < _MIN_COPIES:
        return None
    if block.ops < _BLOCK_OPS * len(block.instances):
        return None
    saving = regional_saving(c, block)
    if saving < _MIN_SAVING or saving < _SAVING_SHARE * seconds:
        return None
    n = len(block.instances)
    where = f"`{block.container}`" if block.container else "the model"
    cls = block.cls or "Block"
    loop = (
        f"for block in model.{block.container}:\n    block.compile()\n"
        if block.container and "." not in block.instances[0].removeprefix(block.container + ".")
        else f"# compile each {cls} instead of the model, e.g. model.<path>.compile()\n"
    )
    return finding(
        "compile_time.regional",
        "info",
        f"Compile {c.compile_id} traced and compiled {n} copies of `{block.name}` "
        f"({block.coverage:.0%} of its graph's ops): compile the block once",
        [
            Evidence(
                text=f"{path}: {cls}" if block.cls else path,
                compile=key_of(c),
                stage=compile_pane(DYNAMO_GRAPH),
                node=next((x.name for x in _nodes_in(c, path)), None),
            )
            for path in block.instances[:4]
        ],
        f"The {n} blocks under {where} are the same code: Dynamo traces each copy and "
        "Inductor compiles each copy's kernels. Mark the block's forward as a region that "
        "is traced and compiled once and reused for every copy:\n"
        f"```python\n{cls}.forward = torch.compiler.nested_compile_region({cls}.forward)\n"
        "compiled = torch.compile(model)\n```\n"
        f"or compile the blocks rather than the model:\n```python\n{loop}```\n"
        + REGIONAL_MEASURED,
        f"{n} copies traced and compiled in a {seconds:.1f} s compile; compiling one "
        f"would save about {saving:.1f} s (estimated)",
        score=seconds * block.coverage,
        cause=cause_key("compile_time.regional", block.name),
    )


def _nodes_in(c: Compile, path: str) -> list[Node]:
    graph = c.graphs.get(DYNAMO_GRAPH)
    return [n for n in graph.nodes if path in n.module_stack] if graph is not None else []


def _cold_build(exp: Exploration, times: time_phases.CompileTimes) -> Ranked | None:
    total = times.total
    if total < _MIN_SECONDS or any(c.cache_hit for c in times.compiles):
        return None
    build = sum(c.phase(time_phases.BUILD) + c.phase(time_phases.AUTOTUNE) for c in times.compiles)
    if build < _DOMINANT * total:
        return None
    top = [c for c in times.compiles if c.phase(time_phases.BUILD) or c.phase(time_phases.AUTOTUNE)]
    by_key = {str(key_of(c)): c for c in exp.compiles}
    return finding(
        "compile_time.cold_build",
        "info",
        f"Building kernels and autotuning took {build:.1f} s of {total:.1f} s of compile "
        "time, with nothing loaded from torch's caches",
        [
            Evidence(
                text=f"{c.compile} {c.code_name}: build {c.phase(time_phases.BUILD):.2f} s, "
                f"autotuning {c.phase(time_phases.AUTOTUNE):.2f} s",
                compile=key_of(by_key[c.compile]),
                stage=compile_pane("compilation_metrics"),
            )
            for c in top[:4]
        ],
        "A warm cache turns the build into a load. Keep torch's caches between processes "
        "(capture turns them off unless `keep_caches=True`), or carry them to a new machine "
        "with the mega-cache:\n"
        "```python\nartifact_bytes, cache_info = torch.compiler.save_cache_artifacts()\n"
        "# in the new process, before the first compile:\n"
        "torch.compiler.load_cache_artifacts(artifact_bytes)\n```\n"
        f"A warm process would still pay about {times.warm_seconds:.1f} s here (Dynamo "
        "tracing, guards, cache keys) plus the loads. " + WARM_MEASURED,
        f"{build:.1f} s of building and autotuning",
        score=build,
        cause=cause_key("compile_time.cold_build"),
    )


def _recompiles(exp: Exploration, times: time_phases.CompileTimes) -> list[Ranked]:
    total = times.total
    if total < _MIN_SECONDS:
        return []
    per_frame: dict[str, list[time_phases.CompileTime]] = {}
    for row in times.compiles:
        if row.is_recompile:
            per_frame.setdefault(row.code_name, []).append(row)
    by_key = {str(key_of(c)): c for c in exp.compiles}
    out = []
    for frame, rows in per_frame.items():
        spent = sum(r.seconds for r in rows)
        if len(rows) < 2 or spent < _RECOMPILE_SHARE * total:
            continue
        reasons = [
            f"{r.compile}: {by_key[r.compile].recompile_reasons[0].reason}"
            if by_key[r.compile].recompile_reasons
            else f"{r.compile}: {r.seconds:.2f} s"
            for r in rows
        ]
        out.append(
            finding(
                "compile_time.recompiles",
                # the recompile rules name the guard that failed; this one says what the
                # recompiles cost in compile time, beside them
                "info",
                f"Recompiles of `{frame}` took {spent:.1f} s of {total:.1f} s of compile "
                f"time ({len(rows)} recompiles)",
                [
                    Evidence(
                        text=text,
                        compile=key_of(by_key[r.compile]),
                        stage=compile_pane("compilation_metrics"),
                    )
                    for text, r in zip(reasons[:4], rows, strict=False)
                ],
                "Each new shape compiled the frame again. Compile it once for every size: "
                "`torch.compile(fn, dynamic=True)`, or mark the dimension that changes "
                "before the first call:\n"
                "```python\ntorch._dynamo.mark_dynamic(x, 0)   # dimension 0 varies\n```",
                f"{spent:.1f} s of recompiles",
                score=spent,
                cause=cause_key("compile_time.recompiles", frame),
            )
        )
    return out


def findings(exp: Exploration) -> list[Ranked]:
    """Regional compilation, warm caches and dynamic shapes, where each applies."""
    out: list[Ranked] = []
    for c in exp.compiles:
        regional = _regional(c)
        if regional is not None:
            out.append(regional)
    times = time_phases.compile_time(exp)
    cold = _cold_build(exp, times)
    if cold is not None:
        out.append(cold)
    out.extend(_recompiles(exp, times))
    return out
