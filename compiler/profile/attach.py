"""``attach_profile``: the user's own ``torch.profiler`` run, linked to the explored kernels.

``compiler.profile.events`` links each kernel event to the explored kernel it ran (Triton
and C++ kernels by name, library kernels through the ``aten::`` op of the wrapper's call
that launched them). Where the trace carries torch's own provenance (``args["stack"]``,
torch 2.14's ``inductor_trace_handler`` with ``TORCH_COMPILE_DEBUG_EXTEND=1``), that stack
gives the kernel's source lines; otherwise they are the explored kernel's.

Time per source line counts each kernel at its innermost user lines only: the line of each
graph node it ran (torch's ``# File:`` comment in the post-grad graph, the forward op's
line for a backward node), or the innermost user frame of its stack where no node line is
user code; the outer lines (the model's ``forward`` calling a block) keep the whole stack,
which ``ProfiledKernel.stack`` holds. Time per module takes the module stacks the
post-grad graph's nodes carry, backward nodes included (``link.post_stacks`` gives them
the forward nodes' stacks).
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import replace
from typing import Any

from compiler.link import module_stack
from compiler.link.user_code import compiled_files, is_model_frame, node_sources
from compiler.model import Exploration, SourceLoc
from compiler.model.profile import Profile, ProfiledKernel, ProfiledPlace
from compiler.parse.dynamo_text import parse_stack_trace
from compiler.parse.output_code import call_source_nodes
from compiler.profile.chrome import read_spans, trace_file
from compiler.profile.events import Linked, Site, link_events
from compiler.profile.regions import region_calls_of


def _nodes(site: Site, call_line: int = 0) -> tuple[str, ...]:
    """The post-grad nodes a kernel ran; at one call site (``call_line``) of a library
    kernel, those of that call."""
    k = site.kernel
    if call_line:
        return call_source_nodes(site.output.text, (call_line,))
    return k.post_grad_nodes or k.source_nodes or call_source_nodes(site.output.text, k.call_lines)


def _module(site: Site, call_line: int = 0) -> str:
    graph = site.output.graphs.get("inductor_post_grad_graph")
    nodes = _nodes(site, call_line)
    if graph is None or not nodes:
        return ""
    stacks = {n.name: n.module_stack for n in graph.nodes}
    found = [stacks[p] for p in nodes if stacks.get(p)]
    common = module_stack.common(found)
    if common:
        return common[-1]
    # fused across sibling modules: name them all, in graph order
    return "+".join(dict.fromkeys(f[-1] for f in found))


def _innermost(
    site: Site, stack: tuple[SourceLoc, ...], files: Any, call_line: int = 0
) -> tuple[SourceLoc, ...]:
    """The kernel's innermost user lines (see the module doc)."""
    if stack:
        return stack[-1:]
    sources = node_sources(site.output)
    lines = [sources[n] for n in _nodes(site, call_line) if n in sources]
    lines = [loc for loc in lines if is_model_frame(loc, files)]
    if lines:
        return tuple(dict.fromkeys(lines))
    user = [loc for loc in site.kernel.user_lines if is_model_frame(loc, files)]
    return tuple(user[-1:])


def _stack(arg: Any) -> tuple[SourceLoc, ...]:
    if isinstance(arg, list):
        arg = "\n".join(str(a) for a in arg)
    return parse_stack_trace(arg) if isinstance(arg, str) else ()


def attach_profile(exp: Exploration, path: str | os.PathLike[str]) -> Exploration:
    """``exp`` with ``profile`` set: the user's own ``torch.profiler`` Chrome trace
    (``prof.export_chrome_trace(path)``, plain or ``.gz``, or a ``tensorboard_trace_handler``
    folder, its newest file) linked to the explored kernels, with time per kernel, per
    source line and per module from that run, and how often each compile's code ran
    (``Profile.regions``: the calls a ``TORCH_TRACE`` log does not record).

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
    device = any(s.cat == "kernel" for s in spans)
    events = link_events(exp, spans)
    profile = linked_profile(exp, events, device=device, path=str(file))
    regions = region_calls_of(exp, spans, events)
    return replace(exp, profile=replace(profile, notes=(*notes, *profile.notes), regions=regions))


def linked_profile(exp: Exploration, events: list[Linked], *, device: bool, path: str) -> Profile:
    """The ``Profile`` of linked kernel events (``profile.events.link_events``): time per
    kernel, per innermost source line and per module.

    Example:
        >>> from pathlib import Path
        >>> from compiler.model import Exploration
        >>> from compiler.profile.chrome import read_spans
        >>> data = Path("tests/data/profiles")
        >>> exp = Exploration.from_json((data / "cpu_mlp.exploration.json").read_text())
        >>> spans = read_spans(data / "cpu_mlp.trace.json.gz")
        >>> p = linked_profile(exp, link_events(exp, spans), device=False, path="run")
        >>> p.linked_events, p.kernel_events  # 10 C++ kernel events, 10 library calls
        (20, 20)
    """
    provenance = False
    count = linked = 0
    total = outside = 0.0
    per: dict[tuple[str, str], dict[str, Any]] = {}
    unlinked: dict[str, int] = defaultdict(int)
    for e in events:
        total += e.span.dur
        if e.region is None:
            outside += e.span.dur
            continue
        count += 1
        if e.site is None:
            unlinked[e.name] += 1
            continue
        linked += 1
        stack = _stack(e.span.args.get("stack"))
        provenance = provenance or bool(stack)
        # a kernel id names a kernel within one output code (``forward/extern_kernels.mm``):
        # each recompile has its own, whose call lines are lines of its own output code
        at = (e.site.compile.key or str(e.site.compile.compile_id), e.site.kernel.id)
        row = per.setdefault(at, {"site": e.site, "n": 0, "us": 0.0, "stack": (), "at": {}})
        row["n"] += 1
        row["us"] += e.span.dur
        row["stack"] = row["stack"] or stack
        row["at"][e.call_line] = row["at"].get(e.call_line, 0.0) + e.span.dur
    files = compiled_files(exp.compiles)
    kernels = []
    lines: dict[str, ProfiledPlace] = {}
    modules: dict[str, ProfiledPlace] = {}
    for (_, kid), row in sorted(per.items(), key=lambda kv: -float(kv[1]["us"])):
        site = row["site"]
        pk = ProfiledKernel(
            kernel=kid,
            name=site.kernel.name,
            compile=str(site.compile.compile_id),
            module=_module(site),
            events=row["n"],
            total_us=row["us"],
            stack=tuple(loc for loc in row["stack"] if is_model_frame(loc, files)),
        )
        kernels.append(pk)
        # a library kernel's calls, each at its own lines and module where its call is known
        for call_line, us in row["at"].items():
            for loc in _innermost(site, pk.stack, files, call_line):
                _add(lines, str(loc), pk, loc, us)
            module = _module(site, call_line) if call_line else pk.module
            if module:
                _add(modules, module, pk, None, us)
    notes: tuple[str, ...] = ()
    if not device:
        notes += ("a CPU trace: the kernels are Inductor's C++ kernels, timed on the host",)
    if unlinked:
        notes += (
            "unlinked kernels ran in a compiled region but neither under the name of an "
            "explored kernel nor under the aten op of one of its output code's library "
            "calls (kernels of an op the output code does not call, or of a backward that "
            "more than one backward output code could be)",
        )
    return Profile(
        path=path,
        device="cuda" if device else "cpu",
        provenance=provenance,
        kernel_events=count,
        linked_events=linked,
        total_us=total,
        outside_us=outside,
        kernels=tuple(kernels),
        unlinked=dict(sorted(unlinked.items(), key=lambda kv: -kv[1])),
        lines=_ranked(lines),
        modules=_ranked(modules),
        notes=notes,
    )


def _add(
    into: dict[str, ProfiledPlace], key: str, pk: ProfiledKernel, loc: SourceLoc | None,
    us: float,
) -> None:
    old = into.get(key) or ProfiledPlace(place=key, total_us=0.0, loc=loc)
    kernels = old.kernels if pk.kernel in old.kernels else (*old.kernels, pk.kernel)
    into[key] = replace(old, total_us=old.total_us + us, kernels=kernels)


def _ranked(places: dict[str, ProfiledPlace]) -> tuple[ProfiledPlace, ...]:
    return tuple(sorted(places.values(), key=lambda p: -p.total_us))
