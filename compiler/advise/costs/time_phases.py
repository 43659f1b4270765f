"""Where a run's compile time went: per compile and per phase, biggest first.

Phases come from torch's ``chromium_event`` records (``CompileMetrics.phases``), nested
spans: each bucket below is a difference of spans so that the buckets of one compile add up
to torch's ``entire_frame_compile_time_s`` (what is left is ``other``).
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median

from compiler.advise._common import Ranked, cause_key, finding
from compiler.advise.findings import Evidence
from compiler.link.ids import compile_pane, key_of
from compiler.model import Compile, Exploration, Phase

# the buckets, in pipeline order
TRACING, GUARDS, KEYS, LOAD, AOT, LOWERING, AUTOTUNE, CODEGEN, BUILD, OTHER = (
    "Dynamo tracing", "guards", "cache keys", "cache load", "AOTAutograd",
    "Inductor lowering and scheduling", "autotuning", "code generation", "C++/Triton build",
    "other",
)  # fmt: skip
# what a warm process still pays: Dynamo runs, and torch hashes its own sources for the
# cache keys, in every process
ALWAYS = (TRACING, GUARDS, KEYS)
# the spans torch times into ``compile_time_autotune_time_us`` (select_algorithm.py,
# scheduler.py: ``<op>_template_precompiling``, ``<op>_template_autotuning``,
# ``benchmark_fused_nodes``; torch 2.11 to 2.14.1)
_AUTOTUNE_COLUMN = ("_template_precompiling", "_template_autotuning", "benchmark_fused_nodes")
_OUTLIER = 3.0  # times the median compile
_MIN_OUTLIER_S = 2.0


@dataclass(frozen=True, slots=True)
class CompileTime:
    """One compile's seconds, split into buckets that add up to ``seconds``."""

    compile: str
    code_name: str
    seconds: float
    phases: tuple[tuple[str, float], ...]  # biggest first
    is_recompile: bool = False
    cache_hit: bool = False
    # a backward torch compiled later, at the first backward call: outside the frame's
    # seconds (torch's entire-frame time), paid by the first training step all the same
    backward_seconds: float = 0.0

    def phase(self, name: str) -> float:
        """Seconds in one bucket (0 when absent)."""
        return dict(self.phases).get(name, 0.0)


@dataclass(frozen=True, slots=True)
class CompileTimes:
    """A run's compile time: compiles biggest first, totals per bucket, recompiles' cost
    and what a warm process would still pay."""

    compiles: tuple[CompileTime, ...]

    @property
    def total(self) -> float:
        return sum(c.seconds for c in self.compiles)

    def by_phase(self) -> tuple[tuple[str, float], ...]:
        """Seconds per bucket over the run, biggest first."""
        out: dict[str, float] = {}
        for c in self.compiles:
            for name, s in c.phases:
                out[name] = out.get(name, 0.0) + s
        return tuple(sorted(out.items(), key=lambda kv: -kv[1]))

    @property
    def backward_seconds(self) -> float:
        """Backward compiles torch ran lazily, at the first backward call."""
        return sum(c.backward_seconds for c in self.compiles)

    @property
    def recompile_seconds(self) -> float:
        return sum(c.seconds for c in self.compiles if c.is_recompile)

    @property
    def warm_seconds(self) -> float:
        """Dynamo tracing, guards and cache keys: paid again by a process whose caches
        are warm (which also pays the cache loads)."""
        return sum(c.phase(p) for c in self.compiles for p in ALWAYS)

    def __str__(self) -> str:
        lines = [f"compile time {self.total:.2f} s in {len(self.compiles)} compiles"]
        lines.append(
            "by phase: "
            + ", ".join(f"{name} {s:.2f} s" for name, s in self.by_phase() if s >= 0.005)
        )
        for c in self.compiles:
            top = ", ".join(f"{n} {s:.2f}" for n, s in c.phases[:4] if s >= 0.005)
            tag = " (recompile)" if c.is_recompile else ""
            lines.append(f"  {c.compile} {c.code_name}{tag}: {c.seconds:.2f} s ({top})")
        if self.backward_seconds:
            lines.append(f"plus {self.backward_seconds:.2f} s compiling backwards lazily")
        lines.append(f"recompiles cost {self.recompile_seconds:.2f} s")
        lines.append(
            f"a warm process would still pay {self.warm_seconds:.2f} s (Dynamo tracing, "
            "guards, cache keys) plus the cache loads"
        )
        return "\n".join(lines)


def _sum(spans: dict[str, float], *names: str) -> float:
    return sum(spans.get(n, 0.0) for n in names)


def lazy_backward(c: Compile) -> tuple[tuple[Phase, ...], float]:
    """``c``'s spans of the frame's compile, and the seconds of the backward compiles torch
    ran later, at the first backward call (top-level ``entire_backward_compile`` spans).

    Spans are listed as they end, with their nesting depth: a lazy backward's own spans
    end after the frame's top-level span and before its ``entire_backward_compile``. A
    backward compiled inside the frame's compile is nested there, and stays.

    Example:
        >>> from compiler.model import CompileId, CompileMetrics
        >>> spans = tuple(Phase(name=n, seconds=s, depth=d) for n, s, d in (
        ...     ("entire_frame_compile", 2.0, 1), ("dynamo", 2.1, 0),
        ...     ("bw_compiler", 0.5, 1), ("entire_backward_compile", 0.6, 0)))
        >>> c = Compile(compile_id=CompileId.from_string("0/0"),
        ...             metrics=CompileMetrics(phases=spans))
        >>> kept, lazy = lazy_backward(c)
        >>> [p.name for p in kept], lazy
        (['entire_frame_compile', 'dynamo'], 0.6)
    """
    kept: list[Phase] = []
    pending: list[Phase] = []
    lazy = 0.0
    for p in c.metrics.phases:
        pending.append(p)
        if p.depth == 0:
            if p.name == "entire_backward_compile":
                lazy += p.seconds
            else:
                kept.extend(pending)
            pending = []
    return (*kept, *pending), lazy


def phases(c: Compile) -> tuple[tuple[str, float], ...]:
    """``c``'s buckets, biggest first, adding up to its entire-frame seconds (a backward
    compiled lazily, later, is not in them: ``lazy_backward``)."""
    spans: dict[str, float] = {}
    autotune = column = 0.0
    for p in lazy_backward(c)[0]:
        spans[p.name] = spans.get(p.name, 0.0) + p.seconds
        if p.name.endswith(_AUTOTUNE_COLUMN):
            column += p.seconds
        elif "autotune" in p.name.lower() and p.name.lower() != "autotune":
            autotune = max(autotune, p.seconds)
    # torch's own autotuning spans, siblings that it adds up as compile_time_autotune_time_us
    autotune = column or autotune
    total = c.metrics.entire_frame_seconds or spans.get("entire_frame_compile", 0.0)
    inductor = _sum(spans, "inductor_compile")
    code_gen = _sum(spans, "code_gen")
    # a Triton kernel built in this process rather than a compile worker is timed as
    # ``async_compile.precompile`` (torch's ``triton_compile_time_us`` column, like the wait)
    build = _sum(spans, "compile_file", "async_compile.wait", "async_compile.precompile")
    # GEMM autotuning runs while lowering, or (torch 2.11, autotuning deferred to the
    # scheduler) inside code generation: subtract it from the span that can hold it
    in_code_gen = autotune <= code_gen - build
    got = {
        TRACING: _sum(spans, "bytecode_tracing"),
        GUARDS: _sum(spans, "build_guards"),
        KEYS: _sum(spans, "inductor_codecache_torch_key", "CacheBase.get_system.triton_key"),
        AOT: max(0.0, _sum(spans, "create_aot_dispatcher_function") - inductor),
        LOWERING: max(0.0, inductor - code_gen - (0 if in_code_gen else autotune)),
        AUTOTUNE: autotune,
        CODEGEN: max(0.0, code_gen - build - (autotune if in_code_gen else 0)),
        BUILD: min(build, code_gen) if code_gen else build,
        # a cache hit loads the compiled module (and builds its C++ wrapper again)
        LOAD: max(0.0, _sum(spans, "AOTAutogradCache.inductor_load") - (0 if code_gen else build)),
    }
    got[OTHER] = max(0.0, total - sum(got.values()))
    return tuple(sorted(((k, v) for k, v in got.items() if v > 0), key=lambda kv: -kv[1]))


def compile_time(exp: Exploration) -> CompileTimes:
    """Where ``exp``'s compile time went.

    Example:
        >>> import compiler
        >>> compile_time(compiler.Exploration(source="live")).total
        0
    """
    rows = [
        CompileTime(
            compile=str(key_of(c)),
            code_name=c.code_name,
            seconds=c.metrics.entire_frame_seconds or 0.0,
            phases=phases(c),
            is_recompile=c.is_recompile,
            cache_hit=bool(c.metrics.fx_cache_hits or c.metrics.aot_cache_hits),
            backward_seconds=lazy_backward(c)[1],
        )
        for c in exp.compiles
        if c.metrics.entire_frame_seconds
    ]
    return CompileTimes(tuple(sorted(rows, key=lambda r: -r.seconds)))


def findings(exp: Exploration) -> list[Ranked]:
    """A compile that took far longer than the run's others (one finding per frame, which
    the advisor's merge pass joins across compiles and ranks)."""
    times = compile_time(exp)
    if len(times.compiles) < 3:
        return []
    mid = median(c.seconds for c in times.compiles)
    out = []
    for c in times.compiles:
        if c.seconds < max(_MIN_OUTLIER_S, _OUTLIER * mid):
            continue
        top = c.phases[0][0] if c.phases else OTHER
        exp_c = next(x for x in exp.compiles if str(key_of(x)) == c.compile)
        out.append(
            finding(
                "compile_time.outlier",
                # a model's main graph outweighs its break fragments by nature: a note of
                # where the time went, not an alarm
                "info",
                f"Compile {c.compile} (`{c.code_name}`) took {c.seconds:.1f} s, "
                f"{c.seconds / mid:.0f}x the run's median compile; most of it in {top}",
                [
                    Evidence(
                        text=f"{name}: {s:.2f} s",
                        compile=key_of(exp_c),
                        stage=compile_pane("compilation_metrics"),
                    )
                    for name, s in c.phases[:3]
                ],
                _ADVICE.get(top, _ADVICE[OTHER]),
                f"{c.seconds - mid:.1f} s above the median compile",
                score=c.seconds,
                # one cause per frame: the same frame slow on every rank is one finding. Not
                # per phase: which phase leads is a measurement that moves between runs and
                # torch versions (Reformer's forward: "other" on 2.13, tracing on 2.14.1)
                cause=cause_key("compile_time.outlier", c.code_name),
            )
        )
    return out


_ADVICE = {
    TRACING: "Dynamo traced a large function. A block that repeats can be compiled once and "
    "reused: mark it with `@torch.compiler.nested_compile_region`, or compile the block "
    "(`block.compile()`) rather than the whole model.",
    BUILD: "Building the generated kernels dominated. A warm cache turns this into a load: keep "
    "torch's caches between runs, or carry them with "
    "`artifacts = torch.compiler.save_cache_artifacts()` and "
    "`torch.compiler.load_cache_artifacts(artifacts[0])` in the new process.",
    AUTOTUNE: "Autotuning dominated: the autotuning cache keeps its choices between processes; "
    "`mode='max-autotune-no-cudagraphs'` or fewer autotuned shapes cut it.",
    OTHER: "Compile a repeated block once (`torch.compiler.nested_compile_region`), keep caches "
    "warm (`torch.compiler.save_cache_artifacts`), and pass `dynamic=True` where recompiles "
    "for new shapes dominate.",
}
