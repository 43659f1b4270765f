"""Recompiles: which guard failed, on which input, how often; the recompile limit; and
``dynamic=True`` compiles that specialised a size anyway."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from compiler.advise._common import Ranked, cause_key, finding, plural
from compiler.advise.findings import Evidence
from compiler.link.ids import SrcKey, compile_pane, key_of, src_key
from compiler.link.user_code import callers, is_own_code, library_of
from compiler.model import Compile, Exploration, Fix, RecompileReason
from compiler.parse.guards.recompiles import (
    FailedGuard,
    failed_guard,
    guard_source,
    guarded_value,
    hit_recompile_limit,
    is_size_pinned,
    optimizer_setting,
    origin_code,
    origin_line,
    reason_user_line,
    tensor_match_sizes,
)
from compiler.parse.resume_names import resume_name


def _cause(reason: RecompileReason) -> tuple[str, str, str]:
    """(input, what changed, a short label naming the kind of guard) for a failed guard."""
    g = failed_guard(reason.reason)
    first, name, what = g.text, g.input, g.what
    if g.tensor:
        dim = f" dim {g.dim}" if g.dim is not None else ""
        return name, what, f"a tensor's {what} (`{name}`{dim})"
    labels = {
        "grad mode": "grad mode (a call under torch.no_grad())",
        "autocast": f"autocast (`{g.changed}`: a call under torch.autocast)",
        "global state": "global state (`"
        + (g.changed or "grad mode, autocast, TF32 or threads") + "`)",
        "dict keys": f"a dict's keys (`{name}` with or without {g.changed})",
        "list length": f"a list's length (`len({name})`)",
        "object identity": f"an object's identity (`{name}` is a different object)",
        "type": f"an object's type (`{name}` has a different type)",
        "closure cell": f"a closure's cell (`{g.changed or name}`, guard `{first}`)",
        "training": f"a module switching between train() and eval() (`{first}`)",
        "global": f"a global (`{name}`, guard `{first}`)",
        "number attribute": f"an int or float attribute (`{name}`, guard `{first}`)",
        "attribute": f"the attribute `{name}` (guard `{first}`)",
        "value": f"the Python value `{name}` (guard `{first}`)",
    }
    inp = "" if what in ("grad mode", "autocast", "global state", "guard") else name
    return inp, what, labels.get(what, f"`{first[:80]}`")


def _suggest(input_name: str, what: str, dims: set[str], exp: Exploration | None) -> str:
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
    if what == "dict keys":
        return (
            f"`{name}` arrives with a different set of keys: Dynamo guards on which keys a "
            "dict has, so each key set compiles again. Always pass the same keys (an "
            "all-ones mask instead of no mask, a default tensor instead of a missing key)."
        )
    if what == "list length":
        return (
            f"`{name}` has a different length: Dynamo unrolls code over a list, so each "
            "length is its own graph. Stack the items into one tensor "
            f"(`torch.stack({name})`) or pad the list to a fixed length; if the list only "
            "grows as a record (a log of losses), append to it outside the compiled code."
        )
    if what == "object identity":
        return (
            f"A different `{name}` object arrives on each call, and Dynamo guards on the "
            "object itself. Create it once and pass the same object; to choose among a "
            "few, compile one function per choice."
        )
    if what == "type":
        return (
            f"`{name}` arrives with a different type, and each type is its own graph. "
            "Pass one type; to choose among a few, compile one function per choice."
        )
    if what == "closure cell":
        return (
            "The function reads a variable it closes over as a constant; a new value (a "
            "new closure each call) compiles again. Pass that value as an argument (a "
            "tensor if it changes), or make the closure once."
        )
    if what == "autocast":
        return (
            "The same function ran with and without autocast; each mode gets its own "
            "graph. Call it under one autocast setting, or put the `torch.autocast` "
            "context inside the compiled function."
        )
    if what == "device":
        return f"`{name}` arrives on different devices; move it to one device before the call."
    if what in ("attribute", "number attribute"):
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


_FrameKey = tuple[int | None, int | None, int | None]


@dataclass(frozen=True, slots=True)
class _Hit:
    """One recompile and the guard that failed: ``source`` is the guard's source
    expression normalised across frames (``guard_source``), the cause's identity."""

    compile: Compile
    reason: RecompileReason
    guard: FailedGuard
    source: str
    input: str
    what: str
    label: str

    @property
    def frame(self) -> _FrameKey:
        return _frame_key(self.compile)


def findings(exp: Exploration) -> list[Ranked]:
    """One finding per failing guard's source over every frame it recompiled (a size
    that changes is one finding with every tensor whose size changed, a decode loop
    included), the recompile limit under the same cause key as what kept changing, and
    ``dynamic=True`` compiles that specialised a size."""
    hits = [_hit(c) for c in exp.compiles if c.is_recompile and c.recompile_reasons]
    frames: dict[_FrameKey, list[Compile]] = {}
    for c in exp.compiles:  # by frame id: a compile that failed may carry no code name
        frames.setdefault(_frame_key(c), []).append(c)
    split = {key: _split_off_by_break(exp, cs[0]) for key, cs in frames.items()}
    out: list[Ranked] = []
    keys: dict[int, str] = {}  # id(compile) -> cause key of its recompile
    advice: dict[str, str] = {}  # cause key -> suggestion, for the limit's finding
    for group in _size_groups([h for h in hits if h.what == "size"]):
        out.append(_size_finding(exp, group, split))
        _remember(out[-1], group, keys, advice)
    by_source: dict[tuple[str, str], list[_Hit]] = {}
    for h in hits:
        if h.what != "size":
            # a list argument's items and its length are one thing the caller passes
            what = "value" if h.what in _ONE_ARGUMENT else h.what
            by_source.setdefault((what, h.source), []).append(h)
    for group in by_source.values():
        out.append(_guard_finding(exp, group, split))
        _remember(out[-1], group, keys, advice)
    for cs in frames.values():
        limit = _limit(exp, cs, hits, keys, advice)
        if limit is not None:
            out.append(limit)
    out.extend(_specialised(exp))
    return out


_ONE_ARGUMENT = ("value", "list length")


def _hit(c: Compile) -> _Hit:
    # the first reason is against the newest cache entry: the guard that just failed
    reason = c.recompile_reasons[0]
    guard = failed_guard(reason.reason)
    inp, what, label = _cause(reason)
    return _Hit(c, reason, guard, guard_source(guard, reason.source), inp, what, label)


def _remember(r: Ranked, group: list[_Hit], keys: dict[int, str], advice: dict[str, str]) -> None:
    for h in group:
        keys[id(h.compile)] = r.finding.cause
    advice[r.finding.cause] = r.finding.suggestion


def _size_groups(hits: list[_Hit]) -> list[list[_Hit]]:
    """Size recompiles that are one cause: joined when they share a frame (a decode loop
    grows the input, then the KV cache, of one forward), a tensor's source, or the very
    sizes (``expected 5, actual 6``: one length reaching every frame it flows through)."""
    parent = list(range(len(hits)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    seen: dict[object, int] = {}
    for i, h in enumerate(hits):
        for tag in (("frame", h.frame), ("source", h.source), ("sizes", h.guard.changes)):
            if tag[0] == "sizes" and not h.guard.changes:
                continue
            if tag in seen:
                parent[root(i)] = root(seen[tag])
            else:
                seen[tag] = i
    groups: dict[int, list[_Hit]] = {}
    for i, h in enumerate(hits):
        groups.setdefault(root(i), []).append(h)
    return list(groups.values())


def _evidence(group: list[_Hit], shown: int = 6) -> list[Evidence]:
    return [
        Evidence(
            text=f"recompile {h.compile.compile_id} `{h.compile.code_name}`: {h.guard.text}",
            compile=key_of(h.compile),
            stage=compile_pane("recompile_reasons"),
            src=_src(h.compile),
        )
        for h in group[:shown]
    ]


def _frames_of(group: list[_Hit]) -> list[str]:
    return list(dict.fromkeys(f"`{h.compile.code_name or '?'}`" for h in group))


def _all_split(group: list[_Hit], split: dict[_FrameKey, str]) -> str:
    """The break that split off every frame of ``group`` ("" unless all were)."""
    causes = {split.get(h.frame, "") for h in group}
    return causes.pop() if len(causes) == 1 else ("a graph break" if all(causes) else "")


def _size_finding(exp: Exploration, group: list[_Hit], split: dict[_FrameKey, str]) -> Ranked:
    tensors: dict[str, list[str]] = {}
    for h in group:
        changes = ", ".join(f"{e} -> {a}" for e, a in h.guard.changes)
        dim = f" dim {h.guard.dim}" if h.guard.dim is not None else ""
        tensors.setdefault(f"`{h.input}`{dim}", []).append(changes)
    listed = [f"{name} ({', '.join(dict.fromkeys(c for c in ch if c))})".replace(" ()", "")
              for name, ch in tensors.items()]  # fmt: skip
    frames = _frames_of(group)
    others = f" and {plural(len(frames) - 1, 'other frame')}" if len(frames) > 1 else ""
    where = frames[0] + others
    decode = _decode_loop(group)
    title = (
        f"A decode loop recompiled {where} {plural(len(group), 'time')} as the sequence "
        f"grew: {', '.join(listed[:4])}"
        if decode
        else f"{where} recompiled {plural(len(group), 'time')} because sizes changed: "
        f"{', '.join(listed[:4])}"
    )
    suggestion = _decode_advice(group) if decode else _size_advice(group)
    sources = sorted({h.source for h in group})
    r = finding(
        "recompile.size",
        "warning",
        title,
        _evidence(group),
        suggestion,
        f"{plural(len(group), 'extra compile')} in {plural(len(frames), 'frame')}: "
        + ", ".join(frames[:6]),
        score=float(len(group)),
        # the explorer can compile the target again with every size dynamic
        fix=Fix(kind="dynamic", code="torch.compile(fn, dynamic=True)"),
        cause=cause_key("recompile", "size", *sources),
    )
    cause = _all_split(group, split)
    return _caused_by_break(r, cause) if cause else r


def _decode_loop(group: list[_Hit]) -> bool:
    """A generation loop with a KV cache: a tensor that changed size is the cache's."""
    return any(w in h.guard.text for h in group for w in ("cache", "past_key_values"))


def _reachable(h: _Hit) -> bool:
    """Whether the user passes this tensor in themselves: an argument (not an attribute
    or an element of something) of a frame of their own code, or of the frame their own
    code calls (a compiled module's forward); not ``kwargs['cache'].layers[0].keys`` that
    ``generate()`` makes and passes inside the library."""
    if not (h.source.isidentifier() or h.source.startswith("args[")):
        return False
    if is_own_code(h.compile.filename or ""):
        return True
    # the nearest caller below the compiled frame that is not torch's own (module calls):
    # the user's code, or the explorer calling with the user's inputs; not a library
    for loc in reversed(callers(h.compile)):
        lib = library_of(loc.filename) if loc.filename else ("torch", "")
        if lib is not None and lib[0] == "torch":
            continue
        return lib is None or lib[0] in ("compiler", "explorer")
    return False


def _size_advice(group: list[_Hit]) -> str:
    dims: dict[str, set[str]] = {}
    # the user's own names first: a wrapper's positional ``args[0]`` only where none is
    for h in sorted(group, key=lambda h: h.source.startswith("args[")):
        if _reachable(h) and not (h.source.startswith("args[") and dims):
            dims.setdefault(h.source, set()).add(h.guard.dim or "0")
    if not dims:
        return (
            "The sizes that change belong to tensors made inside code you call, not to "
            "inputs you pass, so mark every size dynamic on your `torch.compile` call, "
            "which compiles one dynamic graph instead of a specialised one first:\n"
            "```python\ntorch.compile(fn, dynamic=True)\n```\n"
            "If only a few sizes occur and each should get its own tuned code, this is "
            "expected; pad to a few bucket sizes to bound the compiles."
        )
    name = next(iter(dims))
    text = _suggest(name, "size", dims[name], None)
    marks = [f"torch._dynamo.mark_dynamic({n}, {d})" for n, ds in dims.items() for d in sorted(ds)]
    if len(marks) > 1:
        text = text.replace(f"torch._dynamo.mark_dynamic({name}, ", "\n".join(marks[1:]) + "\n"
                            + f"torch._dynamo.mark_dynamic({name}, ", 1)  # fmt: skip
    if len(_frames_of(group)) > 1:
        text += (
            "\nThe same size reaches every frame listed; marking it dynamic where it "
            "enters (your input) makes all of them dynamic."
        )
    return text


def _decode_advice(group: list[_Hit]) -> str:
    """A decode loop: the library's static cache, or dynamic sizes on the user's compile;
    never ``mark_dynamic`` on tensors the library makes inside ``generate()``."""
    return (
        "Each generated token grows the sequence and the KV cache, so the compiled forward "
        "sees new sizes (the prompt, then one token at a time against a longer cache). "
        "Give the cache one shape with transformers' static cache, which preallocates it "
        "to the maximum length:\n"
        "```python\nout = model.generate(input_ids, max_new_tokens=64, "
        'cache_implementation="static")\n```\n'
        "or compile the forward with dynamic sizes up front, so every length shares one "
        "graph:\n```python\nmodel.forward = torch.compile(model.forward, dynamic=True)\n```\n"
        "Either way the prompt and the one-token steps may still compile once each."
    )


def _guard_finding(exp: Exploration, group: list[_Hit], split: dict[_FrameKey, str]) -> Ranked:
    first = group[0]
    frames = _frames_of(group)
    where = frames[0] + (f" (and {', '.join(frames[1:4])})" if len(frames) > 1 else "")
    setting = optimizer_setting(first.source)
    suggestion = (
        _optimizer_advice(setting, guarded_value(first.guard))
        if setting
        else _suggest(first.input, first.what, set(), exp)
    )
    r = finding(
        f"recompile.{first.what.replace(' ', '_')}",
        "info" if first.what in ("training", "grad mode", "autocast") else "warning",
        f"{where} recompiled {plural(len(group), 'time')} because "
        + (
            f"the optimizer's `{setting}` changed (`{first.source.lstrip('.')}`, a Python "
            "number the step reads as a constant)"
            if setting
            else f"of {first.label}"
        ),
        _evidence(group, 3),
        suggestion,
        f"{plural(len(group), 'extra compile')}",
        score=float(len(group)),
        cause=cause_key(
            "recompile", "value" if first.what in _ONE_ARGUMENT else first.what, first.source
        ),
    )
    cause = _all_split(group, split)
    return _caused_by_break(r, cause) if cause and r.finding.severity == "warning" else r


def _optimizer_advice(setting: str, value: str) -> str:
    """A float in an optimizer's ``param_groups`` that a scheduler changes every step:
    torch's compiled-optimizer-with-LR-scheduler tutorial passes it as a tensor."""
    if setting != "lr":
        return (
            f"The optimizer's `{setting}` is a Python number the compiled step reads as a "
            "constant, so each new value compiles the step again. Keep it fixed while the "
            "compiled step runs, or pass it as a tensor where the optimizer accepts one."
        )
    lr = value if value and value[0].isdigit() else "0.01"
    return (
        "The learning rate is a Python float that the compiled `step` reads as a constant, "
        "and the LR scheduler changes it every step: each new value compiles the step "
        "again, until the recompile limit, after which it runs eagerly. Pass the learning "
        "rate as a tensor; the scheduler then updates it in place and the step compiles "
        "once:\n"
        f"```python\nopt = torch.optim.AdamW(params, lr=torch.tensor({lr}))   # any optimizer\n"
        "sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda)   # unchanged\n```"
    )


def _limit(
    exp: Exploration,
    cs: list[Compile],
    hits: list[_Hit],
    keys: dict[int, str],
    advice: dict[str, str],
) -> Ranked | None:
    """The recompile limit of one frame, under the cause key of what kept changing there,
    so it and that cause's finding are one finding (the limit its head)."""
    limit = [c for c in cs if hit_recompile_limit(c.metrics.fail_reason or "")]
    if not limit:
        return None
    c = limit[0]
    code_name = next((x.code_name for x in cs if x.code_name), "?")
    mine = [h for h in hits if h.frame == _frame_key(c)]
    top = Counter(keys[id(h.compile)] for h in mine).most_common(1)
    cause = top[0][0] if top else cause_key("recompile", "limit", code_name)
    labels = [h for h in mine if keys[id(h.compile)] == cause]
    why = ""
    if labels:
        h = labels[0]
        why = f"; what kept changing: {h.what} of `{h.input}`" if h.input else ""
        why = why or f"; {h.what} kept changing"
    n = len([x for x in cs if x.status != "failed"])
    evidence = [
        Evidence(
            text=f"compile {c.compile_id} gave up: {_first(c.metrics.fail_reason)}",
            compile=key_of(c),
            stage=compile_pane("compilation_metrics"),
        ),
        *_evidence(mine, 2),
    ]
    suggestion = advice.get(cause) or _suggest("", "", set(), exp)
    return finding(
        "recompile.limit",
        "problem",
        f"`{code_name}` hit the recompile limit after {plural(n, 'compile')}: "
        f"later calls run without compiling{why}",
        evidence,
        suggestion + "\nOnly if this many variants are really needed: "
        "`torch._dynamo.config.recompile_limit = 16`.",
        f"{plural(n, 'compile')}, then eager for every new variant",
        score=float(n + 100),
        cause=cause,
    )


def _frame_key(c: Compile) -> _FrameKey:
    return (c.rank, c.compile_id.compiled_autograd_id, c.compile_id.frame_id)


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
