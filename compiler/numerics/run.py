"""``compiler.numerics``: run a target compiled once, observed, and compare every
intermediate Inductor wrote with eager's (same dtypes and float64)."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from compiler._compat import numerics as torch_numerics
from compiler.capture.explore import explore, kept_results
from compiler.capture.observe import Observation, observe
from compiler.capture.state import Snapshot
from compiler.model import (
    Compile,
    Exploration,
    FinalNumerics,
    NodeNumerics,
    Numerics,
    OutputCode,
    SourceLoc,
)
from compiler.numerics.final import Finals, compare_finals, eager_rerun, finals
from compiler.numerics.nodes import GraphLinks, graph_nodes
from compiler.numerics.reference import run_reference
from compiler.parse.output_code import file_line_writes, line_callees

_LOW = {"torch.bfloat16": "bfloat16", "torch.float16": "float16"}


@contextlib.contextmanager
def _observed(
    target: Callable[..., Any], inputs: tuple[Any, ...]
) -> Iterator[tuple[Observation, Snapshot | None]]:
    """The state numerics' extra work touches, saved before and restored after through the
    one owner of that snapshot, ``Observation.extra_calls`` (the compiled run itself goes
    through ``explore`` and so through its own observation). A failure to save or restore
    is kept in the observation's boundary: ``Observation.finish`` reports it."""
    with observe(target, inputs, isolate=False) as obs, obs.extra_calls() as saved:
        yield obs, saved


def numerics(target: Callable[..., Any], *inputs: Any, **compile_options: Any) -> Numerics:
    """Run ``target(*inputs)`` compiled with Inductor once, keep every buffer its output
    code writes, and compare each post-grad node's compiled value with eager's.

    The eager references run each Inductor graph's post-grad graph node by node
    (``torch.fx.Interpreter``) on the inputs the compiled graph was given, in its own
    dtypes and in float64, so a forward graph's errors add up along it and a backward
    graph starts from the activations the compiled forward saved. The verdict per node is
    the accuracy minifier's (``torch._dynamo.utils.same`` against float64 with its RMSE
    multiplier, at ``torch._dynamo.config.repro_tolerance``), beside
    ``torch.testing.assert_close``'s. End to end, the target then runs again eagerly from
    the state the compiled run started from (compiled code it calls itself included:
    ``torch.compiler.set_stance("force_eager")``), and what it returns and the gradients it
    leaves are compared with the compiled run's (``Numerics.end_to_end``). The state the
    target reaches (parameters, gradients, optimizer state, RNG) is saved before the
    compiled run and restored after the eager one.

    Args:
        target: a function, an ``nn.Module`` or a training step.
        *inputs: its positional arguments.
        **compile_options: ``mode``, ``dynamic``, ``fullgraph``, ``options`` (Inductor's,
            e.g. ``{"fallback_random": True}``) and the rest of ``compiler.explore``'s.

    Returns:
        A ``Numerics``; ``.exploration`` is the capture (with ``numerics`` set) that its
        nodes, kernels and lines link into.

    Example:
        >>> import torch, compiler
        >>> n = compiler.numerics(lambda x: torch.relu(x) * 2, torch.randn(16))  # doctest: +SKIP
        >>> n.first_divergence is None  # doctest: +SKIP
        True
    """
    import torch

    # Triton's lower stages are not what numerics is about, and cost a lowering per kernel
    compile_options.setdefault("triton_stages", False)
    options = dict(compile_options.get("options") or {})
    fallback = bool(options.get("fallback_random", torch_numerics.fallback_random()))
    tol = torch_numerics.repro_tolerance()
    with _observed(target, inputs) as (obs, saved):
        with (
            torch_numerics.observe_intermediates(file_line_writes) as seen,
            kept_results() as returned,
        ):
            exp = explore(target, *inputs, **compile_options)
        final, final_note = _end_to_end(target, inputs, returned, saved, tol, obs,
                                        _random_op(seen))  # fmt: skip
    nodes: list[NodeNumerics] = []
    notes = [
        f"Ran {exp.target or 'the target'} once compiled, keeping every buffer its output code "
        "wrote, then each Inductor graph's post-grad graph eagerly on the inputs the compiled "
        "graph was given, in its own dtypes and in float64; the target's state was "
        + (saved.describe() if saved is not None else "not saved (see the errors)")
    ]
    for lowered in seen.graphs:
        if not lowered.calls:
            continue
        if len(lowered.calls) > 1:
            notes.append(f"{len(lowered.calls) - 1} later call(s) of a graph were not compared.")
        call = lowered.calls[0]
        ref = run_reference(lowered.module, call.inputs, call.rng)
        links = _links(exp, lowered)
        if ref.fp64_error:
            notes.append(f"The {links.graph} graph of {links.compile_id} did not run in float64 "
                         f"({ref.fp64_error}): its verdicts are allclose only.")  # fmt: skip
        nodes += graph_nodes(lowered, call, ref, links, tol=tol, fallback_random=fallback,
                             start=len(nodes))  # fmt: skip
    notes += [final_note, *(f"Not observed: {e}" for e in dict.fromkeys(seen.errors))]
    if not seen.graphs:
        notes.append("Inductor compiled no graph in this run: nothing to compare (numerics needs "
                     "the inductor backend and a compile the run triggers).")  # fmt: skip
    # the first random node in graph order is one that draws (its users come after it)
    drawn = next((n for n in nodes if n.reason.startswith("random:")), None)
    if drawn is not None and any(f.compared for f in final):
        final = _drawn_apart(final, drawn)
        notes.append(f"End to end, nothing was compared after all: {final[0].reason}.")
    low = sorted({_LOW[n.dtype] for n in nodes if n.dtype in _LOW})
    if low:
        notes.append(_closer_note(", ".join(low), nodes))
    found = Numerics(
        target=exp.target, device=exp.environment.device, torch_version=torch.__version__,
        tolerance=tol, low_precision=", ".join(low),
        fallback_random=fallback, nodes=tuple(nodes), notes=tuple(notes), end_to_end=final,
    )  # fmt: skip
    exp = obs.finish(dataclasses.replace(exp, numerics=found))
    return dataclasses.replace(found, exploration=exp)


def _end_to_end(
    target: Callable[..., Any],
    inputs: tuple[Any, ...],
    returned: list[object],
    saved: Snapshot | None,
    tol: float,
    obs: Observation,
    drawing: str,
) -> tuple[tuple[FinalNumerics, ...], str]:
    """The compiled run's outputs and gradients against an eager rerun of the whole target
    from the same state, judged against a float64 rerun of it where one runs, and a note
    that says what ran (or why nothing was compared). ``drawing`` names a random op of the
    compiled graphs ("" if none): a float64 rerun would draw other numbers, so it is not
    made there."""
    if saved is None:
        return (), ("The whole target was not rerun eagerly: its state could not be saved, so "
                    "a rerun could not start where the compiled run did.")  # fmt: skip
    if not returned:
        return (), "The whole target was not rerun eagerly: the compiled run did not finish."
    compiled = None
    with obs.boundary.guard("numerics"):
        compiled = finals(returned[0], saved)
    if compiled is None:
        return (), "The whole target was not rerun eagerly: its results could not be copied."
    try:
        eager = eager_rerun(target, inputs, saved)
    except Exception as exc:
        return (), (f"The eager rerun of the whole target raised {type(exc).__name__}: "
                    f"{str(exc)[:200]}; its outputs and gradients were not compared.")  # fmt: skip
    eager64, why_not = _float64_rerun(target, inputs, saved, drawing)
    rows = compare_finals(compiled, eager, tol, eager64)
    grads = sum(r.kind == "gradient" for r in rows)
    against = sum(r.rmse_bound is not None for r in rows)
    if eager64 is None:
        verdict = f"torch's same() at tolerance {tol:g} as allclose only: {why_not}"
    else:
        verdict = (
            f"torch's same() at tolerance {tol:g} against a float64 rerun of the whole target "
            "(the floating parameters, buffers, inputs, gradients and optimizer state it reaches "
            "cast to float64 in place, the default dtype float64, autocast off; all put back "
            f"after), which {against} of the {len(rows)} value(s) had"
            + ("" if against == len(rows) else
               " (the rest came out of it in another dtype: allclose only)")
        )  # fmt: skip
    return rows, (
        "End to end: the target ran again eagerly (torch.compiler.set_stance('force_eager')) "
        "from the state, inputs and RNG state the compiled run started from; "
        f"{len(rows) - grads} output(s) and {grads} parameter gradient(s) it left were compared "
        f"with the compiled run's by {verdict}; the state was put back after."
    )


def _random_op(seen: torch_numerics.Intermediates) -> str:
    """The first random op of the compiled graphs, "" if none."""
    for lowered in seen.graphs:
        for node in lowered.module.graph.nodes:
            if node.op == "call_function" and torch_numerics.is_random(node.target):
                return str(node.target)
    return ""


def _float64_rerun(
    target: Callable[..., Any], inputs: tuple[Any, ...], saved: Snapshot, drawing: str
) -> tuple[Finals | None, str]:
    """The eager rerun again with the target's floating state and inputs in float64, or
    None and why not (ops without float64 raise: the verdict falls back to allclose)."""
    if drawing:
        return None, (f"no float64 rerun, as the graphs draw random numbers ({drawing}), "
                      "which float64 draws differently")  # fmt: skip
    try:
        return eager_rerun(target, inputs, saved, float64=True), ""
    except Exception as exc:
        first = str(exc).splitlines()[0][:200] if str(exc) else ""
        return None, f"the float64 rerun raised {type(exc).__name__}: {first}"


def _drawn_apart(
    final: tuple[FinalNumerics, ...], drawn: NodeNumerics
) -> tuple[FinalNumerics, ...]:
    """The end-to-end rows, not compared where the compiled run drew its own random
    numbers (``fallback_random=False``): the eager rerun drew others, so its results differ
    whether or not the compiled code is right."""
    reason = (f"random: the compiled run drew its own random numbers ({drawn.node} in the "
              f"{drawn.graph} graph, fallback_random=False); numerics(..., "
              "options={'fallback_random': True}) compares it")  # fmt: skip
    return tuple(dataclasses.replace(f, compared=False, reason=reason) if f.compared else f
                 for f in final)  # fmt: skip


def _output_code(exp: Exploration, path: str) -> tuple[Compile | None, OutputCode | None]:
    text = ""
    with contextlib.suppress(OSError):
        text = Path(path).read_text(encoding="utf-8")
    for c in exp.compiles:
        for out in c.output_code:
            if out.path == path or (text and out.text == text):
                return c, out
    return None, None


def _sources(c: Compile, out: OutputCode) -> dict[str, SourceLoc]:
    """Each post-grad node's user line: its own, else the AOT graph node of its name
    (post-grad passes keep AOT names; AOT backward nodes carry the forward op's line), else
    the Dynamo node provenance maps it to."""
    found: dict[str, SourceLoc] = {}
    dynamo = {n.name: n.source for g in ("after_pre_grad_graph", "dynamo_output_graph")
              if g in c.graphs for n in c.graphs[g].nodes if n.source is not None}  # fmt: skip
    aot = c.graphs.get(f"aot_{out.graph}_graph")
    by_name = {n.name: n.source for n in aot.nodes if n.source is not None} if aot else {}
    post = out.graphs.get("inductor_post_grad_graph")
    for node in post.nodes if post else ():
        loc = node.source or by_name.get(node.name)
        for pre in out.provenance.post_to_pre.get(node.name, ()):
            loc = loc or dynamo.get(pre)
        if loc is not None:
            found[node.name] = loc
    return found


def _links(exp: Exploration, lowered: Any) -> GraphLinks:
    c, out = _output_code(exp, lowered.path)
    callees: dict[int, str] = {}
    with contextlib.suppress(OSError, SyntaxError):
        callees = line_callees(Path(lowered.path).read_text(encoding="utf-8"),
                               lowered.call_code.co_firstlineno)  # fmt: skip
    if out is None or c is None:
        return GraphLinks(graph="graph", compile_id="", callees=callees)
    kernels = {line: (k.name, k.id) for k in out.kernels for line in k.call_lines}
    return GraphLinks(graph=out.key or out.graph, compile_id=c.key or str(c.compile_id),
                      kernels=kernels, sources=_sources(c, out), callees=callees)  # fmt: skip


def _closer_note(low: str, nodes: list[NodeNumerics]) -> str:
    """Which of compiled and eager is nearer float64 where they differ, in a run that
    computed in low precision (float32 nodes count too: under autocast they hold what the
    low-precision ops made, and a fused kernel that skips a rounding shows there)."""
    differ = [n for n in nodes if n.compared and n.max_abs]
    if not differ:
        return (f"In {low}, compiled and eager agree exactly at every compared node: Inductor "
                "rounded where eager did.")  # fmt: skip
    compiled = sum(n.closer == "compiled" for n in differ)
    eager = sum(n.closer == "eager" for n in differ)
    within = sum(bool(n.within) for n in differ)
    return (
        f"In a run with {low}, compiled differs from eager at {len(differ)} node(s), {within} of "
        f"them within tolerance; compiled is closer to float64 at {compiled}, eager at {eager}. "
        "Inductor keeps a fused kernel's intermediates in float32 where eager rounds after every "
        "op, so compiled low-precision results differing from eager's is not a bug by itself: "
        "the verdict compares both against float64."
    )
