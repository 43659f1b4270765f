"""``attach_profile``: the user's own ``torch.profiler`` run, linked to the explored kernels.

A kernel event belongs to a compiled region when it ran (a C++ kernel) or was launched (a
device kernel, found through its ``correlation`` with the host's launch call) inside a
``Torch-Compiled Region: <compile id>`` event, which Dynamo records around each call of
compiled code, or inside ``CompiledFunctionBackward``, AOTAutograd's backward. The
event's name is the output code's kernel name (C++ kernels carry ``graph_<n>_`` first,
``parse.words.names.profiled_kernel_name``); the region's compile id, or the backward,
picks among kernels of the same name in several compiles. Where the trace carries torch's
own provenance (``args["stack"]``, torch 2.14's ``inductor_trace_handler`` with
``TORCH_COMPILE_DEBUG_EXTEND=1``), that stack gives the kernel's source lines; otherwise
they are the explored ``Kernel.user_lines``.
"""

from __future__ import annotations

import bisect
import os
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from compiler.link import module_stack
from compiler.link.user_code import compiled_files, is_user_frame
from compiler.model import Compile, Exploration, Kernel, OutputCode, SourceLoc
from compiler.model.profile import Profile, ProfiledKernel, ProfiledPlace
from compiler.parse.dynamo_text import parse_stack_trace
from compiler.parse.words.names import profiled_kernel_name
from compiler.profile.chrome import Span, read_spans, trace_file

_REGION = "Torch-Compiled Region: "
_BACKWARD = "CompiledFunctionBackward"
_LAUNCH_CATS = ("cuda_runtime", "cuda_driver", "hip_runtime")


@dataclass(frozen=True, slots=True)
class _Site:
    compile: Compile
    output: OutputCode
    kernel: Kernel


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


def _sites(exp: Exploration) -> dict[str, list[_Site]]:
    out: dict[str, list[_Site]] = defaultdict(list)
    for c in exp.compiles:
        for oc in c.output_code:
            for k in oc.kernels:
                if k.language != "extern":
                    out[k.name].append(_Site(c, oc, k))
    return out


def _pick(sites: list[_Site], region: Span, ran: set[str]) -> _Site | None:
    """The kernel an event ran: the one of its name in the region's compile; in a
    backward region (which names no compile), the backward whose kernels include every
    kernel that region ran (``ran``)."""
    if region.name.startswith(_REGION):
        cid = region.name[len(_REGION):]
        narrowed = [s for s in sites if str(s.compile.compile_id) == cid]
    else:
        narrowed = [
            s for s in sites
            if s.output.key.startswith("backward") and ran <= {k.name for k in s.output.kernels}
        ]
    chosen = narrowed or sites
    # the same name in several compiles with the same code runs the same work
    if chosen and len({s.kernel.source for s in chosen}) == 1:
        return chosen[0]
    return None


def _module(site: _Site) -> str:
    graph = site.output.graphs.get("inductor_post_grad_graph")
    if graph is None or not site.kernel.post_grad_nodes:
        return ""
    stacks = {n.name: n.module_stack for n in graph.nodes}
    found = [stacks[p] for p in site.kernel.post_grad_nodes if stacks.get(p)]
    common = module_stack.common(found)
    if common:
        return common[-1]
    # fused across sibling modules: name them all, in graph order
    return "+".join(dict.fromkeys(f[-1] for f in found))


def _stack(arg: Any) -> tuple[SourceLoc, ...]:
    if isinstance(arg, list):
        arg = "\n".join(str(a) for a in arg)
    return parse_stack_trace(arg) if isinstance(arg, str) else ()


def attach_profile(exp: Exploration, path: str | os.PathLike[str]) -> Exploration:
    """``exp`` with ``profile`` set: the user's own ``torch.profiler`` Chrome trace
    (``prof.export_chrome_trace(path)``, plain or ``.gz``, or a ``tensorboard_trace_handler``
    folder, its newest file) linked to the explored kernels, with time per kernel, per
    source line and per module from that run.

    Device kernels show in the trace with ``ProfilerActivity.CUDA``; Inductor's C++
    kernels on a CPU with ``torch._inductor.config.cpp.enable_kernel_profile = True``.
    The profiled run should run the code the exploration recorded (the same program;
    kernel names and compile ids are what link them).

    Raises:
        compiler.TraceFormatError: no readable Chrome trace at ``path``.

    Example:
        >>> import compiler
        >>> exp = compiler.Exploration.from_json(open(
        ...     "tests/data/profiles/cpu_mlp.exploration.json").read())
        >>> p = compiler.attach_profile(exp, "tests/data/profiles/cpu_mlp.trace.json.gz").profile
        >>> p.linked_events == p.kernel_events > 0, p.unlinked
        (True, {})
    """
    file, notes = trace_file(path)
    spans = read_spans(file)
    regions = _Regions(spans)
    launches = {
        s.args["correlation"]: s
        for s in spans
        if s.cat in _LAUNCH_CATS and "correlation" in s.args
    }
    sites = _sites(exp)
    device = any(s.cat == "kernel" for s in spans)
    provenance = False
    events = linked = 0
    total = outside = 0.0
    per: dict[str, dict[str, Any]] = {}
    unlinked: dict[str, int] = defaultdict(int)
    placed: list[tuple[Span, Span | None]] = []
    ran: dict[tuple[str, float], set[str]] = defaultdict(set)
    for s in spans:
        if s.cat == "kernel":
            launch = launches.get(s.args.get("correlation"))
            region = regions.at(launch.tid, launch.ts) if launch else None
        elif s.cat == "cpu_op" and profiled_kernel_name(s.name) != s.name:
            region = regions.at(s.tid, s.ts)
        else:
            continue
        placed.append((s, region))
        # library kernels (cuBLAS) name no output-code kernel: they tell no compile apart
        if region is not None and profiled_kernel_name(s.name) in sites:
            ran[region.tid, region.ts].add(profiled_kernel_name(s.name))
    for s, region in placed:
        total += s.dur
        if region is None:
            outside += s.dur
            continue
        events += 1
        name = profiled_kernel_name(s.name)
        site = _pick(sites.get(name, []), region, ran[region.tid, region.ts])
        if site is None:
            unlinked[name] += 1
            continue
        linked += 1
        stack = _stack(s.args.get("stack"))
        provenance = provenance or bool(stack)
        row = per.setdefault(site.kernel.id, {"site": site, "n": 0, "us": 0.0, "stack": ()})
        row["n"] += 1
        row["us"] += s.dur
        row["stack"] = row["stack"] or stack
    files = compiled_files(exp.compiles)
    kernels = []
    lines: dict[str, ProfiledPlace] = {}
    modules: dict[str, ProfiledPlace] = {}
    for kid, row in sorted(per.items(), key=lambda kv: -float(kv[1]["us"])):
        site = row["site"]
        pk = ProfiledKernel(
            kernel=kid,
            name=site.kernel.name,
            compile=str(site.compile.compile_id),
            module=_module(site),
            events=row["n"],
            total_us=row["us"],
            stack=tuple(loc for loc in row["stack"] if is_user_frame(loc, files)),
        )
        kernels.append(pk)
        for loc in dict.fromkeys(pk.stack or site.kernel.user_lines):
            _add(lines, str(loc), pk, loc)
        if pk.module:
            _add(modules, pk.module, pk, None)
    if not device:
        notes += ("a CPU trace: the kernels are Inductor's C++ kernels, timed on the host",)
    profile = Profile(
        path=str(file),
        device="cuda" if device else "cpu",
        provenance=provenance,
        kernel_events=events,
        linked_events=linked,
        total_us=total,
        outside_us=outside,
        kernels=tuple(kernels),
        unlinked=dict(sorted(unlinked.items(), key=lambda kv: -kv[1])),
        lines=_ranked(lines),
        modules=_ranked(modules),
        notes=notes,
    )
    return replace(exp, profile=profile)


def _add(
    into: dict[str, ProfiledPlace], key: str, pk: ProfiledKernel, loc: SourceLoc | None
) -> None:
    old = into.get(key) or ProfiledPlace(place=key, total_us=0.0, loc=loc)
    kernels = (*old.kernels, pk.kernel)
    into[key] = replace(old, total_us=old.total_us + pk.total_us, kernels=kernels)


def _ranked(places: dict[str, ProfiledPlace]) -> tuple[ProfiledPlace, ...]:
    return tuple(sorted(places.values(), key=lambda p: -p.total_us))
