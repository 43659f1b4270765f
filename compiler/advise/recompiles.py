"""Recompiles: which guard failed, on which input, how often; the recompile limit; and
``dynamic=True`` compiles that specialised a size anyway."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from compiler.advise._common import Ranked, finding, plural
from compiler.advise.findings import Evidence
from compiler.link.ids import SrcKey, compile_pane, key_of, src_key
from compiler.model import Compile, Exploration, Fix, RecompileReason
from compiler.parse.resume_names import resume_name
from compiler.parse.words.recompiles import (
    failed_guard,
    hit_recompile_limit,
    is_size_pinned,
    origin_code,
    origin_line,
    reason_user_line,
    tensor_match_sizes,
)


def _guard_text(reason: RecompileReason) -> str:
    """The failed guard alone: first line, without Dynamo's source comment and padding."""
    return failed_guard(reason.reason).text


def _cause(reason: RecompileReason) -> tuple[str, str, str]:
    """(input, what changed, a short label) for a failed-guard text."""
    g = failed_guard(reason.reason)
    first, name, what = g.text, g.input, g.what
    if g.tensor:
        dim = f" dim {g.dim}" if g.dim is not None else ""
        return name, what, f"tensor `{name}` {what}{dim}"
    if what == "grad mode":
        return "", what, "grad mode (a call under torch.no_grad())"
    if what == "global state":
        changed = f"`{g.changed}`" if g.changed else "grad mode, autocast, TF32 or threads"
        return "", what, f"global state ({changed})"
    if what == "object identity":
        return "", what, f"a different object: `{first[:80]}`"
    if what == "type":
        return "", what, f"a different type: `{first[:80]}`"
    if what == "training":
        return name, what, f"a module switching between train() and eval() (`{first}`)"
    if what == "global":
        return name, what, f"the global `{name}` (guard `{first}`)"
    if what == "value":
        return name, what, f"the Python value `{name}` (guard `{first}`)"
    if what == "attribute":
        return name, what, f"the attribute `{name}` (guard `{first}`)"
    return "", what, f"`{first[:80]}`"


def _suggest(input_name: str, what: str, dims: set[str], exp: Exploration) -> str:
    name = input_name or "the input"
    if what == "size":
        marks = "\n".join(f"torch._dynamo.mark_dynamic({name}, {d})" for d in sorted(dims) or ["0"])
        return (
            f"`{name}` arrives with different sizes. Tell Dynamo up front that the size "
            "varies, so it compiles one dynamic graph instead of a specialised one first:\n"
            f"```python\n{marks}   # before the first call\n"
            "# or for every input: torch.compile(fn, dynamic=True)\n```\n"
            "If only a few sizes occur and each should get its own tuned code, this is "
            "expected; pad to a few bucket sizes to bound the compiles."
        )
    if what == "dtype":
        return (
            f"`{name}` arrives in more than one dtype; each dtype is a new graph. Convert "
            f"once before the call (`{name}.float()`), or compile one function per dtype."
        )
    if what in ("stride", "storage offset"):
        return f"`{name}` arrives with a different layout; pass `{name}.contiguous()`."
    if what == "requires_grad":
        return (
            f"`{name}` changes requires_grad between calls; keep it the same, or run "
            "inference under `torch.no_grad()` consistently."
        )
    if what == "grad mode":
        return (
            "The same function ran with and without grad (training and evaluation); each "
            "gets its own graph, so one recompile per mode is expected and both stay cached."
        )
    if what == "training":
        return (
            "The module was switched between train() and eval(); each mode has its own "
            "graph (dropout, batch norm), so one recompile per mode is expected and both "
            "stay cached. Toggling more often than that costs nothing more."
        )
    if what == "global":
        return (
            f"The global `{name}` is read as a constant while tracing; each new value "
            "compiles again. Pass it as an argument (a tensor if it changes often), or "
            "keep it fixed once the compiled code runs."
        )
    if what == "attribute":
        return (
            f"`{name}` is read as a constant while tracing; when it changes, Dynamo "
            "compiles again. Keep it fixed while the compiled code runs, or, if it must "
            "change, store it as a tensor (a buffer) so the graph reads it as data."
        )
    if what == "value":
        return (
            f"`{name}` is a Python value Dynamo bakes into the graph as a constant, so each "
            "new value compiles again (an int becomes symbolic by itself after its first "
            "change; strings, bools, lists and other objects do not). Pass a number that "
            "varies as a tensor; for a mode flag, make the choice outside the compiled "
            "code, e.g. one small function per mode:\n"
            "```python\n"
            f"# instead of f(x, {name}) branching on {name} inside\n"
            'step = {"relu": step_relu, "tanh": step_tanh}[mode]   # each compiled once\n'
            "```\n"
            "If only a few values occur, the recompiles stop once each is compiled."
        )
    if what == "global state":
        return (
            "Something global changed between calls (grad mode, autocast, "
            "torch.backends flags). Set it once before the first call."
        )
    return "Keep what the failing guard checks the same between calls."


def findings(exp: Exploration) -> list[Ranked]:
    """Recompiles per frame and failed guard, the recompile limit, and
    ``dynamic=True`` compiles that specialised a size."""
    out: list[Ranked] = []
    # by frame id: a compile that failed (the recompile limit) may carry no code name
    frames: dict[tuple[int | None, int | None, int | None], list[Compile]] = {}
    for c in exp.compiles:
        cid = c.compile_id
        frames.setdefault((c.rank, cid.compiled_autograd_id, cid.frame_id), []).append(c)
    merged, merged_frames = _size_across_frames(exp)
    out.extend(merged)
    for key, cs in frames.items():
        code_name = next((c.code_name for c in cs if c.code_name), "?")
        split_off = _split_off_by_break(exp, cs[0])
        for r in _frame(exp, code_name, cs):
            if key in merged_frames and r.finding.kind == "recompile.size":
                continue  # one finding for the size change, over every frame it reached
            if split_off and r.finding.severity == "warning":
                r = _caused_by_break(r, split_off)
            out.append(r)
    out.extend(_specialised(exp))
    return out


_FrameKey = tuple[int | None, int | None, int | None]


def _size_across_frames(exp: Exploration) -> tuple[list[Ranked], set[_FrameKey]]:
    """One finding per size change (the same ``expected N, actual M``) that recompiled
    several frames: a sequence length that changes reaches every frame the input flows
    through (a wrapper, the model's forward, the loss), each its own recompile."""
    groups: dict[tuple[tuple[str, str], ...], list[tuple[Compile, str, str]]] = {}
    for c in exp.compiles:
        if not (c.is_recompile and c.recompile_reasons):
            continue
        reason = c.recompile_reasons[0]
        inp, what, _ = _cause(reason)
        if what != "size":
            continue
        guard = failed_guard(reason.reason)
        groups.setdefault(guard.changes, []).append((c, inp, guard.dim or "0"))
    out: list[Ranked] = []
    keys: set[_FrameKey] = set()
    for change, hits in groups.items():
        frames = {_frame_key(c) for c, _, _ in hits}
        if len(frames) < 2 or not change:
            continue
        keys |= frames
        # the input's own name: the first that is not a wrapper's positional argument
        named = [inp for _, inp, _ in hits if not inp.startswith(("args", "kwargs"))]
        name = (named or [hits[0][1]])[0]
        dims = {d for _, inp, d in hits if inp == name} or {hits[0][2]}
        sizes = ", ".join(f"{e} -> {a}" for e, a in change)
        names = list(dict.fromkeys(f"`{c.code_name}` (`{inp}`)" for c, inp, _ in hits))
        evidence = [
            Evidence(
                text=f"recompile {c.compile_id} `{c.code_name}`: "
                f"{_guard_text(c.recompile_reasons[0])}",
                compile=key_of(c),
                stage=compile_pane("recompile_reasons"),
                src=_src(c),
            )
            for c, _, _ in hits[:6]
        ]
        out.append(
            finding(
                "recompile.size",
                "warning",
                f"A size that changed between calls ({sizes}) recompiled "
                f"{plural(len(frames), 'frame')}, starting with `{hits[0][0].code_name}`",
                evidence,
                _suggest(name, "size", dims, exp)
                + "\nThe same size reaches every frame listed; marking it dynamic where it "
                "enters (your input) makes all of them dynamic.",
                f"{plural(len(hits), 'extra compile')} in {plural(len(frames), 'frame')}: "
                + ", ".join(names[:6]),
                score=float(len(hits)),
                fix=Fix(kind="dynamic", code="torch.compile(fn, dynamic=True)"),
            )
        )
    return out, keys


def _frame_key(c: Compile) -> _FrameKey:
    return (c.rank, c.compile_id.compiled_autograd_id, c.compile_id.frame_id)


def _frame(exp: Exploration, code_name: str, cs: list[Compile]) -> list[Ranked]:
    out: list[Ranked] = []
    # grouped by the guard that failed: recompiles whose trace carries no reason have none
    recompiles = [c for c in cs if c.is_recompile and c.recompile_reasons]
    limit = [c for c in cs if hit_recompile_limit(c.metrics.fail_reason or "")]
    causes: dict[tuple[str, str], list[tuple[Compile, RecompileReason, str]]] = {}
    dims: dict[tuple[str, str], set[str]] = {}
    for c in recompiles:
        # the first reason is against the newest cache entry: the guard that just failed
        reason = c.recompile_reasons[0]
        inp, what, label = _cause(reason)
        causes.setdefault((inp, what), []).append((c, reason, label))
        dim = failed_guard(reason.reason).dim
        if dim is not None:
            dims.setdefault((inp, what), set()).add(dim)
    if limit:
        c = limit[0]
        n = len([x for x in cs if x.status != "failed"])
        top = Counter(
            (inp, what) for (inp, what), hits in causes.items() for _ in hits
        ).most_common(1)
        why = ""
        if top:
            inp, what = top[0][0]
            why = f"; what kept changing: {what} of `{inp}`" if inp else f"; {what} kept changing"
        evidence = [
            Evidence(
                text=f"compile {c.compile_id} gave up: {_first(c.metrics.fail_reason)}",
                compile=key_of(c),
                stage=compile_pane("compilation_metrics"),
            )
        ]
        evidence += [
            Evidence(
                text=f"recompile {r.compile_id}: {r.recompile_reasons[0].reason.splitlines()[0]}",
                compile=key_of(r),
                stage=compile_pane("recompile_reasons"),
                src=_src(r),
            )
            for r in recompiles[:2]
        ]
        (inp, what), _ = (
            max(causes.items(), key=lambda kv: len(kv[1])) if causes else (("", ""), [])
        )
        out.append(
            finding(
                "recompile.limit",
                "problem",
                f"`{code_name}` hit the recompile limit after {plural(n, 'compile')}: "
                f"later calls run without compiling{why}",
                evidence,
                _suggest(inp, what, dims.get((inp, what), set()), exp)
                + "\nOnly if this many variants are really needed: "
                "`torch._dynamo.config.recompile_limit = 16`.",
                f"{plural(n, 'compile')}, then eager for every new variant",
                score=float(n + 100),
            )
        )
        return out
    for (inp, what), hits in causes.items():
        first = hits[0]
        evidence = [
            Evidence(
                text=f"recompile {c.compile_id}: {_guard_text(reason)}",
                compile=key_of(c),
                stage=compile_pane("recompile_reasons"),
                src=_src(c),
            )
            for c, reason, _ in hits[:3]
        ]
        out.append(
            finding(
                f"recompile.{what.replace(' ', '_')}",
                "info" if what in ("training", "grad mode") else "warning",
                f"`{code_name}` recompiled {plural(len(hits), 'time')} because of {first[2]}",
                evidence,
                _suggest(inp, what, dims.get((inp, what), set()), exp),
                f"{plural(len(hits), 'extra compile')}",
                score=float(len(hits)),
                # the explorer can compile the target again with every size dynamic
                fix=Fix(kind="dynamic", code="torch.compile(fn, dynamic=True)")
                if what == "size"
                else None,
            )
        )
    return out


def _split_off_by_break(exp: Exploration, c: Compile) -> str:
    """Where a graph break made this frame compile on its own ("" if none did): the
    frame is a resume function, or a function the break's user stack passes through."""
    if c.is_resume or resume_name(c.code_name) is not None:
        return "a graph break"
    for other in exp.compiles:
        # a break inside this very frame does not make it a frame of its own
        if other.rank != c.rank or other.compile_id.frame_id == c.compile_id.frame_id:
            continue
        for gb in other.graph_breaks:
            for loc in gb.user_stack:
                if loc.function == c.code_name and loc.filename == c.filename:
                    at = f" at {gb.location}" if gb.location else ""
                    return f"the graph break{at}"
    return ""


def _caused_by_break(r: Ranked, cause: str) -> Ranked:
    f = r.finding
    note = (
        f"\nThis frame is compiled on its own only because of {cause}; fixing the break "
        "puts it back into one graph and this recompile goes away."
    )
    return Ranked(replace(f, severity="info", suggestion=f.suggestion + note), r.score)


def _src(c: Compile) -> SrcKey | None:
    """The user line of the failing guard, from the user stack Dynamo appends."""
    at = reason_user_line(c.recompile_reasons[0].reason) if c.recompile_reasons else None
    return src_key(*at) if at else None


def _specialised(exp: Exploration) -> list[Ranked]:
    """``dynamic=True`` (asked for symbolic sizes) yet a size became a constant."""
    if exp.options is None or exp.options.dynamic is not True:
        return []
    out: list[Ranked] = []
    for c in exp.compiles:
        if c.guards is None:
            continue
        eqs = [g for g in c.guards.symbolic if is_size_pinned(g)]
        fixed = []
        for g in c.guards.guards:
            read = tensor_match_sizes(g.expr) if g.kind == "TENSOR_MATCH" else None
            if read is None:
                continue
            sizes = read[1]
            static = [(i, s) for i, s in enumerate(sizes) if s.isdigit() and s not in ("0", "1")]
            if static:
                fixed.append((read[0], static, g.origin))
        if not eqs or not fixed:
            continue
        name, static, origin = fixed[0]
        where = _origin_src(origin, exp, c)
        code = origin_code(origin)
        dims = ", ".join(f"dim {i} = {s}" for i, s in static)
        because = f", first read at `{code}`" if code else ""
        evidence = [
            Evidence(
                text=f"guard on `{name}`: {dims}; symbolic guards {', '.join(eqs)}",
                compile=key_of(c),
                stage=compile_pane("dynamo_cpp_guards_str"),
                src=where,
            )
        ]
        dim0 = static[0][0]
        out.append(
            finding(
                "dynamic.specialised",
                "warning",
                f"dynamic=True, but `{name}` was specialised to {dims}{because}",
                evidence,
                f"Python code used the size as a number ({', '.join(eqs)}): a comparison, "
                "`range(n)`, or an int passed on. That pins the size and every other size "
                "recompiles. Keep sizes in tensor ops (`x.new_ones(x.shape[0])`, "
                "`torch.arange(x.shape[0])`), or, if the size really is fixed, say so:\n"
                f"```python\ntorch._dynamo.mark_static({name}, {dim0})\n```",
                "one compile per distinct size",
                score=float(len(static)),
            )
        )
    return out


def _origin_src(origin: str, exp: Exploration, c: Compile) -> SrcKey | None:
    """``file:line`` for a guard's origin comment, whose path Dynamo shortens to its tail."""
    at = origin_line(origin or "")
    if at is None:
        return None
    tail, line = at
    files = {c.filename, *(loc.filename for cc in exp.compiles for loc in cc.stack)}
    for f in sorted(f for f in files if f):
        if f.endswith(tail):
            return src_key(f, line)
    return None


def _first(text: str | None) -> str:
    return (text or "").strip().split("\n", 1)[0]
