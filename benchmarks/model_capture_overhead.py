"""Capture overhead on real models on the CPU, and where it goes.

Two models built from transformers configs (no weights): BERT inference and a GPT-2
training step (forward, loss, backward, AdamW), 2 layers by default; a third, T5
inference (encoder and decoder), with ``--models t5_inference``. ``cold_model_capture.py``
times the same models in fresh processes with empty caches. In one process,
with Inductor's C++ kernels already built by an untimed warm-up (so compile time is
Dynamo, AOTAutograd and Inductor's Python work, where capture's cost shows most), each
repeat times, in rotating order:

- baseline: plain ``torch.compile`` (FX graph and AOTAutograd caches off, as explore
  turns them off), compile plus first call;
- explore: ``compiler.explore`` with its defaults;
- explore, previous path: explore as it was before capture formatted the fusion IR
  once and deferred decompiling (the fusion IR speed-up turned off, and the decompiled
  source read inside the timed region, which is when it used to be made).

Medians are compared, of wall time and of the process's CPU time (``process_time``, all
threads): on a shared machine the CPU time is the steadier of the two, since waiting for
a core does not count. Then, from the explore runs, the median seconds spent in each part
of capture (``capture_parts.py``): their sum against explore - baseline says how much of
the overhead the parts explain. Read ratios measured in one run, not absolute seconds.

With ``--fusion-ir``, instead: one explore per model, in which every node list Inductor
logs is formatted twice, as capture formats it and by torch alone, taking turns at going
first (the second finds sympy's caches warm); the texts must be equal, and the seconds
of each are printed.

Run: ``python benchmarks/model_capture_overhead.py [--repeats 5] [--layers 2]
[--models bert_inference gpt2_training t5_inference] [--fusion-ir]``
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch
import torch._functorch.config as functorch_config
import torch._inductor.config as inductor_config
from capture_parts import PARTS, timed_parts

import compiler
from compiler import _compat

TARGET = 1.10
SIDES = ("baseline", "explore", "previous")
Built = tuple[Callable[..., Any], tuple[Any, ...], bool]


def _bert(layers: int) -> Built:
    from transformers import BertConfig, BertModel

    config = BertConfig(num_hidden_layers=layers)
    model = BertModel(config).eval()
    return model, (torch.randint(0, config.vocab_size, (2, 64)),), True


def _gpt2(layers: int, width: int | None = None) -> Built:
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    narrow = {"n_embd": width, "n_head": 2} if width else {}  # 2 heads divide any even width
    config = GPT2Config(n_layer=layers, **narrow)
    model = GPT2LMHeadModel(config).train()
    compiled = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, config.vocab_size, (2, 64))

    def step() -> None:
        opt.zero_grad()
        compiled(input_ids=ids, labels=ids).loss.backward()
        opt.step()

    return step, (), False


def _t5(layers: int) -> Built:
    from transformers import T5Config, T5ForConditionalGeneration

    config = T5Config(num_layers=layers, num_decoder_layers=layers)
    model = T5ForConditionalGeneration(config).eval()
    ids = torch.randint(0, config.vocab_size, (2, 64))

    def forward(input_ids: torch.Tensor, decoder_input_ids: torch.Tensor) -> Any:
        return model(input_ids=input_ids, decoder_input_ids=decoder_input_ids)

    return forward, (ids, ids[:, :16]), True


MODELS: dict[str, Callable[[int], Built]] = {
    "bert_inference": _bert,
    "gpt2_training": _gpt2,
    "t5_inference": _t5,
}


@contextlib.contextmanager
def _previous_fusion_ir() -> Iterator[bool]:
    yield False


Seconds = tuple[float, float]  # wall, CPU


def _clock() -> Seconds:
    return time.perf_counter(), time.process_time()


def _since(start: Seconds) -> Seconds:
    wall, cpu = _clock()
    return wall - start[0], cpu - start[1]


def _baseline(target: Callable[..., Any], inputs: tuple[Any, ...], wrap: bool) -> Seconds:
    torch.compiler.reset()
    gc.collect()
    with (
        inductor_config.patch(fx_graph_cache=False),
        functorch_config.patch(enable_autograd_cache=False),
    ):
        start = _clock()
        (torch.compile(target) if wrap else target)(*inputs)
        return _since(start)


def _explore(
    target: Callable[..., Any], inputs: tuple[Any, ...], wrap: bool, *, previous: bool = False
) -> Seconds:
    torch.compiler.reset()
    gc.collect()
    faster = _compat.fusion_ir_formatted_once
    if previous:
        _compat.fusion_ir_formatted_once = _previous_fusion_ir
    try:
        start = _clock()
        exp = compiler.explore(target, *inputs, wrap=wrap, reset=False)
        if previous:
            for c in exp.compiles:
                _ = c.bytecode.decompiled if c.bytecode else None
        return _since(start)
    finally:
        _compat.fusion_ir_formatted_once = faster


def _run(
    name: str, layers: int, repeats: int
) -> tuple[dict[str, list[Seconds]], list[dict[str, float]]]:
    target, inputs, wrap = MODELS[name](layers)
    grad = torch.no_grad() if wrap else torch.enable_grad()
    times: dict[str, list[Seconds]] = {"baseline": [], "explore": [], "previous": []}
    parts: list[dict[str, float]] = []
    sides: list[tuple[str, Callable[[], Seconds]]] = [
        ("baseline", lambda: _baseline(target, inputs, wrap)),
        ("explore", lambda: _explore(target, inputs, wrap)),
        ("previous", lambda: _explore(target, inputs, wrap, previous=True)),
    ]
    with grad:
        _explore(target, inputs, wrap)  # untimed: builds the C++ kernels, imports all
        _baseline(target, inputs, wrap)
        for r in range(repeats):
            for side, timed in sides[r % 3 :] + sides[: r % 3]:  # rotate: drift hits all
                if side == "explore":
                    with timed_parts() as seconds:
                        times[side].append(timed())
                    parts.append(dict(seconds))
                else:
                    times[side].append(timed())
    return times, parts


def _fusion_ir_both_ways(name: str, layers: int) -> tuple[float, float, int, int]:
    """(torch's seconds, capture's seconds, node lists, how many came out equal)."""
    from torch._inductor.debug import DebugFormatter

    raw = DebugFormatter.__dict__["_write_ir"]
    torch_write = raw.__func__ if isinstance(raw, staticmethod) else raw
    seconds = {"torch": 0.0, "capture": 0.0}
    counts = {"lists": 0, "equal": 0}
    faster = _compat.fusion_ir_formatted_once

    @contextlib.contextmanager
    def both_ways() -> Iterator[bool]:
        with faster() as active:
            ours = DebugFormatter.__dict__["_write_ir"]
            capture_write = ours.__func__ if isinstance(ours, staticmethod) else ours

            def write(nodes: Any) -> str:
                texts = {}
                ways = [("capture", capture_write), ("torch", torch_write)]
                for way, fn in ways[counts["lists"] % 2 :] + ways[: counts["lists"] % 2]:
                    start = time.perf_counter()
                    texts[way] = fn(nodes)
                    seconds[way] += time.perf_counter() - start
                counts["lists"] += 1
                counts["equal"] += texts["capture"] == texts["torch"]
                return str(texts["capture"])

            DebugFormatter._write_ir = staticmethod(write)  # type: ignore[method-assign]
            yield active

    target, inputs, wrap = MODELS[name](layers)
    _compat.fusion_ir_formatted_once = both_ways
    try:
        with torch.no_grad() if wrap else torch.enable_grad():
            _explore(target, inputs, wrap)
    finally:
        _compat.fusion_ir_formatted_once = faster
    return seconds["torch"], seconds["capture"], counts["lists"], counts["equal"]


def _print_fusion_ir(models: list[str], layers: int) -> None:
    print("fusion IR text, the same scheduler nodes formatted both ways in one run:")
    print(f"{'model':<18}{'torch_s':>10}{'capture_s':>11}{'speed-up':>10}{'equal':>9}")
    for name in models:
        plain, ours, lists, equal = _fusion_ir_both_ways(name, layers)
        print(f"{name:<18}{plain:>10.3f}{ours:>11.3f}{plain / ours:>9.2f}x{equal:>5}/{lists}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per side")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--models", nargs="*", default=list(MODELS)[:2], choices=list(MODELS))
    parser.add_argument("--fusion-ir", action="store_true", help="see the module doc")
    args = parser.parse_args()
    if args.fusion_ir:
        _print_fusion_ir(args.models, args.layers)
        return
    print(f"torch {torch.__version__}, cpu ({torch.get_num_threads()} threads), "
          f"{args.layers} layers, warm kernels, medians of {args.repeats}")  # fmt: skip
    print(f"{'model':<18}{'clock':>6}{'baseline_s':>11}{'explore_s':>11}{'ratio':>8}"
          f"{'previous_s':>12}{'ratio':>8}")  # fmt: skip
    all_parts: dict[str, tuple[float, list[dict[str, float]]]] = {}
    for name in args.models:
        times, parts = _run(name, args.layers, args.repeats)
        for i, clock in enumerate(("wall", "cpu")):
            b, e, p = (statistics.median(t[i] for t in times[k]) for k in SIDES)
            row = f"{name:<18}{clock:>6}{b:>11.3f}{e:>11.3f}{e / b:>7.3f}x"
            print(f"{row}{p:>12.3f}{p / b:>7.3f}x", flush=True)
            if clock == "wall":
                all_parts[name] = (e - b, parts)
    print("\nseconds inside each part of capture (median of the explore runs):")
    print(f"{'part':<38}" + "".join(f"{name:>18}" for name in all_parts))
    for label, _, _ in PARTS:
        cells = [statistics.median(p[label] for p in parts) for _, parts in all_parts.values()]
        print(f"{label:<38}" + "".join(f"{c:>18.3f}" for c in cells))
    print(f"{'explore - baseline (all of it)':<38}"
          + "".join(f"{extra:>18.3f}" for extra, _ in all_parts.values()))  # fmt: skip
    print(f"\ntarget: explore/baseline <= {TARGET:.2f}")


if __name__ == "__main__":
    main()
