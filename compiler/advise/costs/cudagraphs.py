"""CUDA graph findings from ``compiler.cudagraphs``: a skip with its cause linked to the
user's line and the graph's nodes there, ops kept out of CUDA graph partitions, one
recording per distinct shape, and backwards left pending between calls.

Cause keys: ``cudagraph|skip|<cause>|<file:line>``, ``cudagraph|partition|<reason>|<file:line>``,
``cudagraph|shapes|<compile>``, ``cudagraph|pending_backward``,
``cudagraph|overwritten|<file:line>`` (torch's run-time error for a CUDA graph output read
after a later run overwrote it).
"""

from __future__ import annotations

from compiler.advise._common import Ranked, cause_key, finding
from compiler.advise.findings import Evidence
from compiler.costs.cudagraphs import CudaGraphs, SiteGraphs, cudagraphs
from compiler.link.ids import compile_pane, key_of, src_key
from compiler.link.user_code import callers, is_user_file, library_of
from compiler.model import Compile, Exploration
from compiler.model.stages import DYNAMO_GRAPH
from compiler.parse.words.cudagraphs import PartitionOp, UserFrame
from compiler.parse.words.names import input_name, module_path_of_placeholder

_STATIC = (
    "An input keeps its CUDA graph static when its address does not change between calls: "
    "parameters and buffers of a module are static; other inputs are copied into the "
    "graph's static buffers on each replay."
)
_ADVICE = {
    "mutated": "An input is changed in place: return a new tensor instead (`x = x + 1`), "
    "or make the mutated tensor a buffer of the module (buffers may be mutated). " + _STATIC,
    "cpu": "A CPU tensor or op takes part: move it out of the compiled function, or keep the "
    "data on the GPU (`.cpu()` inside the graph forces a sync and a partition).",
    "dynamic": "The graph has dynamic shapes: pad or bucket the inputs to a few sizes, or "
    "set `torch._inductor.config.triton.cudagraph_skip_dynamic_graphs = True` to skip "
    "graphs with dynamic shapes rather than record one per size.",
}


def findings(exp: Exploration) -> list[Ranked]:
    """CUDA graph findings; nothing where torch said nothing about CUDA graphs."""
    if not exp.compiles:
        return []
    graphs = cudagraphs(exp)
    by_id = {str(c.compile_id): c for c in exp.compiles}
    out: list[Ranked] = []
    for site in graphs.sites:
        c = by_id[site.compile_id]
        if site.skip is not None:
            out.append(_skip(c, site))
        out.extend(_kept_out(c, site))
        if len(site.keys) > 1:
            out.append(_shapes(c, site, graphs.pool_bytes, graphs.first_call_ms()))
    if graphs.overwritten is not None:
        out.append(_overwritten(exp, graphs))
    if graphs.pending_backwards:
        out.append(
            finding(
                "cudagraph.pending_backward",
                "info",
                "CUDA graphs fell off their fast path: a backward was still pending when "
                "the next call began",
                [Evidence(text=f"{graphs.pending_backwards} times: \"Unable to hit fast path "
                          "of CUDAGraphs because of pending, uninvoked backwards\"",
                          compile=key_of(exp.compiles[0]))],
                "Call `torch.compiler.cudagraph_mark_step_begin()` at the start of each "
                "training or inference step, so torch knows the previous step's outputs "
                "and backwards are done with.",
                "calls run the slow path (checks and copies) instead of a plain replay",
                score=0.3,
                cause=cause_key("cudagraph", "pending_backward"),
            )
        )
    return out


def _where(f: UserFrame) -> str:
    return f"{f.filename.rsplit('/', 1)[-1]}:{f.line}"


def skip_cause(exp: Exploration, c: Compile) -> str:
    """The cause key of compile ``c``'s CUDA graph skip ("" if none): the one key every
    rule about that skip should set, so the advisor keeps one finding for it.

    >>> from compiler.model import CompileId
    >>> skip_cause(Exploration(source=""), Compile(compile_id=CompileId.from_string("0/0")))
    ''
    """
    site = next((s for s in cudagraphs(exp).sites if s.compile_id == str(c.compile_id)), None)
    if site is None or site.skip is None:
        return ""
    user = next((f for f in reversed(site.skip.frames) if f.code), None)
    return _skip_key(site.skip.cause or site.skip.reason, user)


def _skip_key(cause: str, user: UserFrame | None) -> str:
    return cause_key("cudagraph", "skip", cause, _where(user) if user else "")


def _skip(c: Compile, site: SiteGraphs) -> Ranked:
    assert site.skip is not None
    sk = site.skip
    user = next((f for f in reversed(sk.frames) if f.code), None)
    at = f" at `{user.code}` ({_where(user)})" if user else ""
    evidence = [
        Evidence(
            text=f"torch: {sk.reason}{at}",
            compile=key_of(c),
            stage=compile_pane("dynamo_output_graph") if site.nodes else None,
            node=site.nodes[-1] if site.nodes else None,
            src=src_key(user.filename, user.line) if user else None,
        )
    ]
    inputs = _cpu_inputs(c) if sk.cause == "cpu" else []
    caller = _caller(c)
    passed = f", passed at {caller}" if caller else ""
    if inputs:  # a CPU tensor passed in: the input and the line that passes it
        names = ", ".join(f"`{n}`" for n in inputs)
        at = f": the input {names} is a CPU tensor{passed}"
    elif sk.cause == "mutated" and site.mutated:  # the user's parameter, not AOT's arg0_1
        names = ", ".join(f"`{n}`" for n in site.mutated)
        line = f" by `{user.code}` ({_where(user)})" if user else ""
        at = f": the input {names} is changed in place{line}{passed}"
    return finding(
        "cudagraph.skipped",
        "warning",
        f"CUDA graphs skipped for compile {c.compile_id}: {sk.cause or sk.reason}{at}",
        evidence,
        _ADVICE.get(sk.cause, "Remove the cause torch names.")
        + " `TORCH_LOGS=cudagraphs,perf_hints` prints the reason while it compiles.",
        "a kernel launch per kernel instead of one graph replay",
        score=1.0,
        cause=_skip_key(sk.cause or sk.reason, user),
    )


def _kept_out(c: Compile, site: SiteGraphs) -> list[Ranked]:
    """One finding per cause of ops kept out of CUDA graphs: the ops that move data to or
    from the CPU (torch's ``cpu ops`` and ``DeviceCopy ops``: one moves the data there,
    the other back) are one cause, named by the input where a CPU tensor is passed in."""
    groups: dict[str, list[PartitionOp]] = {}
    for op in site.kept_out:
        groups.setdefault("cpu" if _on_the_cpu(op.reason) else op.reason, []).append(op)
    out = []
    for family, ops in groups.items():
        users = [next((f for f in reversed(op.frames) if f.code), None) for op in ops]
        placed = [(op, u) for op, u in zip(ops, users, strict=True) if u is not None]
        op, user = placed[0] if placed else (ops[0], None)
        inputs = _cpu_inputs(c) if family == "cpu" else []
        reasons = ", ".join(dict.fromkeys(o.reason for o in ops))
        lines = ", ".join(dict.fromkeys(f"`{u.code}` ({_where(u)})" for _, u in placed))
        at = f" at {lines}" if lines else ""
        if inputs:
            caller = _caller(c)
            passed = f", passed at {caller}" if caller else ""
            names = ", ".join(f"`{n}`" for n in inputs)
            title = (f"Compile {c.compile_id}: ops kept out of CUDA graphs ({reasons}) because "
                     f"the input {names} is a CPU tensor{passed}")  # fmt: skip
            advice = (f"Pass {names} on the GPU (`.cuda()` once, before the call), or as a "
                      "Python number if it is a scalar. " + _STATIC)  # fmt: skip
        else:
            title = f"Compile {c.compile_id}: ops kept out of CUDA graphs ({reasons}){at}"
            advice = _ADVICE.get("cpu" if family == "cpu" else "", "Move the op out of the "
                                 "compiled region.")  # fmt: skip
        evidence = [
            Evidence(text=f"torch: {o.buffer}: reason={o.reason}, fx={o.fx}", compile=key_of(c),
                     src=src_key(u.filename, u.line) if u else None)
            for o, u in zip(ops, users, strict=True)
        ]  # fmt: skip
        place = _where(user) if user else op.fx
        out.append(
            finding(
                "cudagraph.partition",
                "warning",
                title,
                evidence,
                advice + " The graph is split around it: each side is a separate CUDA graph.",
                "the graph runs as several CUDA graphs with eager work between them",
                score=0.8,
                cause=cause_key("cudagraph", "partition", op.reason, place),
            )
        )
    return out


def _on_the_cpu(reason: str) -> bool:
    """torch's partition reasons for work on, or copies to and from, the CPU."""
    return "cpu" in reason.lower() or "devicecopy" in reason.lower()


def _cpu_inputs(c: Compile) -> list[str]:
    """The user's names of the Dynamo graph's inputs that are CPU tensors (``L_x_``:
    ``x``), parameters and buffers left out."""
    graph = c.graphs.get(DYNAMO_GRAPH)
    if graph is None:
        return []
    out = []
    for n in graph.nodes:
        if n.op != "placeholder" or not n.meta or not n.meta[0].device.startswith("cpu"):
            continue
        if module_path_of_placeholder(n.target) is not None:
            continue  # a module's parameter or buffer
        out.append(input_name(n.target))
    return out


def _caller(c: Compile) -> str:
    """``file:line`` of the call into the compiled frame from the user's code or a library
    other than torch (torch's frames and the explorer's own are passed over)."""
    for loc in reversed(callers(c)):
        lib = library_of(loc.filename) if loc.filename else ("torch", "")
        if is_user_file(loc.filename) or (lib is not None and lib[0] != "torch"):
            return f"{loc.filename.rsplit('/', 1)[-1]}:{loc.line}"
    return ""


def _shapes(c: Compile, site: SiteGraphs, pool: int, first: dict[int, float]) -> Ranked:
    text = f"{len(site.keys)} CUDA graph trees recorded, one per symint key: " + ", ".join(
        site.keys
    )
    evidence = [Evidence(text=text, compile=key_of(c))]
    for sh in site.shapes:
        ms = ", ".join(f"{t:.1f}" for t in sh.calls_ms[:3])
        evidence.append(
            Evidence(
                text=f"symint key {sh.key}: {sh.warmups} warm-ups, {sh.recordings} recordings"
                + (f", inputs [{sh.sizes[0]}]" if sh.sizes else "")
                + (f"; calls at this size: {ms} ms (warm-up, recording, replay)" if ms else ""),
                compile=key_of(c),
            )
        )
    if not site.shapes and first:
        times = ", ".join(f"batch {b}: {ms:.1f} ms" for b, ms in first.items())
        evidence.append(Evidence(text=f"first call per size (warm-up/recording): {times}"))
    if pool:
        evidence.append(Evidence(text=f"CUDA graph pool: {pool / 2**20:.1f} MiB"))
    return finding(
        "cudagraph.per_shape",
        "info",
        f"Compile {c.compile_id} recorded a CUDA graph per distinct shape "
        f"({len(site.keys)} sizes)",
        evidence,
        "Each new size costs a warm-up, a recording and pool memory. Pad or bucket the "
        "inputs to a few sizes; `torch._inductor.config.triton.cudagraph_skip_dynamic_graphs"
        " = True` skips CUDA graphs for dynamic graphs instead; call "
        "`torch.compiler.cudagraph_mark_step_begin()` between steps. " + _STATIC,
        f"{len(site.keys)} recordings",
        score=0.4,
        cause=cause_key("cudagraph", "shapes", c.compile_id),
    )


def _overwritten(exp: Exploration, graphs: CudaGraphs) -> Ranked:
    """torch's run-time error: an output of a CUDA graph was read (a saved activation
    in a backward, a tensor kept across steps) after a later replay reused its memory."""
    over = graphs.overwritten
    assert over is not None
    f = over.frame
    at = f" made at {_where(f)} (`{f.function}`)" if f else ""
    nodes = graphs.overwritten_nodes
    by_id = {str(c.compile_id): c for c in exp.compiles}
    first = by_id.get(nodes[0][0]) if nodes else None
    evidence = [
        Evidence(
            text="torch: accessing tensor output of CUDAGraphs that has been overwritten by "
            f"a subsequent run{at}",
            compile=key_of(first) if first else None,
            stage=compile_pane("dynamo_output_graph") if nodes else None,
            node=nodes[-1][1] if nodes else None,
            src=src_key(f.filename, f.line) if f else None,
        )
    ]
    if over.advice:
        evidence.append(Evidence(text=f"torch's advice: {over.advice}"))
    return finding(
        "cudagraph.overwritten",
        "problem",
        f"A CUDA graph output was read after a later run overwrote it{at}",
        evidence,
        "CUDA graph trees give every output of a replay memory in one pool, reused by the "
        "next replay: a tensor kept from one call is overwritten by the next. Call "
        "`torch.compiler.cudagraph_mark_step_begin()` at the start of each step, and "
        "`.clone()` an output you keep beyond the step, outside the compiled function. "
        "The tensor may be a gradient: a backward recorded in a CUDA graph writes each "
        "parameter's first `.grad` into the pool, so accumulating into it at the next step "
        "reads memory a later run overwrote (the stack then names the forward line of the "
        "layer). Set the gradients to None before each backward (`optimizer.zero_grad()` or "
        "`model.zero_grad(set_to_none=True)`), or allocate `.grad` before the first "
        "compiled backward if you accumulate."
        + (" torch says this one is a gradient." if over.grad else ""),
        "the run stops with a RuntimeError",
        score=1.2,
        cause=cause_key("cudagraph", "overwritten", _where(f) if f else ""),
    )
