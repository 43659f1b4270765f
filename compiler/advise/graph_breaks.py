"""Graph breaks, grouped by cause and place, with the fix that cause usually takes.

The cause is read from the text Dynamo wrote for the break (its summary, explanation
and debug context); the cost is what the break made Dynamo compile besides the frame
itself: resume functions and the graphs they hold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from compiler.advise._common import Ranked, finding, plural, resume_of
from compiler.advise.findings import Evidence
from compiler.link.ids import SrcKey, compile_pane, key_of, loc_key, short_path
from compiler.link.user_code import compiled_files, is_own_code, is_user_file, library_of
from compiler.model import Compile, Exploration, Fix, GraphBreak, SourceLoc
from compiler.parse.words.breaks import break_words
from compiler.ranks.wrappers import wrapper_of

# torch's own files: a break reported inside them is shown at the user's line that led there


_FULLGRAPH = "\n`torch.compile(..., fullgraph=True)` turns any remaining break into an error."


@dataclass(frozen=True, slots=True)
class _Cause:
    kind: str
    title: str
    suggestion: str
    fix: Fix | None = None
    severity: str = "problem"


def _classify(gb: GraphBreak, compiled: frozenset[str]) -> _Cause:
    wrapper = wrapper_of(gb)
    if wrapper is not None:
        # the wrapper's own code breaks, on every rank alike: worth knowing, not a fault
        return _Cause(
            f"graph_break.{wrapper.name.lower()}",
            f"{wrapper.name} itself breaks the graph (not your code)",
            f"{wrapper.explanation}\n{wrapper.suggestion}",
            severity="info",
        )
    words = break_words(gb.summary, gb.reason)
    loc = user_location(gb, compiled)
    code = (loc.code.strip() if loc else "") or "the line"
    if words.explicit:
        return _Cause(
            "graph_break.explicit",
            "An explicit torch._dynamo.graph_break() splits the graph",
            f"`{code}` asks for the break. Remove it unless it is there on purpose "
            "(debugging, or to keep a region out of one graph); "
            "`torch.compiler.disable` on a function says the same more visibly.",
        )
    if words.data_dependent_branch:
        return _Cause(
            "graph_break.data_dependent_branch",
            "A branch on tensor data breaks the graph",
            f"`{code}` decides in Python on a value that only exists when the graph "
            "runs. Compute both sides and select, or hand both branches to torch.cond:\n"
            "```python\n"
            "y = torch.where(x.sum() > 0, x.cos(), x.sin())   # cheap branches: both run\n"
            "y = torch.cond(x.sum() > 0, lambda t: t.cos(), lambda t: t.sin(), (x,))\n"
            "```",
        )
    if words.float_tolist:
        return _Cause(
            "graph_break.scalar_output",
            "Tensor.tolist() on a float tensor breaks the graph",
            f"`{code}` turns a float tensor into Python numbers, which Dynamo cannot "
            "trace even with capture_scalar_outputs. Keep the values in a tensor and use "
            "tensor ops on them (indexing, torch.where) instead of a Python list.",
        )
    scalar = words.scalar_output
    if scalar and re.match(r"(if|elif|while|assert)\b", code):
        # checked on torch 2.13: with capture_scalar_outputs the same line still breaks,
        # now as a data-dependent branch on the captured scalar
        return _Cause(
            "graph_break.scalar_branch",
            "A Python decision on a tensor's value (.item()) breaks the graph",
            f"`{code}` branches in Python on a value read from a tensor. "
            "`capture_scalar_outputs` would only move the break to the branch; decide "
            "with tensor ops instead, or hand both branches to torch.cond:\n"
            "```python\n"
            "ids = torch.where(nxt == eos, ids_if_done, ids_if_not)   # both computed\n"
            "out = torch.cond(nxt == eos, done_fn, step_fn, (ids,))\n"
            "```\n"
            "or take the decision out of the compiled function (compile the step, loop "
            "and stop in Python).",
        )
    if scalar:
        return _Cause(
            "graph_break.scalar_output",
            "A tensor value read into Python (.item(), .tolist(), a NumPy scalar) breaks the graph",
            f"`{code}` reads a tensor value into Python. Let Dynamo keep it symbolic:\n"
            "```python\n"
            "torch._dynamo.config.capture_scalar_outputs = True\n"
            "```\n"
            "or keep it a 0-d tensor (`x * x.sum()` rather than `x * x.sum().item()`).",
            Fix(
                kind="dynamo_config",
                name="capture_scalar_outputs",
                value="True",
                code="torch._dynamo.config.capture_scalar_outputs = True",
            ),
        )
    if words.dynamic_output_shape:
        return _Cause(
            "graph_break.dynamic_output_shape",
            "An op whose output size depends on the data breaks the graph",
            f"`{code}` (nonzero, unique, masked_select, ...) has a data-dependent output "
            "size. Let Dynamo trace it with an unbacked size:\n"
            "```python\n"
            "torch._dynamo.config.capture_dynamic_output_shape_ops = True\n"
            "```",
            Fix(
                kind="dynamo_config",
                name="capture_dynamic_output_shape_ops",
                value="True",
                code="torch._dynamo.config.capture_dynamic_output_shape_ops = True",
            ),
        )
    if words.backward:
        return _Cause(
            "graph_break.backward",
            "loss.backward() inside the compiled function breaks the graph",
            f"`{code}` runs autograd, which Dynamo does not trace: the forward is one "
            "graph, the backward still runs compiled (AOTAutograd's backward graph), and "
            "the rest of the function is a resume function. Compile the model (or the "
            "forward and the loss) and call backward outside the compiled function:\n"
            "```python\n"
            "compiled = torch.compile(model)\n"
            "loss = compiled(x, labels=x).loss\n"
            "loss.backward()\n"
            "```",
        )
    if words.disabled:
        return _Cause(
            "graph_break.disabled",
            "A function wrapped in torch.compiler.disable breaks the graph",
            f"`{code}` calls a function excluded from compilation; every call splits the "
            "graph there. Remove the `torch.compiler.disable` if the function is "
            "traceable, or move the call out of the compiled region.",
        )
    logging_fn = words.logging_call
    if logging_fn == "logger":
        method = words.logger_method
        fn = f"logging.Logger.{method}"
        message = words.logged_message
        said = ""
        if message:
            said = f' It logs: "{message}"; changing what the message names avoids the call.'
        return _Cause(
            "graph_break.logging",
            f"A `logger.{method}` call breaks the graph",
            f"`{code}` calls a logging.Logger method, which Dynamo cannot put in a graph.{said} "
            "Let Dynamo drop the call while compiling (it then does not log from compiled "
            "code):\n"
            "```python\n"
            "import logging\n"
            f"torch._dynamo.config.ignore_logging_functions.add({fn})\n"
            "```\n"
            "or move the logging out of the compiled function.",
            Fix(
                kind="dynamo_config",
                name="ignore_logging_functions",
                value=fn,
                code=f"torch._dynamo.config.ignore_logging_functions.add({fn})",
            ),
        )
    if logging_fn:
        setting = f"torch._dynamo.config.reorderable_logging_functions.add({logging_fn})"
        return _Cause(
            "graph_break.logging",
            "Printing or logging inside the compiled code breaks the graph",
            f"`{code}` runs Python I/O between two graphs. Move it out of the compiled "
            "function, or let Dynamo run it after the graph instead of breaking:\n"
            f"```python\n{setting}\n```",
            Fix(
                kind="dynamo_config",
                name="reorderable_logging_functions",
                value=logging_fn,
                code=setting,
            ),
        )
    if words.unsupported_call:
        name = words.callee or "a function"
        extra = ""
        if "random" in name.lower():
            extra = " Here `torch.rand(())` draws the number inside the graph instead."
        return _Cause(
            "graph_break.unsupported_call",
            f"A call Dynamo cannot trace ({name}) breaks the graph",
            f"`{code}` calls `{name}`, a builtin or third-party function Dynamo skips."
            f"{extra} Put it in the graph as an opaque call if it only does torch ops, give "
            "Dynamo a traceable Python version, or keep it out on purpose:\n"
            "```python\n"
            "torch.compiler.allow_in_graph(fn)          # fn: torch ops on tensors only\n"
            "@torch.compiler.substitute_in_graph(fn)    # a traceable stand-in for fn\n"
            "def fn_traceable(*args): ...\n"
            "fn = torch.compiler.disable(fn)            # run it eagerly, on purpose\n"
            "```\n"
            "A C/C++ extension is best wrapped as a custom op (`torch.library.custom_op`).",
        )
    hints = "\n".join(f"- {h}" for h in gb.hints)
    return _Cause(
        "graph_break.other",
        f"Graph break: {gb.summary or 'Dynamo stopped tracing'}",
        "What torch suggests:\n" + hints if hints else "See the graph break reason.",
    )


def _resumes(exp: Exploration, c: Compile, gb: GraphBreak) -> list[Compile]:
    """The resume functions this break made Dynamo compile."""
    key = key_of(c)
    lines = {loc.line for loc in (gb.location, *gb.user_stack) if loc is not None}
    out = []
    for other in exp.compiles:
        if other.rank != c.rank or other is c:
            continue
        r = resume_of(other)
        # ``parent`` also links a recompile N/k to N/k-1: only resume functions count
        if r is not None and (other.parent == key or (r[0] == c.code_name and r[1] in lines)):
            out.append(other)
    return out


def findings(exp: Exploration) -> list[Ranked]:
    """One finding per graph break cause: the same break site (torch's own location of
    the break, library code included) and the same kind of break is one finding, however
    many frames the break reached and however many compiles it repeated in."""
    compiled = compiled_files(exp.compiles)
    groups: dict[tuple[str, SrcKey | None], list[tuple[Compile, GraphBreak]]] = {}
    for c in exp.compiles:
        for gb in c.graph_breaks:
            where = loc_key(user_location(gb, compiled))
            groups.setdefault((gb.summary, where), []).append((c, gb))
    return [_finding(exp, where, hits, compiled) for (_, where), hits in groups.items()]


def _finding(
    exp: Exploration,
    where: SrcKey | None,
    hits: list[tuple[Compile, GraphBreak]],
    compiled: frozenset[str],
) -> Ranked:
    c0, gb0 = hits[0]
    cause = _classify(gb0, compiled)
    frames = list({id(c): c for c, _ in hits}.values())
    resumes = list({id(r): r for c, gb in hits for r in _resumes(exp, c, gb)}.values())
    site = user_location(gb0, compiled)
    lib = library_of(site.filename) if site is not None else None
    chain = _chain(gb0, compiled)
    evidence = []
    code = f": `{site.code.strip()}`" if site is not None and site.code else ""
    for c in frames[:6]:
        evidence.append(
            Evidence(
                text=f"{c.compile_id} `{c.code_name}`: {gb0.summary}{code}",
                compile=key_of(c),
                stage=compile_pane("dynamo_graph_break_reason"),
                src=where,
            )
        )
    node = _condition_node(c0, gb0)
    if node is not None:
        evidence.append(
            Evidence(
                text=f"the condition is `{node}` in the graph before the break",
                compile=key_of(c0),
                stage=compile_pane("dynamo_output_graph"),
                node=node,
            )
        )
    for r in resumes[:2]:
        graph = "dynamo_output_graph"
        evidence.append(
            Evidence(
                text=f"resume function `{r.code_name}` compiled as {r.compile_id}",
                compile=key_of(r),
                stage=compile_pane(graph) if graph in r.graphs else None,
            )
        )
    where_text = ""
    if site is not None:
        name = lib[1] if lib else short_path(site.filename)
        fn = f" in `{site.function}`" if site.function else ""
        where_text = f" at {name}:{site.line}{fn}"
    title = f"{cause.title}{where_text}"
    if lib is not None:
        title = f"{cause.title} inside {lib[0]}{where_text}"
    suggestion = cause.suggestion
    if lib is not None and chain:
        suggestion = (
            f"The break is in {lib[0]}, not in your code; your line reaches it "
            f"({_own_line(gb0)}). " + suggestion
        )
    return finding(
        cause.kind,
        cause.severity,
        title,
        evidence,
        suggestion + (_FULLGRAPH if cause.severity == "problem" else ""),
        _impact(frames, resumes, hits),
        score=float(len(hits) + len(resumes)),
        chain=chain,
        fix=cause.fix,
    )


def _impact(
    frames: list[Compile], resumes: list[Compile], hits: list[tuple[Compile, GraphBreak]]
) -> str:
    """What the break cost, counted from the compiles it reached."""
    graphless = [c for c in frames if "dynamo_output_graph" not in c.graphs]
    cut_short = {id(c) for c, gb in hits if break_words(gb.summary, gb.reason).skips_rest}
    graphs = sum(1 for c in (*frames, *resumes) if "dynamo_output_graph" in c.graphs)
    names = list(dict.fromkeys(c.code_name for c in frames))
    listed = ", ".join(f"`{n}`" for n in names[:6]) + (" ..." if len(names) > 6 else "")
    where = plural(len(names), "frame")
    if len(frames) > len(names):
        where = f"{plural(len(frames), 'compile')} of {where}"
    parts = [f"breaks {where} ({listed})"]
    if graphless:
        parts.append(f"{len(graphless)} of them compiled no graph and ran eagerly")
    if cut_short:
        parts.append(f"{len(cut_short)} ran the rest of its code eagerly after its graph")
    parts.append(
        f"{plural(graphs, 'graph')} and {plural(len(resumes), 'resume function')} "
        "compiled around the break"
    )
    per_call = graphs / len(frames)
    if len(names) == 1 and per_call > 1:
        parts.append(f"{plural(round(per_call), 'graph')} instead of one per call")
    seconds = sum(c.metrics.entire_frame_seconds or 0.0 for c in (*frames, *resumes))
    if seconds:
        parts.append(f"{seconds:.1f} s of compile time in these compiles")
    return "; ".join(parts)


def _shown(loc: SourceLoc, compiled: frozenset[str]) -> bool:
    """A frame worth showing in a chain: user or library code, not torch's own."""
    lib = library_of(loc.filename)
    return lib[0] != "torch" if lib is not None else is_user_file(loc.filename, compiled)


def _own_line(gb: GraphBreak) -> str:
    """``file.py:12 in step: `loss = model(x)``` for the user's line that led to the break."""
    own = [loc for loc in gb.user_stack if loc.line and is_own_code(loc.filename)]
    if not own:
        return "the call into the library"
    loc = own[-1]
    code = f": `{loc.code.strip()}`" if loc.code else ""
    return f"{short_path(loc.filename)}:{loc.line} in {loc.function}{code}"


def _chain(gb: GraphBreak, compiled: frozenset[str]) -> tuple[Evidence, ...]:
    """The frames from the user's own line to the break, outermost first (torch's and
    this package's frames left out), each a link to its line; () when the break is in
    the user's own line itself."""
    stack = [loc for loc in gb.user_stack if loc.line]
    own = [i for i, loc in enumerate(stack) if is_own_code(loc.filename)]
    if not own:
        return ()
    # the innermost own frame: the user's line that led into library code
    frames = [loc for loc in stack[own[-1] :] if _shown(loc, compiled)]
    if len(frames) < 2:
        return ()
    out = []
    for loc in frames:
        lib = library_of(loc.filename)
        name = lib[1] if lib else short_path(loc.filename)
        code = loc.code.strip() if loc.code else ""
        # plain text: it is a link's label in the view and an arrow-joined line in the report
        text = f"{name}:{loc.line} in {loc.function}" + (f": {code}" if code else "")
        out.append(Evidence(text=text, src=loc_key(loc)))
    return tuple(out)


def _condition_node(c: Compile, gb: GraphBreak) -> str | None:
    """The graph node of a data-dependent condition, where the graph holds it."""
    graph = c.graphs.get("dynamo_output_graph")
    candidates = break_words(gb.summary, gb.reason).condition_nodes
    if graph is None or not candidates:
        return None  # (the graph's nodes are parsed only where a condition names some)
    names = {n.name for n in graph.nodes}
    return next((n for n in candidates if n in names), None)


def user_location(gb: GraphBreak, compiled: frozenset[str] = frozenset()) -> SourceLoc | None:
    """Where in user code the break happened: its location, or, when torch reports it
    inside its own files (a polyfill, a skipped torch function), the innermost frame of
    the user stack in user code (``is_user_file``; ``compiled``: the exploration's
    compiled files)."""
    if gb.location is not None and is_user_file(gb.location.filename, compiled):
        return gb.location
    for loc in reversed(gb.user_stack):
        if is_user_file(loc.filename, compiled) and loc.line:
            return loc
    return gb.location
