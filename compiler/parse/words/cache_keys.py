"""The cache-key details torch logs with ``fx_graph_cache_*`` and ``aotautograd_cache_*``.

Each artifact's JSON payload carries ``components``: one line per part of the key, written
by torch's ``FxGraphCachePickler.debug_lines`` as ``[<hash>] <name>: <value>`` (``<name>``
may carry ``[<item>]`` for a list or dict entry, such as ``inductor_config[max_fusion_size]``).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass

_LINE = re.compile(r"\[(?P<hash>[a-z0-9]+)\] (?P<name>[^:\n]+?): ?(?P<value>.*)", re.S)
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e-?\d+)?")


@dataclass(frozen=True, slots=True)
class Component:
    """One part of a cache key: its name, torch's hash of it and its printed value."""

    name: str
    hash: str
    value: str


@dataclass(frozen=True, slots=True)
class CacheRecord:
    """One cache lookup as torch logged it."""

    cache: str  # "fx_graph" or "aotautograd"
    state: str  # "hit", "miss" or "bypass"
    key: str = ""
    components: tuple[Component, ...] = ()
    bypass_reason: str = ""
    detail: str = ""  # torch's ``cache_status_detailed``
    # the Triton kernels torch saved with the FX graph entry (on a miss) or wrote back to
    # Triton's cache from it (on a hit): ``triton_bundler_meta.cached_kernel_names``
    bundled: tuple[str, ...] = ()
    time_saved_ms: float | None = None  # torch's estimate, on an AOTAutograd cache hit


def components(lines: list[str]) -> tuple[Component, ...]:
    """The components of torch's ``debug_lines``; a line of another form is kept whole.

    Example:
        >>> components(["[abc1] inductor_config[max_fusion_size]: 64"])
        (Component(name='inductor_config[max_fusion_size]', hash='abc1', value='64'),)
    """
    out = []
    for line in lines:
        m = _LINE.match(str(line))
        if m is None:
            out.append(Component(name=str(line)[:80], hash=str(line), value=str(line)))
        else:
            out.append(Component(m["name"], m["hash"], m["value"]))
    return tuple(out)


# the advisor and the page each read every compile's records: each payload is parsed
# once (a record is frozen, so callers share it); bounded, as it keeps its payloads alive
@functools.lru_cache(maxsize=512)
def cache_record(artifact: str, payload: str) -> CacheRecord | None:
    """The lookup an artifact named ``fx_graph_cache_miss`` (or ``..._hit``/``_bypass``,
    ``aotautograd_cache_*``, with a ``#2`` suffix for a second one) logged, else None.

    Example:
        >>> r = cache_record("fx_graph_cache_bypass", '{"cache_bypass_reason": "Unsupported"}')
        >>> r.cache, r.state, r.bypass_reason
        ('fx_graph', 'bypass', 'Unsupported')
    """
    name = artifact.split("#", 1)[0]
    for cache in ("fx_graph", "aotautograd"):
        prefix = f"{cache}_cache_"
        if name.startswith(prefix) and name[len(prefix) :] in ("hit", "miss", "bypass"):
            break
    else:
        return None
    try:
        data = json.loads(payload)
    except ValueError:
        data = {}
    if not isinstance(data, dict):
        data = {}
    lines = data.get("components") or []
    return CacheRecord(
        cache=cache,
        state=name[len(prefix) :],
        key=str(data.get("key") or ""),
        components=components(lines if isinstance(lines, list) else []),
        bypass_reason=str(data.get("cache_bypass_reason") or ""),
        detail=str(data.get("cache_status_detailed") or ""),
        bundled=bundled_kernels(str(data.get("triton_bundler_meta") or "")),
        time_saved_ms=_number(data.get("time_saved_ms")),
    )


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None


_BUNDLED = re.compile(r"(?:cached|statically_launched)_kernel_names=\[(?P<names>[^\]]*)\]")


def bundled_kernels(meta: str) -> tuple[str, ...]:
    """The kernel names of torch's printed ``TritonBundlerMetadata``: those written back to
    Triton's cache and those loaded as static launchers (torch 2.11 on, no Triton at all).

    Example:
        >>> bundled_kernels("TritonBundlerMetadata(cached_kernel_names=['k_0', 'k_1'], "
        ...                 "statically_launched_kernel_names=['k_2'])")
        ('k_0', 'k_1', 'k_2')
    """
    return tuple(
        n.strip().strip("'\"")
        for m in _BUNDLED.finditer(meta)
        for n in m["names"].split(",")
        if n.strip()
    )


_SYSTEM = ("system_info", "cpp_runtime_thread_count", "cuda_matmul_settings", "device")
_VERSION = ("torch_version", "code_hash", "triton", "torch_key")


def kind_of(name: str) -> str:
    """What a component is: ``graph``, ``input``, ``torch version``, ``system`` or ``config``.

    Example:
        >>> kind_of("inductor_config[max_fusion_size]"), kind_of("example_inputs[0]")
        ('config', 'input')
    """
    base = name.split("[", 1)[0]
    if base in ("gm", "graph", "module") or base.endswith("_gm"):
        return "graph"
    if "input" in base or base in ("example_inputs", "args"):
        return "input"
    if any(base.startswith(v) for v in _VERSION):
        return "torch version"
    if any(base.startswith(s) for s in _SYSTEM):
        return "system"
    return "config"


def only_numbers_differ(a: str, b: str) -> bool:
    """True when two graph texts differ only in their numeric literals: a constant.

    Example:
        >>> only_numbers_differ("mul(x, 2.0)", "mul(x, 3.0)"), only_numbers_differ("sin", "cos")
        (True, False)
    """
    return a != b and _NUMBER.sub("#", a) == _NUMBER.sub("#", b)
