"""A backend compiler that failed and let the frame run eagerly.

When Inductor (or another backend) raises one of the errors torch allows to fall back
(a fake tensor could not run an op: ``DataDependentOutputException`` on
``aten._local_scalar_dense`` and the like), Dynamo records two texts per compile: the
traceback (``WON'T CONVERT ...``, the failing op and the code that called it) and a
"Backend compiler exception" break (registry GB0219). One finding tells every compile
that failed the same way: which op, called from which function of which library (or of
the user's code), and what to try.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.advise._common import Ranked, cause_key, finding, plural
from compiler.advise.breaks.registry import Entry
from compiler.advise.findings import Evidence
from compiler.link.ids import compile_pane, key_of, loc_key, short_path
from compiler.link.user_code import is_user_file, library_of, owner_of
from compiler.model import Compile, GraphBreak, SourceLoc
from compiler.parse.words.breaks import Failure, failure_of

BACKEND_EXCEPTION = "GB0219"  # "Backend compiler exception"


@dataclass(frozen=True, slots=True)
class _Failed:
    compile: Compile
    backend: str
    exception: str
    op: str
    origin: SourceLoc | None
    stage: str  # "AOTAutograd", "Inductor" or "": the stage whose code raised


# the stages of the ladder, by where their code lives inside torch, innermost checked first
_STAGES = (("/_functorch/_aot_autograd/", "AOTAutograd"), ("/_inductor/", "Inductor"))


def is_failure(gb: GraphBreak, entry: Entry | None) -> bool:
    """Whether ``gb`` records a backend failure (either of its two texts)."""
    if entry is not None:
        return entry.gb_id == BACKEND_EXCEPTION
    return failure_of(gb.reason, gb.text) is not None


def findings(failed: list[tuple[Compile, GraphBreak]]) -> list[Ranked]:
    """One finding per (failing op, function it was called from), over every compile
    whose backend failed that way; ``failed``: each compile's failure records."""
    per_compile: dict[int, list[Failure]] = {}
    compiles: dict[int, Compile] = {}
    for c, gb in failed:
        f = failure_of(gb.reason, gb.text)
        if f is not None:
            per_compile.setdefault(id(c), []).append(f)
            compiles[id(c)] = c
    groups: dict[tuple[str, str], list[_Failed]] = {}
    for key, records in per_compile.items():
        one = _merge(compiles[key], records)
        where = _label(one.origin)
        groups.setdefault((one.op or one.exception, where), []).append(one)
    return [_finding(op, where, hits) for (op, where), hits in groups.items()]


def _merge(c: Compile, records: list[Failure]) -> _Failed:
    """A compile's failure from its records: the break names the backend, the
    traceback the exception and the code that ran the op."""
    origin = None
    stage = ""
    for r in records:
        for file, _, _ in reversed(r.stack):
            path = file.replace("\\", "/")
            stage = next((name for part, name in _STAGES if part in path), "")
            if stage:
                break
        if stage:
            break
    for r in records:
        for file, line, fn in reversed(r.stack):  # innermost first
            lib = library_of(file)
            if (lib is not None and lib[0] != "torch") or is_user_file(file):
                origin = SourceLoc(filename=file, line=line, function=fn)
                break
        if origin is not None:
            break
    return _Failed(
        compile=c,
        backend=next((r.backend for r in records if r.backend), ""),
        exception=next((r.exception for r in records if r.exception), ""),
        op=next((r.op for r in records if r.op), ""),
        origin=origin,
        stage=stage,
    )


def _label(loc: SourceLoc | None) -> str:
    """``transformers/integrations/moe.py:grouped_mm_experts_forward``: the function,
    stable across the frames and compiles that failed in it."""
    if loc is None:
        return ""
    lib = library_of(loc.filename)
    return f"{lib[1] if lib else short_path(loc.filename)}:{loc.function}"


def _finding(op: str, where: str, hits: list[_Failed]) -> Ranked:
    first = hits[0]
    backend = first.backend or "the backend"
    origin = first.origin
    owner = owner_of(origin.filename)[0] if origin is not None else "user"
    names = list(dict.fromkeys(h.compile.code_name for h in hits))
    what = f"`{op}`" if op else (first.exception or "an op")
    at = ""
    if origin is not None:
        lib = library_of(origin.filename)
        path = lib[1] if lib else short_path(origin.filename)
        at = f" called in `{origin.function}` ({path}:{origin.line})"
    title = f"{backend.capitalize()} failed on {what}{at}; the frame runs eagerly"
    if not first.backend and not first.stage:
        # a traceback torch logged for a frame it gave up on, with no backend in it
        name = first.compile.code_name
        title = f"torch.compile gave up on `{name}` ({what}{at}); it runs eagerly"
    evidence = [
        Evidence(
            text=f"{h.compile.compile_id} `{h.compile.code_name}`: {backend} raised "
            f"{h.exception or 'an error'}{f' on {op}' if op else ''} and fell back to eager",
            compile=key_of(h.compile),
            stage=compile_pane("dynamo_graph_break_reason"),
        )
        for h in hits[:6]
    ]
    if origin is not None:
        evidence.append(
            Evidence(
                text=f"the op is run by {short_path(origin.filename)}:{origin.line} in "
                f"`{origin.function}`",
                src=loc_key(origin),
            )
        )
    impact = (
        f"{plural(len(hits), 'compile')} of {plural(len(names), 'frame')} "
        f"({', '.join(f'`{n}`' for n in names[:6])}) ran eagerly, with no compiled code"
    )
    return finding(
        "backend_failure",
        "problem",
        title,
        evidence,
        _suggestion(op, first, owner),
        impact,
        score=float(len(hits)) * 2,
        fix=None,
        cause=cause_key("backend", op or first.exception, where),
    )


def _suggestion(op: str, first: _Failed, owner: str) -> str:
    origin, exception = first.origin, first.exception
    parts = []
    if "_local_scalar_dense" in op:
        parts.append(
            "The code that runs it reads a tensor's value into Python (`.item()`, `float(t)`, a "
            "data-dependent size) while the backend traces with fake tensors, which have "
            "no values. Where the value only feeds tensor math (no Python `if` on it), "
            "`torch._dynamo.config.capture_scalar_outputs = True` keeps it symbolic; "
            "where Python decides on it, compute the decision with tensor ops "
            "(`torch.where`) or keep that code out of the compiled region."
        )
    elif exception:
        parts.append(f"The backend raised {exception} while tracing the graph.")
    if first.stage == "AOTAutograd":
        parts.append(
            "torch's traceback shows AOTAutograd's code raising it: `aot_eager` fails the "
            'same way, and `backend="eager"` (Dynamo only) is the rung that runs compiled.'
        )
    elif first.stage == "Inductor":
        parts.append(
            "torch's traceback shows Inductor's code raising it: try "
            '`backend="aot_eager_decomp_partition"` first, the rung just below Inductor.'
        )
    if owner == "transformers" and origin is not None and "expert" in (
        f"{origin.filename} {origin.function}".lower()
    ):
        parts.append(
            "transformers chooses how its MoE experts run: the grouped-mm kernel fails "
            "here; its other implementations use ops the backends compile:\n"
            "```python\n"
            'model.set_experts_implementation("batched_mm")   # or "eager"\n'
            'model = AutoModelForCausalLM.from_pretrained(..., experts_implementation="eager")\n'
            "```"
        )
    elif owner not in ("user", "torch") and origin is not None:
        parts.append(
            f"The op comes from {owner}'s `{origin.function}`, not your code: look for "
            f"{owner}'s own switch for that code path, or compile around it "
            "(`torch.compiler.disable` on your function that calls it)."
        )
    parts.append(
        "Find which stage fails by stepping up the backends, each adding one stage:\n"
        "```python\n"
        'torch.compile(fn, backend="eager")                       # Dynamo capture only\n'
        'torch.compile(fn, backend="aot_eager")                   # + AOTAutograd\n'
        'torch.compile(fn, backend="aot_eager_decomp_partition")  # + decompositions, partitioner\n'
        "torch.compile(fn)                                        # + Inductor\n"
        "```\n"
        "The highest rung that passes is a working setting meanwhile. The first rung that "
        "fails is what to report to pytorch/pytorch, with "
        '`TORCHDYNAMO_REPRO_AFTER="aot"` to write a minified reproducer.'
    )
    return "\n".join(parts)
