"""Why a cache missed: two runs' cache keys compared, component by component.

torch logs every FX graph and AOTAutograd cache lookup to ``TORCH_TRACE`` with the parts of
its key (``compiler.parse.words.cache_keys``); capture keeps them in ``Compile.artifacts`` when
caches are on (``keep_caches=True``, or any ``TORCH_TRACE`` log). Compiles are matched by
their compile id; for each cache that missed in ``b``, the components whose hash differs
from ``a``'s name what changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from compiler.advise.costs import time_phases
from compiler.costs.caches import Uncacheable, cache_records, uncacheable
from compiler.diff.kernel_caches import (
    DERIVED_FROM,
    KernelCaches,
    changed_components,
    kernel_caches,
    kernel_lines,
    template_autotuning,
    triton_build,
)
from compiler.link.ids import key_of
from compiler.model import Compile, Exploration
from compiler.parse.words.cache_keys import CacheRecord, kind_of

_SHOWN = 160


@dataclass(frozen=True, slots=True)
class ComponentChange:
    """One key component that differs between the two runs."""

    cache: str
    name: str
    kind: str  # one of _ORDER; key: a key that changed with no parts logged
    a: str
    b: str


@dataclass(frozen=True, slots=True)
class CompileCaches:
    """One compile id's lookups in each run, and what changed in the keys that missed."""

    compile: str
    code_name: str
    a: tuple[CacheRecord, ...]
    b: tuple[CacheRecord, ...]
    changes: tuple[ComponentChange, ...] = ()
    # each generated kernel of ``b``: Triton's or the C++ kernel cache, and autotuning
    kernels: tuple[KernelCaches, ...] = ()
    # seconds building kernels (C++ or Triton) in a and b: torch's ``compile_file`` and
    # ``async_compile`` spans, as ``compiler.compile_time`` buckets them
    build_s: tuple[float, float] = (0.0, 0.0)
    # GEMM template autotunings that ran (count, seconds) in a and b: torch's spans
    tuned: tuple[tuple[int, float], tuple[int, float]] = ((0, 0.0), (0, 0.0))
    # Triton kernels torch timed (count, seconds) in a and b: triton_kernel_info
    triton_built: tuple[tuple[int, float], tuple[int, float]] = ((0, 0.0), (0, 0.0))

    def states(self, which: str = "b") -> dict[str, str]:
        """``{cache: "hit" | "miss" | "bypass"}`` for run ``a`` or ``b``."""
        return {r.cache: r.state for r in (self.a if which == "a" else self.b)}


@dataclass(frozen=True, slots=True)
class CacheDiff:
    """What ``cache_diff`` found; ``str()`` is the readable report."""

    compiles: tuple[CompileCaches, ...]
    only_a: tuple[str, ...] = ()
    only_b: tuple[str, ...] = ()
    uncacheable: tuple[Uncacheable, ...] = ()
    notes: tuple[str, ...] = field(default=())

    def kinds(self) -> set[str]:
        """The kinds of component that changed, over every compile (``key``: a key that
        changed with no components logged)."""
        return {ch.kind for c in self.compiles for ch in c.changes}

    def __str__(self) -> str:
        lines = []
        for c in self.compiles:
            sa, sb = c.states("a"), c.states("b")
            caches = ", ".join(
                f"{k}: {sa.get(k, '-')} -> {sb.get(k, '-')}" for k in sorted({*sa, *sb})
            )
            lines.append(f"compile {c.compile} ({c.code_name}): {caches or 'no cache lookups'}")
            shown: dict[str, int] = {}
            for ch in sorted(c.changes, key=lambda ch: _ORDER.index(ch.kind)):
                shown[ch.kind] = shown.get(ch.kind, 0) + 1
                if shown[ch.kind] > _PER_KIND:
                    continue
                lines.append(f"  {ch.cache} key differs in {ch.name} ({ch.kind})")
                a, b = _windows(ch.a, ch.b)
                lines.append(f"    a: {a}")
                lines.append(f"    b: {b}")
            for kind, n in shown.items():
                if n > _PER_KIND:
                    lines.append(f"  ... and {n - _PER_KIND} more {kind} components")
            if any(c.build_s):
                lines.append(f"  kernel build: a {c.build_s[0]:.2f} s, b {c.build_s[1]:.2f} s "
                             "(torch's compile_file and async_compile spans)")  # fmt: skip
            if c.triton_built[0][0] or c.triton_built[1][0]:
                (na, ta), (nb, tb) = c.triton_built
                lines.append(f"  Triton build: a {ta:.2f} s ({na} kernels), b {tb:.2f} s ({nb} "
                             "kernels) (torch's compile_time_us per kernel)")  # fmt: skip
            saved = [r.time_saved_ms for r in c.b if r.time_saved_ms]
            if saved:
                lines.append(f"  torch's estimate of the compile time b's hit saved: "
                             f"{max(saved) / 1000:.2f} s")  # fmt: skip
            if c.tuned[0][0] or c.tuned[1][0]:
                (na, ta), (nb, tb) = c.tuned
                lines.append(f"  GEMM autotuning ran: a {na} ({ta:.2f} s), b {nb} ({tb:.2f} s) "
                             "(torch's *_template_autotuning spans; torch opens none when "
                             "a cache has the choice)")  # fmt: skip
            lines.extend(kernel_lines(c.kernels, _PER_KIND))
        for k in self.only_a:
            lines.append(f"compile {k}: only in a")
        for k in self.only_b:
            lines.append(f"compile {k}: only in b")
        for u in self.uncacheable:
            lines.append(f"compile {u.compile} ({u.code_name}) cannot use the {u.cache} cache: "
                         f"{u.reason}")  # fmt: skip
        lines.extend(self.notes)
        return "\n".join(lines)


_ORDER = ("torch version", "graph", "constant", "input", "config", "system", "key")
_PER_KIND = 3


def _windows(a: str, b: str) -> tuple[str, str]:
    """Both values on one line each, cut to the stretch around their first difference;
    a value that is not text (torch hashes its version as bytes) is named by its length."""
    if not (a.isprintable() or "\n" in a) or not (b.isprintable() or "\n" in b):
        return f"<{len(a)} bytes, not text>", f"<{len(b)} bytes, not text>"
    a1, b1 = a.replace("\n", "\\n"), b.replace("\n", "\\n")
    if max(len(a1), len(b1)) <= _SHOWN:
        return a1, b1
    first = next((i for i, (x, y) in enumerate(zip(a1, b1, strict=False)) if x != y), 0)
    start = max(0, first - _SHOWN // 3)

    def cut(t: str) -> str:
        return ("..." if start else "") + t[start : start + _SHOWN] + (
            "..." if start + _SHOWN < len(t) else ""
        )

    return cut(a1), cut(b1)


def _changes(a: tuple[CacheRecord, ...], b: tuple[CacheRecord, ...]) -> list[ComponentChange]:
    out: list[ComponentChange] = []
    seen: set[tuple[str, str]] = set()
    for rb in b:
        if rb.state != "miss":
            continue
        ra = next((r for r in a if r.cache == rb.cache), None)
        if ra is None:
            continue
        if not (ra.components and rb.components):
            # torch 2.13 logs the AOTAutograd key without its parts: the key alone
            if ra.key and rb.key and ra.key != rb.key:
                out.append(ComponentChange(rb.cache, "key", "key", ra.key, rb.key))
            continue
        for name, kind, va, vb in changed_components(ra.components, rb.components, kind_of):
            # the AOTAutograd key holds the FX graph key's parts: name each change once
            if (name, va) in seen:
                continue
            seen.add((name, va))
            out.append(ComponentChange(rb.cache, name, kind, va, vb))
    return out


def cache_diff(a: Exploration, b: Exploration) -> CacheDiff:
    """Compare the cache lookups of two runs of one program (``b`` against ``a``): per
    compile, which caches hit or missed, and for each miss the key components that differ.

    Example:
        >>> import compiler
        >>> print(cache_diff(compiler.Exploration(source="trace"),
        ...                  compiler.Exploration(source="trace")))
        no cache lookups logged: capture with keep_caches=True, or load TORCH_TRACE logs
    """
    by_a = {str(key_of(c)): c for c in a.compiles}
    by_b = {str(key_of(c)): c for c in b.compiles}
    rows = []
    for key, cb in by_b.items():
        ca = by_a.get(key)
        if ca is None:
            continue
        ra, rb = cache_records(ca), cache_records(cb)
        kernels = kernel_caches(a, ca, b, cb, rb)
        build = (_build(ca), _build(cb))
        tuned = (template_autotuning(ca), template_autotuning(cb))
        built = (triton_build(ca), triton_build(cb))
        rows.append(CompileCaches(key, cb.code_name, ra, rb, tuple(_changes(ra, rb)), kernels,
                                  build, tuned, built))  # fmt: skip
    notes = []
    if not any(c.a or c.b for c in rows):
        notes.append(
            "no cache lookups logged: capture with keep_caches=True, or load TORCH_TRACE logs"
        )
    if any(c.kernels for c in rows):
        notes.append(DERIVED_FROM)
    for run, exp in (("a", a), ("b", b)):
        if exp.source == "live" and exp.options is not None and not exp.options.keep_caches:
            notes.append(f"{run}: captured with the FX graph and AOTAutograd caches off "
                         "(keep_caches=False): '-' is a cache not looked up")  # fmt: skip
    notes.extend(_counted(b))
    return CacheDiff(
        compiles=tuple(r for r in rows if r.a or r.b or r.kernels),
        only_a=tuple(k for k in by_a if k not in by_b),
        only_b=tuple(k for k in by_b if k not in by_a),
        uncacheable=uncacheable(a) + uncacheable(b),
        notes=tuple(notes),
    )


# torch's own counters of the kernel caches (``torch._dynamo.utils.counters``, whole run)
_COUNTERS = (
    "inductor.fxgraph_cache_hit", "inductor.fxgraph_cache_miss", "inductor.fxgraph_cache_bypass",
    "aot_autograd.autograd_cache_hit", "aot_autograd.autograd_cache_miss",
    "inductor.triton_bundler_save_kernel", "inductor.triton_bundler_read_and_emit_kernel",
    "inductor.async_compile_cache_hit", "inductor.async_compile_cache_miss",
    "inductor.select_algorithm_autotune",
)  # fmt: skip


def _build(c: Compile) -> float:
    return dict(time_phases.phases(c)).get(time_phases.BUILD, 0.0)


def _counted(b: Exploration) -> list[str]:
    said = [f"{k.split('.', 1)[1]} {b.counters[k]}" for k in _COUNTERS if b.counters.get(k)]
    return [f"torch's counters in b: {', '.join(said)}"] if said else []
