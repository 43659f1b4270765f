"""Each kernel event of a ``torch.profiler`` Chrome trace, linked to the explored kernel it
ran and to the call of the compiled region it ran in.

A kernel event belongs to a compiled region when it ran (a C++ kernel) or was launched (a
device kernel, found through its ``correlation`` with the host's launch call) inside a
``Torch-Compiled Region: <compile id>`` event, which Dynamo records around each call of
compiled code, or inside ``CompiledFunctionBackward``, AOTAutograd's backward. The
event's name is the output code's kernel name (C++ kernels carry ``graph_<n>_`` first,
``parse.words.names.profiled_kernel_name``); the region's compile id, or the backward,
picks among kernels of the same name in several compiles.

Library kernels (cuBLAS GEMMs and their split-K reductions, attention) carry the library's
own names. Each was launched by the wrapper's ``extern_kernels.mm(...)`` (or
``torch.ops.aten.<op>``) call, which the profiler records as the ``aten::mm`` op around
the launch; the output code being run has one library kernel of that op, so the event
links to it. Kernels launched under an op the output code does not call (or in a
backward whose output code cannot be told apart) stay unlinked. On a CPU a library call
runs on the host: the outermost such op in a region is itself the event.

Regions of the same compiled code are numbered by their start (``call`` 1, 2, ...): the
first calls compile, autotune and warm up or record CUDA graphs, so ``warm_up`` names the
calls that timing leaves out.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from compiler.model import Compile, Exploration, Kernel, OutputCode
from compiler.parse.words.names import library_aten_name, profiled_kernel_name
from compiler.profile.chrome import Span

_REGION = "Torch-Compiled Region: "
_BACKWARD = "CompiledFunctionBackward"
_LAUNCH_CATS = ("cuda_runtime", "cuda_driver", "hip_runtime")
_GRAPH_LAUNCH = "cudaGraphLaunch"


@dataclass(frozen=True, slots=True)
class Site:
    """An explored kernel in its compile and output code."""

    compile: Compile
    output: OutputCode
    kernel: Kernel


@dataclass(frozen=True, slots=True)
class Linked:
    """One kernel event: the region it ran in (None: outside compiled code), the explored
    kernel it ran (None: unlinked), the library op that launched it (``aten::mm``, for
    library kernels), the region's compiled code (``key``) and which call of it this was."""

    span: Span
    name: str
    region: Span | None = None
    site: Site | None = None
    op: Span | None = None
    key: str = ""
    call: int = 0
    replay: bool = False
    call_line: int = 0


class _Regions:
    """The compiled regions of each thread, for "which region holds this moment"."""

    def __init__(self, spans: Iterable[Span]) -> None:
        by_tid: dict[str, list[Span]] = defaultdict(list)
        for s in spans:
            if s.name.startswith(_REGION) or s.name == _BACKWARD:
                by_tid[s.tid].append(s)
        self.spans = {t: sorted(v, key=lambda s: s.ts) for t, v in by_tid.items()}
        self.starts = {t: [s.ts for s in v] for t, v in self.spans.items()}

    def at(self, tid: str, ts: float) -> Span | None:
        """The innermost region of ``tid`` open at ``ts``."""
        spans = self.spans.get(tid, [])
        i = bisect.bisect_right(self.starts.get(tid, []), ts) - 1
        while i >= 0:
            if spans[i].ts <= ts <= spans[i].end:
                return spans[i]
            i -= 1
        return None


class _Ops:
    """The host's ops of each thread, for "which ops enclose this launch"."""

    def __init__(self, spans: Iterable[Span]) -> None:
        by_tid: dict[str, list[Span]] = defaultdict(list)
        for s in spans:
            if s.cat == "cpu_op":
                by_tid[s.tid].append(s)
        self.spans = {t: sorted(v, key=lambda s: s.ts) for t, v in by_tid.items()}
        self.starts = {t: [s.ts for s in v] for t, v in self.spans.items()}

    def around(self, launch: Span, region: Span) -> list[Span]:
        """The ops open at ``launch`` that started inside ``region``, outermost first."""
        spans = self.spans.get(launch.tid, [])
        i = bisect.bisect_right(self.starts.get(launch.tid, []), launch.ts) - 1
        found = []
        while i >= 0 and spans[i].ts >= region.ts:
            if spans[i].end >= launch.ts:
                found.append(spans[i])
            i -= 1
        return found[::-1]


def sites(exp: Exploration) -> dict[str, list[Site]]:
    """Explored kernels that run under their own name (Triton, C++), by name.

    Example:
        >>> from pathlib import Path
        >>> from compiler.model import Exploration
        >>> data = Path("tests/data/profiles")
        >>> exp = Exploration.from_json((data / "cpu_mlp.exploration.json").read_text())
        >>> sorted(sites(exp))[-1]
        'cpp_fused_tanh_backward_0'
    """
    out: dict[str, list[Site]] = defaultdict(list)
    for c in exp.compiles:
        for oc in c.output_code:
            for k in oc.kernels:
                if k.language != "extern":
                    out[k.name].append(Site(c, oc, k))
    return out


def region_calls(spans: Iterable[Span]) -> list[str]:
    """torch's compile id of each call of compiled code (each ``Torch-Compiled Region``
    event, the backward's aside), in the order the calls started.

    Example:
        >>> from pathlib import Path
        >>> from compiler.profile.chrome import read_spans
        >>> region_calls(read_spans(Path("tests/data/profiles/cpu_mlp.trace.json.gz")))
        ['0/0', '0/0']
    """
    regions = sorted((s for s in spans if s.name.startswith(_REGION)), key=lambda s: s.ts)
    return [s.name[len(_REGION) :] for s in regions]


def region_spans(spans: Iterable[Span]) -> tuple[list[tuple[Span, str]], list[Span]]:
    """The compiled regions of a trace, in start order: each forward region (``Torch-Compiled
    Region``) with torch's compile id, and the backward regions (they name no compile).

    Example:
        >>> from pathlib import Path
        >>> from compiler.profile.chrome import read_spans
        >>> fw, bw = region_spans(read_spans(Path("tests/data/profiles/cpu_mlp.trace.json.gz")))
        >>> [cid for _, cid in fw], len(bw)
        (['0/0', '0/0'], 2)
    """
    ordered = sorted(spans, key=lambda s: s.ts)
    forward = [(s, s.name[len(_REGION) :]) for s in ordered if s.name.startswith(_REGION)]
    return forward, [s for s in ordered if s.name == _BACKWARD]


def _region_compile(region: Span, ids: Mapping[str, str]) -> str:
    """The exploration's compile id of a forward region (torch's own, renumbered)."""
    cid = region.name[len(_REGION) :]
    return ids.get(cid, cid)


def _pick(found: list[Site], region: Span, ran: set[str], ids: Mapping[str, str]) -> Site | None:
    """The kernel an event ran: the one of its name in the region's compile; in a
    backward region (which names no compile), the backward whose kernels include every
    kernel that region ran (``ran``)."""
    # by identity: comparing two output codes compares their whole text and graphs
    chosen = [
        s for s in found if any(s.output is oc for oc in _outputs_of(region, [s.compile], ran, ids))
    ]
    chosen = chosen or found
    # the same name in several compiles with the same code runs the same work
    if chosen and len({s.kernel.source for s in chosen}) == 1:
        return chosen[0]
    return None


def _outputs_of(
    region: Span, compiles: Iterable[Compile], ran: set[str], ids: Mapping[str, str]
) -> list[OutputCode]:
    """The output codes a region may have run: its compile's forward (or inference) code,
    or, for a backward, each backward whose kernels include every kernel it ran."""
    if region.name.startswith(_REGION):
        cid = _region_compile(region, ids)
        return [
            oc
            for c in compiles
            if str(c.compile_id) == cid
            for oc in c.output_code
            if not oc.key.startswith("backward")
        ]
    return [
        oc
        for c in compiles
        for oc in c.output_code
        if oc.key.startswith("backward") and ran <= {k.name for k in oc.kernels}
    ]


def _library(
    exp: Exploration, region: Span, ran: set[str], ops: list[Span], ids: Mapping[str, str]
) -> tuple[Site | None, Span | None]:
    """The library kernel (``extern_kernels.mm``) whose call launched a kernel: the
    outermost of the enclosing ``ops`` that a library kernel of the region's output code
    runs as, where exactly one output code can be the region's."""
    outputs = _outputs_of(region, exp.compiles, ran, ids)
    if len(outputs) != 1:
        return None, None
    (oc,) = outputs
    by_op = {library_aten_name(k.name): k for k in oc.kernels if k.language == "extern"}
    for op in ops:
        k = by_op.get(op.name)
        if k is not None:
            c = next(c for c in exp.compiles if any(oc is o for o in c.output_code))
            return Site(c, oc, k), op
    return None, None


def link_events(
    exp: Exploration, spans: list[Span], torch_ids: Mapping[str, str] | None = None
) -> list[Linked]:
    """Every kernel event of ``spans`` (device kernels, and Inductor's C++ kernels on a
    CPU), with its region, the explored kernel it ran and its region's call number.
    ``torch_ids`` maps torch's own compile ids, which the regions name, to the
    exploration's where a capture renumbered them.

    Example:
        >>> from pathlib import Path
        >>> from compiler.model import Exploration
        >>> from compiler.profile.chrome import read_spans
        >>> data = Path("tests/data/profiles")
        >>> exp = Exploration.from_json((data / "cpu_mlp.exploration.json").read_text())
        >>> spans = read_spans(data / "cpu_mlp.trace.json.gz")
        >>> sorted({(e.key, e.call) for e in link_events(exp, spans)})
        [('0/0', 1), ('0/0', 2), ('0/0 backward', 1), ('0/0 backward', 2)]
    """
    ids = torch_ids or {}
    regions = _Regions(spans)
    launches = {
        s.args["correlation"]: s
        for s in spans
        if s.cat in _LAUNCH_CATS and "correlation" in s.args
    }
    named = sites(exp)
    ops = _Ops(spans)
    # on a CPU a library call runs on the host: its outermost aten op in a region is it
    host_library: set[str] = set()
    if not any(s.cat == "kernel" for s in spans):
        host_library = {
            n for c in exp.compiles for k in c.kernels() if (n := library_aten_name(k.name))
        }
    placed: list[tuple[Span, Span | None, Span | None]] = []
    ran: dict[tuple[str, float], set[str]] = defaultdict(set)
    for s in spans:
        launch = None
        if s.cat == "kernel":
            launch = launches.get(s.args.get("correlation"))
            region = regions.at(launch.tid, launch.ts) if launch else None
        elif s.cat == "cpu_op" and profiled_kernel_name(s.name) != s.name:
            region = regions.at(s.tid, s.ts)
        elif s.cat == "cpu_op" and s.name in host_library:
            region = regions.at(s.tid, s.ts)
            outer = [o for o in ops.around(s, region) if o.name in host_library] if region else []
            if not outer or outer[0] is not s:
                continue  # eager code, or an op inside another library call
            launch = s
        else:
            continue
        placed.append((s, region, launch))
        # library kernels (cuBLAS) name no output-code kernel: they tell no compile apart
        if region is not None and profiled_kernel_name(s.name) in named:
            ran[region.tid, region.ts].add(profiled_kernel_name(s.name))
    linked: list[Linked] = []
    for s, region, launch in placed:
        name = profiled_kernel_name(s.name)
        if region is None:
            linked.append(Linked(span=s, name=name))
            continue
        done = ran[region.tid, region.ts]
        site, op = _pick(named.get(name, []), region, done, ids), None
        if site is None and name not in named and launch is not None:
            site, op = _library(exp, region, done, ops.around(launch, region), ids)
        replay = launch is not None and launch.name == _GRAPH_LAUNCH
        linked.append(Linked(span=s, name=name, region=region, site=site, op=op, replay=replay))
    return _call_sites(_numbered(linked, ids))


def _call_sites(linked: list[Linked]) -> list[Linked]:
    """Events with the wrapper line that called them: within one region call, a kernel's
    n-th launch (a library kernel's n-th ``aten::mm`` op) is the n-th of its call lines
    in the output code (the wrapper is straight-line code), where the counts agree."""

    def at(e: Linked) -> tuple[str, float]:
        return (e.op.tid, e.op.ts) if e.op is not None else (e.span.tid, e.span.ts)

    launches: dict[tuple[str, float, str], dict[tuple[str, float], None]] = defaultdict(dict)
    for e in linked:
        if e.region is not None and e.site is not None:
            launches[e.region.tid, e.region.ts, e.site.kernel.id][at(e)] = None
    out = []
    for e in linked:
        if e.region is not None and e.site is not None:
            order = sorted(launches[e.region.tid, e.region.ts, e.site.kernel.id],
                           key=lambda a: a[1])  # fmt: skip
            lines = e.site.kernel.call_lines
            if len(lines) > 1 and len(order) == len(lines):
                e = replace(e, call_line=lines[order.index(at(e))])
        out.append(e)
    return out


def _numbered(linked: list[Linked], ids: Mapping[str, str]) -> list[Linked]:
    """Each event with its region's compiled code (``key``: the compile id, or the
    backward output code it ran) and the region's call number among that code's calls."""
    keys: dict[tuple[str, float], str] = {}
    for e in linked:
        if e.region is None:
            continue
        at = (e.region.tid, e.region.ts)
        if e.region.name.startswith(_REGION):
            keys[at] = _region_compile(e.region, ids)
        elif e.site is not None and at not in keys:
            keys[at] = f"{e.site.compile.compile_id} {e.site.output.key}"
    starts: dict[str, set[float]] = defaultdict(set)
    for (_, ts), key in keys.items():
        starts[key].add(ts)
    order = {key: sorted(v) for key, v in starts.items()}
    out = []
    for e in linked:
        key = keys.get((e.region.tid, e.region.ts), "") if e.region is not None else ""
        call = bisect.bisect_left(order[key], e.region.ts) + 1 if key and e.region else 0
        out.append(replace(e, key=key, call=call))
    return out


def warm_up(linked: list[Linked]) -> dict[str, int]:
    """How many first calls of each compiled code warmed up: those before its first CUDA
    graph replay where it replays one, else its first call (compile, autotuning).

    Example:
        >>> from pathlib import Path
        >>> from compiler.model import Exploration
        >>> from compiler.profile.chrome import read_spans
        >>> data = Path("tests/data/profiles")
        >>> exp = Exploration.from_json((data / "cpu_mlp.exploration.json").read_text())
        >>> spans = read_spans(data / "cpu_mlp.trace.json.gz")
        >>> warm_up(link_events(exp, spans))["0/0"]
        1
    """
    replays: dict[str, int] = {}
    keys = {e.key for e in linked if e.key}
    for e in linked:
        if e.key and e.replay:
            replays[e.key] = min(replays.get(e.key, e.call), e.call)
    return {key: replays[key] - 1 if key in replays else 1 for key in keys}
