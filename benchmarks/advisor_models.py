"""The advisor on real models built from library configs (no weights), scored against
diagnoses written from torch's own facts.

    python benchmarks/advisor_models.py            # explore each program, try the fixes
    python benchmarks/advisor_models.py --no-try   # without trying fixes (faster)
    python benchmarks/advisor_models.py --facts    # torch's facts only: plain torch.compile
                                                   # with Dynamo's counters (run it with
                                                   # TORCH_LOGS=graph_breaks,recompiles)
    python benchmarks/advisor_models.py NAME ...   # some programs only
    python benchmarks/advisor_models.py --corpus [--try] [NAME ...]
                                                   # the public corpus's models, judged
                                                   # against the corpus's own labels

The programs are in ``benchmarks/advisor_model_programs.py``; the GPU ones are recordings
made on an H100 by ``scripts/record_advisor_models_gpu.py`` (``tests/advisor_corpus/
recordings/advisor_model_*.json``) and replay here. For each program it prints the expected
diagnosis (and the torch fact it comes from), the findings (severity, kind, title), whether
the expected cause is the first finding, any cause reported twice, and the tried fix's
before/after; then precision and recall per finding kind. A finding counts when it is a
problem or a warning, or when the program expects its kind (an expected note).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

RECORDINGS = ROOT / "tests" / "advisor_corpus" / "recordings"


@dataclass(frozen=True)
class Expect:
    """What torch says is wrong: the finding kinds expected, the first one first; () for a
    clean program (nothing may be flagged). ``fact`` is torch's own record of it."""

    kinds: tuple[str, ...]
    fact: str


# Written from `TORCH_LOGS=graph_breaks,recompiles python benchmarks/advisor_models.py
# --facts` on torch 2.13 CPU (2026-11-25), and for gpu_* from the facts file the recording
# script writes (advisor_models_gpu_facts.json), never from the advisor's output.
EXPECTED: dict[str, Expect] = {
    "gpt2_train_step": Expect(
        ("graph_break.logging", "graph_break.backward"),
        "Graph break in user code at transformers/modeling_utils.py:4778 (logging.Logger "
        "method, warning_once about loss_type) in frames 0/0-4/0; 'Unsupported "
        "Tensor.backward() call' at the step's backward line",
    ),
    "gpt2_train_compiled_model": Expect(
        ("graph_break.logging",),
        "Graph break at transformers/modeling_utils.py:4778 (logging.Logger method) in "
        "frames 0/0-3/0",
    ),
    "gpt2_seq_lengths": Expect(
        ("recompile.size",),
        "Recompiling function wrapper: tensor 'args[0]' size mismatch at index 1. "
        "expected 16, actual 24",
    ),
    "gpt2_train_seq_lengths": Expect(
        ("graph_break.logging", "recompile.size"),
        "the logging.Logger break at modeling_utils.py:4778 in 4 frames, and at seq 24 "
        "'Recompiling function' wrapper, wrapped_func, forward, ForCausalLMLoss, __init__: "
        "each 'size mismatch at index 1. expected 16, actual 24'",
    ),
    "gpt2_generate_step": Expect(
        ("graph_break.scalar_branch",),
        "Graph break from Tensor.item() (capture_scalar_outputs=False) at the "
        "`if nxt.item() == 511` line",
    ),
    "gpt2_greedy_loop": Expect(
        ("recompile.size",),
        "Recompiling function wrapper: tensor 'args[0]' size mismatch at index 1. expected "
        "8, actual 9 (then dynamic: no further recompile over 4 steps)",
    ),
    "gpt2_checkpointed_train": Expect(
        ("graph_break.logging",),
        "two logging.Logger breaks: transformers/utils/generic.py:1144 (warning_once: "
        "use_cache=True is incompatible with gradient checkpointing) in frames 0/0-3/0, "
        "and modeling_utils.py:4778 (loss_type) in frames 5/0-6/0",
    ),
    "resnet_eval_then_train": Expect(
        ("recompile.grad_mode",),
        "Recompiling function forward: GLOBAL_STATE changed: grad_mode (one recompile, "
        "expected when the same model runs under no_grad and in training)",
    ),
    "gpu_resnet18_grad_ro": Expect(
        ("gpu.slower_than_eager",),
        "H100 facts: eager 4.61 ms, compiled 10.3 ms median (mean 12.9, 1.38-36.7) under "
        "reduce-overhead with grad enabled, 28 'Recording function' lines; the same compile "
        "under torch.no_grad() 0.87 ms",
    ),
    "gpu_gpt2_train_step": Expect(
        ("graph_break.logging", "graph_break.backward"),
        "H100 facts: the logging.Logger break (warning_once about loss_type; transformers "
        "there has it at modeling_utils.py:4635), then Tensor.backward()",
    ),
}
CLEAN_FACT = "no graph break, no recompile, one graph (Dynamo's counters)"
for _name in (
    "llama_inference",
    "llama_train_compiled_model",
    "t5_inference",
    "bert_inference",
    "bert_mlm_train_compiled_model",
    "bert_autocast_inference",
    "vit_inference",
    "resnet_train_step",
    "gpu_resnet18_nograd_ro",
):
    EXPECTED[_name] = Expect((), CLEAN_FACT)


def _facts(names: list[str]) -> None:
    import torch
    from advisor_model_programs import PROGRAMS
    from torch._dynamo.utils import counters

    for name in names:
        b = PROGRAMS[name]()
        torch.compiler.reset()
        counters.clear()
        run = torch.compile(b.target, **b.compile_kwargs) if b.wrap else b.target
        run(*b.inputs)
        breaks = {k.split("\n")[0]: v for k, v in counters["graph_break"].items()}
        print(f"== {name}: graph breaks {breaks}, unique graphs "
              f"{counters['stats']['unique_graphs']}", flush=True)  # fmt: skip


def _explore(name: str, try_fix: bool):  # -> (Exploration, seconds)
    from advisor_model_programs import PROGRAMS

    import compiler
    from compiler.remedy.tried import try_fixes

    if name.startswith("gpu_"):
        path = RECORDINGS / f"advisor_model_{name[4:]}.json"
        if not path.exists():
            return None, 0.0
        return compiler.Exploration.from_json(path.read_text()), 0.0
    b = PROGRAMS[name]()
    t0 = time.perf_counter()
    exp = compiler.explore(b.target, *b.inputs, wrap=b.wrap, **b.compile_kwargs)
    if try_fix:
        exp = try_fixes(exp, b.target, *b.inputs, runs=5)
    return exp, time.perf_counter() - t0


def _counted(findings, expect: Expect) -> list[str]:
    return [
        f.kind for f in findings if f.severity in ("problem", "warning") or f.kind in expect.kinds
    ]


def main() -> None:
    from advisor_model_programs import PROGRAMS

    from compiler.advise.findings import tried_summary

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--facts", action="store_true")
    parser.add_argument("--no-try", action="store_true")
    parser.add_argument("--corpus", action="store_true")
    parser.add_argument("--try", dest="try_", action="store_true")
    args = parser.parse_args()
    if args.corpus:
        from advisor_corpus_run import run_corpus

        run_corpus(args.names, args.try_)
        return
    names = args.names or [*PROGRAMS, *(n for n in EXPECTED if n.startswith("gpu_"))]
    if args.facts:
        _facts([n for n in names if n in PROGRAMS])
        return
    import torch

    print(f"torch {torch.__version__}, CPU programs with aot_eager; GPU programs replayed")
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    fn: Counter[str] = Counter()
    first_ok = twice = clean_ok = clean = programs = 0
    rows = []
    for name in names:
        expect = EXPECTED[name]
        exp, seconds = _explore(name, not args.no_try)
        if exp is None:
            print(f"\n# {name}: no recording yet (scripts/record_advisor_models_gpu.py)")
            continue
        programs += 1
        findings = exp.findings()
        counted = _counted(findings, expect)
        keys = Counter((f.kind, f.title) for f in findings)
        dupes = [k for k, n in keys.items() if n > 1]
        first = counted[0] if counted else "(none)"
        ok = first == expect.kinds[0] if expect.kinds else not counted
        first_ok += ok
        twice += bool(dupes)
        if not expect.kinds:
            clean += 1
            clean_ok += not counted
        for kind in set(counted) | set(expect.kinds):
            if kind in counted and kind in expect.kinds:
                tp[kind] += 1
            elif kind in counted:
                fp[kind] += 1
            else:
                fn[kind] += 1
        print(f"\n# {name} ({len(exp.compiles)} compiles, {seconds:.1f} s)")
        print(f"  expected: {', '.join(expect.kinds) or 'nothing flagged'}  [{expect.fact}]")
        for f in findings:
            print(f"  found: {f.severity}:{f.kind}: {f.title}")
            if f.impact:
                print(f"         impact: {f.impact}")
            if f.tried:
                print(f"         {tried_summary(f)}")
        print(f"  first finding is the known cause: {'yes' if ok else 'NO'}"
              + (f"; reported twice: {dupes}" if dupes else ""))  # fmt: skip
        tried = next((tried_summary(f) for f in findings if f.tried), "")
        rows.append(
            (name, ", ".join(expect.kinds) or "clean", ", ".join(counted) or "clean", tried)
        )
    print("\n| program | expected | found (problems, warnings, expected notes) | fix tried |")
    print("|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(f"\nprograms: {programs}; known cause first: {first_ok}/{programs}; "
          f"a cause reported twice: {twice}; clean programs with nothing flagged: "
          f"{clean_ok}/{clean}")  # fmt: skip
    print("\n| finding kind | precision | recall | tp | fp | fn |\n|---|---|---|---|---|---|")
    for kind in sorted(set(tp) | set(fp) | set(fn)):
        p = tp[kind] / (tp[kind] + fp[kind]) if tp[kind] + fp[kind] else float("nan")
        r = tp[kind] / (tp[kind] + fn[kind]) if tp[kind] + fn[kind] else float("nan")
        print(f"| {kind} | {p:.2f} | {r:.2f} | {tp[kind]} | {fp[kind]} | {fn[kind]} |")


if __name__ == "__main__":
    main()
