"""The kernel caches of two runs compared: Triton's kernel cache, the autotune cache, and
Inductor's C++ kernel cache, kernel by kernel.

What torch records is used as it is: the FX graph cache entry's Triton bundle
(``triton_bundler_meta`` in ``fx_graph_cache_hit``: the kernels written back to Triton's
cache from the entry) and each Triton kernel's autotune cache state (``triton_kernel_info``,
kept in ``Kernel.info``). torch logs no key for these caches, so whether a kernel's key
changed is derived from what both Explorations show (``compiler.parse.words.kernel_keys``):
the kernel's source text, its ``triton_meta`` (signature, constants, attributes, device),
the rest of its decorator (``inductor_meta``, ``size_hints``: Inductor's kernel file, which
keys the autotune cache) and the Triton version.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from compiler.model import Compile, Exploration, Kernel, OutputCode
from compiler.parse.words.cache_keys import CacheRecord, Component, only_numbers_differ
from compiler.parse.words.kernel_keys import enters_triton_key, kernel_components, kernel_kind

TRITON, AUTOTUNE, CPP = "Triton", "autotune", "C++"
DERIVED_FROM = (
    "kernel caches: torch logs no key for Triton's, the autotune or the C++ kernel cache; "
    "'same key'/'key changed' is derived from both Explorations: each kernel's source text, "
    "its triton_meta (signature, constants, attributes, device), the rest of its decorator "
    "(inductor_meta, size_hints) and the Triton version; 'hit (FX bundle)' and the autotune "
    "states are torch's own (triton_bundler_meta, triton_kernel_info)"
)


@dataclass(frozen=True, slots=True)
class KernelChange:
    """One part of a kernel's key that differs between the runs."""

    name: str
    kind: str
    caches: tuple[str, ...]  # the caches whose key this part enters
    a: str
    b: str


@dataclass(frozen=True, slots=True)
class KernelCaches:
    """One kernel of run ``b``: its kernel cache, and for Triton its autotune cache."""

    output: str  # the output code: forward, backward or inference
    kernel: str
    cache: str  # TRITON or CPP
    # "hit (FX bundle)": torch wrote it back from the FX graph entry; "same key" / "key
    # changed" / "new kernel": derived by comparing with run a's kernel of that name
    state: str
    autotune: tuple[str, str] = ("", "")  # torch's autotune_cache_state in a and in b
    changes: tuple[KernelChange, ...] = ()
    # torch's ``compile_time_us`` of the kernel in a and b (triton_kernel_info), if logged
    build_us: tuple[int | None, int | None] = (None, None)

    @property
    def missed(self) -> bool:
        return self.state in ("key changed", "new kernel")


def changed_components(
    pa: tuple[Component, ...], pb: tuple[Component, ...], kind_of: Callable[[str], str]
) -> list[tuple[str, str, str, str]]:
    """(name, kind, a's value, b's value) of each key component whose hash differs, ``a``'s
    order first, ``(absent)`` for a side without it; a graph change in numbers only is a
    ``constant`` one. ``kind_of``: the kind a component's name has in its cache's key.

    Example:
        >>> one = Component("k", "h1", "x = 1")
        >>> changed_components((one,), (Component("k", "h2", "x = 2"),), lambda n: "graph")
        [('k', 'constant', 'x = 1', 'x = 2')]
    """
    mine, theirs = {x.name: x for x in pa}, {x.name: x for x in pb}
    out = []
    for name in [*mine, *(n for n in theirs if n not in mine)]:
        xa, xb = mine.get(name), theirs.get(name)
        if xa is not None and xb is not None and xa.hash == xb.hash:
            continue
        va, vb = (xa.value if xa else "(absent)"), (xb.value if xb else "(absent)")
        kind = kind_of(name)
        if kind == "graph" and only_numbers_differ(va, vb):
            kind = "constant"
        out.append((name, kind, va, vb))
    return out


def _diff(pa: tuple[Component, ...], pb: tuple[Component, ...]) -> list[KernelChange]:
    return [
        KernelChange(name, kind, (TRITON, AUTOTUNE) if enters_triton_key(name) else (AUTOTUNE,),
                     va, vb)
        for name, kind, va, vb in changed_components(pa, pb, kernel_kind)
    ]  # fmt: skip


def _parts(k: Kernel, triton_version: str) -> tuple[Component, ...]:
    parts = kernel_components(k.language, k.source)
    if k.language == "triton" and triton_version:
        # Triton hashes its own version (``triton_key``) into every kernel's key
        parts += (Component("Triton version", triton_version, triton_version),)
    return parts


def _one(
    oa: OutputCode | None, kb: Kernel, key: str, bundled: set[str], versions: tuple[str, str]
) -> KernelCaches:
    cache = TRITON if kb.language == "triton" else CPP
    ka = oa.kernel(kb.name) if oa is not None else None
    tune = (
        (ka.info.get("autotune_cache_state", "") if ka is not None else ""),
        kb.info.get("autotune_cache_state", ""),
    )
    build = (_us(ka), _us(kb))
    if ka is None:
        return KernelCaches(key, kb.name, cache, "new kernel", tune, build_us=build)
    changes = _diff(_parts(ka, versions[0]), _parts(kb, versions[1]))
    if cache == CPP:  # Inductor hashes the whole C++ source
        changes = [KernelChange(c.name, c.kind, (CPP,), c.a, c.b) for c in changes]
    if kb.name in bundled:
        state = "hit (FX bundle)"
    elif any(cache in c.caches for c in changes):
        state = "key changed"
    else:
        state = "same key"
    return KernelCaches(key, kb.name, cache, state, tune, tuple(changes), build)


def _us(k: Kernel | None) -> int | None:
    value = k.info.get("compile_time_us", "") if k is not None else ""
    return int(value) if value.isdigit() else None


def kernel_caches(
    a: Exploration, ca: Compile, b: Exploration, cb: Compile, records_b: tuple[CacheRecord, ...]
) -> tuple[KernelCaches, ...]:
    """Each generated kernel of ``cb`` (run ``b``) against its namesake in ``ca``.

    Example:
        >>> import compiler
        >>> e = compiler.Exploration(source="trace")
        >>> c = compiler.model.Compile(compile_id=compiler.model.CompileId.from_string("0/0"))
        >>> kernel_caches(e, c, e, c, ())
        ()
    """
    hits = [r for r in records_b if r.cache == "fx_graph" and r.state == "hit"]
    bundled = {n for r in hits for n in r.bundled}
    versions = (a.environment.triton, b.environment.triton)
    out = []
    for i, ob in enumerate(cb.output_code):
        oa = next((o for o in ca.output_code if o.key == ob.key), None)
        if oa is None and i < len(ca.output_code):
            oa = ca.output_code[i]
        for kb in ob.kernels:
            if kb.language in ("triton", "cpp"):
                out.append(_one(oa, kb, ob.key or ob.graph, bundled, versions))
    return tuple(out)


def kernel_lines(rows: tuple[KernelCaches, ...], per_kind: int = 3) -> list[str]:
    """``cache_diff``'s lines for one compile's kernels: a count per state, then each
    kernel whose key changed with the parts that differ."""
    if not rows:
        return []
    lines = []
    for cache in (TRITON, CPP):
        mine = [r for r in rows if r.cache == cache]
        if not mine:
            continue
        states: dict[str, int] = {}
        for r in mine:
            states[r.state] = states.get(r.state, 0) + 1
        counts = ", ".join(f"{n} {s}" for s, n in states.items())
        lines.append(f"  {cache} kernel cache: {len(mine)} kernels: {counts}")
    tuned = [r for r in rows if r.autotune != ("", "")]
    if tuned:
        moves: dict[str, int] = {}
        for r in tuned:
            # a kernel loaded from the FX graph entry looks nothing up
            after = r.autotune[1] or ("not looked up" if r.state == "hit (FX bundle)" else "-")
            move = f"{r.autotune[0] or '-'} -> {after}"
            moves[move] = moves.get(move, 0) + 1
        lines.append(
            "  autotune cache (torch's triton_kernel_info): "
            + ", ".join(f"{n} {m}" for m, n in moves.items())
        )
    shown = 0
    for r in rows:
        if not (r.missed or (r.autotune[1] == "miss" and r.changes)):
            continue
        shown += 1
        if shown > per_kind:
            continue
        tune = f", autotune {r.autotune[1]}" if r.autotune[1] else ""
        lines.append(f"  {r.output} {r.kernel}: {r.cache} {r.state}{tune}")
        for ch in r.changes[:per_kind]:
            lines.append(f"    differs in {ch.name} ({ch.kind}; enters {' and '.join(ch.caches)})")
            lines.append(f"      a: {_cut(ch.a, ch.b)}")
            lines.append(f"      b: {_cut(ch.b, ch.a)}")
    if shown > per_kind:
        lines.append(f"  ... and {shown - per_kind} more kernels whose key changed")
    return lines


def _cut(text: str, other: str, width: int = 140) -> str:
    # code's indentation says nothing here: one space for each run of blanks
    one = " ".join(text.replace("\n", " \\n ").split())
    two = " ".join(other.replace("\n", " \\n ").split())
    if len(one) <= width:
        return one
    first = next((i for i, (x, y) in enumerate(zip(one, two, strict=False)) if x != y), 0)
    start = max(0, first - width // 3)
    return ("..." if start else "") + one[start : start + width] + "..."


def template_autotuning(c: Compile) -> tuple[int, float]:
    """How many GEMM/conv template autotunings ran in ``c``, and their seconds: torch's
    ``<op>_template_autotuning`` spans, which it opens only when it benchmarks (a choice
    found in the autotune cache opens none).

    Example:
        >>> import compiler
        >>> template_autotuning(compiler.model.Compile(
        ...     compile_id=compiler.model.CompileId.from_string("0/0")))
        (0, 0.0)
    """
    spans = [p.seconds for p in c.metrics.phases if p.name.endswith("_template_autotuning")]
    return len(spans), float(sum(spans))


def triton_build(c: Compile) -> tuple[int, float]:
    """How many of ``c``'s Triton kernels torch timed, and their build seconds in all
    (``compile_time_us`` of its ``triton_kernel_info``).

    Example:
        >>> import compiler
        >>> triton_build(compiler.model.Compile(
        ...     compile_id=compiler.model.CompileId.from_string("0/0")))
        (0, 0.0)
    """
    times = [t for k in c.kernels() if (t := _us(k)) is not None]
    return len(times), sum(times) / 1e6
