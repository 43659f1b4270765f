"""Graph breaks, grouped by cause and place, with the fix that cause usually takes.

Each break is read through torch's graph-break registry (``compiler/advise/breaks/``):
its id, type, explanation, hints and page. The cause key is the registry id and the
break site (the library's line for a break inside a library: Dynamo reports one break
once per frame it passes through). Whose code the site is decides what to advise: the
user's own line is changed; torch's and libraries' code never is, the change is given on
the user's side. The cost is what the break made Dynamo compile besides the frame
itself: resume functions and the graphs they hold. A backend compiler that failed and
fell back to eager is its own finding (``breaks.backend``).
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.advise._common import Ranked, cause_key, finding, plural, resume_of
from compiler.advise.breaks import backend
from compiler.advise.breaks.causes import ON_PURPOSE, Cause, cause_name, classify, from_registry
from compiler.advise.breaks.registry import Entry, Registry
from compiler.advise.findings import Evidence
from compiler.link.ids import SrcKey, compile_pane, key_of, loc_key, short_path
from compiler.link.user_code import (
    compiled_files,
    is_own_code,
    is_user_file,
    library_of,
    owner_of,
)
from compiler.model import Compile, Exploration, GraphBreak, SourceLoc
from compiler.parse.words.breaks import break_words
from compiler.ranks.wrappers import wrapper_of

_FULLGRAPH = "\n`torch.compile(..., fullgraph=True)` turns any remaining break into an error."


@dataclass(frozen=True, slots=True)
class _Read:
    """One break as the advisor reads it: registry entry, cause, whose code it is."""

    entry: Entry | None
    cause: Cause
    owner: str  # "user", "torch" or a library's name: whose code the break site is
    area: str  # "torch.optim", "transformers", "" for the user's
    torch_own: bool  # torch's own code breaks on purpose: nothing the user removes


def _read(
    gb: GraphBreak, entry: Entry | None, compiled: frozenset[str], areas: frozenset[str]
) -> _Read:
    """``gb`` read: its cause, whose code its site is, and whether it is torch's own
    break on purpose; ``areas``: the areas of torch whose frames Dynamo compiled."""
    wrapper = wrapper_of(gb)
    if wrapper is not None:
        # the wrapper's own code breaks, on every rank alike: worth knowing, not a fault
        cause = Cause(
            f"graph_break.{wrapper.name.lower()}",
            f"{wrapper.name} itself breaks the graph (not your code)",
            f"{wrapper.explanation}\n{wrapper.suggestion}",
            severity="info",
        )
        return _Read(entry, cause, "torch", "torch.nn.parallel", False)
    words = break_words(gb.summary, gb.reason)
    loc = user_location(gb, compiled)
    code = loc.code.strip() if loc else ""
    name = cause_name(words, entry)
    # the site's owner: the skipped or disabled callee's file where Dynamo names it
    site = words.callee_file if name in ON_PURPOSE and words.callee_file else ""
    if not site and gb.location is not None:
        site = gb.location.filename
    owner, area = owner_of(site) if site else ("user", "")
    # torch's own graph_break() or disable, or a torch function Dynamo skips at the call
    # but then compiles in frames of its own (the optimizer's step): torch's design. A
    # skipped torch function nothing of which compiled (torch.save) is the user's call.
    torch_own = owner == "torch" and (
        name in ("explicit", "disabled") or (name == "unsupported_call" and area in areas)
    )
    if name == "unsupported_call" and owner == "torch" and not torch_own:
        cause = _torch_skipped(words.callee or "a torch function", code)
    elif name:
        cause = classify(name, words, code)
    elif entry is not None:
        cause = from_registry(entry, words, gb.hints)
    else:
        title = gb.summary if gb.summary and not gb.summary.startswith("Traceback") else ""
        hints = "\n".join(f"- {h}" for h in gb.hints)
        cause = Cause(
            "graph_break.other",
            f"Graph break: {title}" if title else "Dynamo stopped tracing here",
            "What torch suggests:\n" + hints if hints else "See the graph break reason.",
        )
    return _Read(entry, cause, owner, area, torch_own)


def _torch_skipped(callee: str, code: str) -> Cause:
    """A torch function Dynamo keeps out of graphs on purpose, called from the user's
    compiled code: torch's code is not to be changed, the call can move."""
    return Cause(
        "graph_break.unsupported_call",
        f"torch's `{callee}` is kept out of the graph on purpose",
        f"`{code or 'the line'}` calls `{callee}`, which Dynamo does not trace by design "
        "(torch marks it skipped), so the graph ends there. Call it outside the compiled "
        "function, before or after the compiled call, where it runs the same.",
        severity="warning",
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
    """One finding per graph break cause: the same registry id at the same break site
    (torch's own location of the break, library code included) is one finding, however
    many frames the break reached and however many compiles it repeated in. Torch's own
    breaks on purpose (its optimizer's ``graph_break()``, functions it marks skipped)
    are one note per area of torch; backend failures are one finding per failing op."""
    compiled = compiled_files(exp.compiles)
    areas = frozenset(a for o, a in (owner_of(c.filename) for c in exp.compiles) if o == "torch")
    registry = Registry()
    groups: dict[tuple[str, SrcKey | None], list[tuple[Compile, GraphBreak]]] = {}
    reads: dict[tuple[str, SrcKey | None], _Read] = {}
    torch_own: dict[str, list[tuple[Compile, GraphBreak]]] = {}
    failed: list[tuple[Compile, GraphBreak]] = []
    for c in exp.compiles:
        for gb in c.graph_breaks:
            entry = registry.entry_for(gb)
            if backend.is_failure(gb, entry):
                failed.append((c, gb))
                continue
            read = _read(gb, entry, compiled, areas)
            if read.torch_own:
                torch_own.setdefault(read.area, []).append((c, gb))
                continue
            key = (entry.gb_id if entry else gb.summary, loc_key(_group_at(gb, compiled)))
            groups.setdefault(key, []).append((c, gb))
            reads.setdefault(key, read)
    out = [_finding(exp, hits, reads[k], compiled) for k, hits in groups.items()]
    out += [_torch_own(exp, area, hits, compiled) for area, hits in torch_own.items()]
    return out + backend.findings(failed)


def _group_at(gb: GraphBreak, compiled: frozenset[str]) -> SourceLoc | None:
    """Where breaks of one cause meet: a library's own line where the break is inside a
    library (Dynamo reports it once per frame it passes through, each frame with its own
    user line), else the user's line (``user_location``)."""
    at = gb.location
    if at is not None and owner_of(at.filename)[0] not in ("user", "torch", "python"):
        return at
    return user_location(gb, compiled)


def _site(loc: SourceLoc | None) -> str:
    """A break site that reads the same on every machine: ``transformers/x.py:12``
    inside a library, ``…/dir/train.py:12`` otherwise."""
    if loc is None:
        return ""
    lib = library_of(loc.filename)
    return f"{lib[1] if lib else short_path(loc.filename)}:{loc.line}"


def _registry_evidence(entry: Entry | None, c: Compile) -> list[Evidence]:
    if entry is None:
        return []
    page = f" ({entry.link})" if entry.link else ""
    return [
        Evidence(
            text=f"torch's graph-break registry: {entry.gb_id} \"{entry.gb_type}\"{page}",
            compile=key_of(c),
            stage=compile_pane("dynamo_graph_break_reason"),
        )
    ]


def _finding(
    exp: Exploration,
    hits: list[tuple[Compile, GraphBreak]],
    read: _Read,
    compiled: frozenset[str],
) -> Ranked:
    c0, gb0 = hits[0]
    cause = read.cause
    frames = list({id(c): c for c, _ in hits}.values())
    resumes = list({id(r): r for c, gb in hits for r in _resumes(exp, c, gb)}.values())
    site = user_location(gb0, compiled)
    lib = library_of(site.filename) if site is not None else None
    if lib is not None and lib[0] == "torch":
        lib = None  # torch's file: shown by path, told from the user's line
    chain = _chain(gb0, compiled)
    evidence = []
    code = f": `{site.code.strip()}`" if site is not None and site.code else ""
    label = read.entry.gb_type if read.entry else gb0.summary
    for c in frames[:6]:
        evidence.append(
            Evidence(
                text=f"{c.compile_id} `{c.code_name}`: {label}{code}",
                compile=key_of(c),
                stage=compile_pane("dynamo_graph_break_reason"),
                src=loc_key(site),
            )
        )
    evidence += _registry_evidence(read.entry, c0)
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
    severity = cause.severity
    if read.owner not in ("user", "torch") and cause.kind in _ASKED:
        # a library's own graph_break() or disable: not the user's to remove
        severity = "warning"
        suggestion = (
            f"{read.owner} breaks the graph here on purpose; that is its code, not yours. "
            "Compile the parts of your code around the call instead of one function "
            "across it, or look for a compile-friendly option in its documentation."
        )
    if lib is not None and chain:
        suggestion = (
            f"The break is in {lib[0]}, not in your code; your line reaches it "
            f"({_own_line(gb0)}). " + suggestion
        )
    elif read.owner == "torch" and site is not None and not is_user_file(site.filename):
        suggestion = (
            f"The break is inside {read.area}, reached from your line ({_own_line(gb0)}). "
            + suggestion
        )
    if read.entry is not None and read.entry.link and read.entry.link not in suggestion:
        suggestion += f"\ntorch's page for this break ({read.entry.gb_id}): {read.entry.link}"
    gb_key = read.entry.gb_id if read.entry else (gb0.summary or cause.kind)
    if wrapper_of(gb0) is not None:
        # DDP's own breaks at one site come under several registry ids (GB0007, GB0156 on
        # NCCL ranks): for the user it is one fact, the wrapper breaking
        gb_key = cause.kind
    return finding(
        cause.kind,
        severity,
        title,
        evidence,
        suggestion + (_FULLGRAPH if severity == "problem" else ""),
        _impact(frames, resumes, hits),
        score=float(len(hits) + len(resumes)),
        chain=chain,
        fix=cause.fix if severity != "warning" or read.owner == "user" else None,
        cause=cause_key("break", gb_key, _site(_group_at(gb0, compiled))),
    )


_ASKED = ("graph_break.explicit", "graph_break.disabled")


def _torch_own(
    exp: Exploration, area: str, hits: list[tuple[Compile, GraphBreak]], compiled: frozenset[str]
) -> Ranked:
    """torch's own code breaking on purpose (``area``: ``torch.optim``): a note that it
    is torch's design, where it happens, and what the user's side can do."""
    registry = Registry()
    frames = list({id(c): c for c, _ in hits}.values())
    resumes = list({id(r): r for c, gb in hits for r in _resumes(exp, c, gb)}.values())
    gb0 = hits[0][1]
    evidence: list[Evidence] = []
    ids: list[str] = []
    for c, gb in hits[:6]:
        entry = registry.entry_for(gb)
        words = break_words(gb.summary, gb.reason)
        at = gb.location
        place = f" at {_site(at)}" if at is not None else ""
        said = f": {words.explanation}" if words.explanation else ""
        evidence.append(
            Evidence(
                text=f"{c.compile_id} `{c.code_name}`{place}: "
                f"{entry.gb_type if entry else gb.summary}{said}",
                compile=key_of(c),
                stage=compile_pane("dynamo_graph_break_reason"),
                src=loc_key(at),
            )
        )
        if entry is not None and entry.gb_id not in ids:
            ids.append(entry.gb_id)
            evidence += _registry_evidence(entry, c)
    graphs = [r for r in (*frames, *resumes) if "dynamo_output_graph" in r.graphs]
    optim = area == "torch.optim"
    what = "torch.optim's `step`" if optim else f"{area}'s own code"
    title = f"{what} breaks the graph on purpose (torch's code, not yours)"
    suggestion = (
        f"Nothing in your code asks for this break: {area} calls "
        "`torch._dynamo.graph_break()` itself or is kept out of tracing by Dynamo, and "
        f"your line ({_own_line(gb0)}) only calls it. "
    )
    if optim:
        suggestion += (
            "The update itself still compiles into its own graph; compile the optimizer "
            "step as torch's compiled-optimizer tutorial does and keep `fullgraph=False`:\n"
            "```python\n"
            "@torch.compile(fullgraph=False)\n"
            "def step():\n"
            "    opt.step()\n"
            "```\n"
            "An LR scheduler that changes a float `lr` recompiles that graph; giving the "
            "optimizer a tensor lr (`AdamW(params, lr=torch.tensor(0.01))`) keeps one graph."
        )
    else:
        suggestion += "Compile your own functions around the call rather than across it."
    impact = (
        f"{plural(len(hits), 'break')} in {plural(len(frames), 'frame')}; "
        f"{plural(len(graphs), 'graph')} compiled around them"
    )
    return finding(
        "graph_break.torch_own",
        "info",
        title,
        evidence,
        suggestion,
        impact,
        score=float(len(hits)),
        chain=_chain(gb0, compiled),
        cause=cause_key("break", area, "on purpose"),
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
