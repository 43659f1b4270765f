"""How much of Dynamo's output our decompiler covers: frames decompiled / frames seen.

For the test suite's programs (``tests/programs.py``) and real models built from
transformers configs (no weights), every frame and resume function Dynamo transforms is
decompiled and the program is run again on the decompiled code against a plain eager run
(``compiler.decompile.verify.check``). Prints one row per program and the totals.

    python benchmarks/decompile_coverage.py            # suite + real models
    python benchmarks/decompile_coverage.py --suite    # the suite only (no transformers)
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import torch  # noqa: E402

from compiler.decompile.verify import check  # noqa: E402

Build = Callable[[], Callable[[], Any]]


def _gpt2_training_step() -> Callable[[], Any]:
    import programs

    step, ids = programs.gpt2_training_step(2)
    return lambda: torch.compile(step, backend="eager")(ids)


def _gpt2_generate_two_lengths() -> Callable[[], Any]:
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(n_layer=2, n_head=4, n_embd=128, vocab_size=1000, n_positions=256)
    model = GPT2LMHeadModel(cfg).eval()
    compiled = torch.compile(model, backend="eager")
    inputs = [torch.randint(0, 1000, (2, seq)) for seq in (16, 32)]

    def run() -> list[torch.Tensor]:
        with torch.no_grad():
            return [compiled(input_ids=ids).logits for ids in inputs]

    return run


def _gpt2_greedy_decode() -> Callable[[], Any]:
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(n_layer=2, n_head=4, n_embd=128, vocab_size=1000, n_positions=256)
    model = GPT2LMHeadModel(cfg).eval()
    eos = 999

    def decode_step(ids: torch.Tensor) -> torch.Tensor:
        logits = model(input_ids=ids).logits
        nxt = logits[:, -1].argmax(-1)
        if nxt.item() == eos:  # a Python decision on the model's output
            return ids
        return torch.cat([ids, nxt[:, None]], dim=1)

    ids = torch.randint(0, 1000, (1, 16))

    def run() -> torch.Tensor:
        with torch.no_grad():
            return torch.compile(decode_step, backend="eager")(ids)

    return run


def _gpt2_adamw_training() -> Callable[[], Any]:
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(n_layer=2, n_head=2, n_embd=64, vocab_size=256, n_positions=64)
    model = GPT2LMHeadModel(config).train()
    compiled = torch.compile(model, backend="eager")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, config.vocab_size, (2, 32))

    def step() -> torch.Tensor:
        opt.zero_grad()
        loss = compiled(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        return loss.detach()

    return step


def _bert_inference() -> Callable[[], Any]:
    from transformers import BertConfig, BertModel

    cfg = BertConfig(
        num_hidden_layers=2, hidden_size=128, num_attention_heads=4, intermediate_size=256
    )
    model = BertModel(cfg).eval()
    ids = torch.randint(0, cfg.vocab_size, (2, 32))

    def run() -> torch.Tensor:
        with torch.no_grad():
            return torch.compile(model, backend="eager")(ids).last_hidden_state

    return run


def _t5_inference() -> Callable[[], Any]:
    from transformers import T5Config, T5ForConditionalGeneration

    config = T5Config(
        num_layers=2, num_decoder_layers=2, d_model=64, d_ff=128, num_heads=2, vocab_size=256
    )
    model = T5ForConditionalGeneration(config).eval()
    ids = torch.randint(0, config.vocab_size, (2, 16))

    def run() -> torch.Tensor:
        with torch.no_grad():
            out = torch.compile(model, backend="eager")(input_ids=ids, decoder_input_ids=ids[:, :8])
            return out.logits

    return run


def _compiled_autograd_step() -> Callable[[], Any]:
    import torch._dynamo.config
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(n_layer=2, n_head=2, n_embd=64, vocab_size=256, n_positions=64)
    model = GPT2LMHeadModel(config).train()
    ids = torch.randint(0, config.vocab_size, (2, 32))

    def step(ids: torch.Tensor) -> torch.Tensor:
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()  # inside the compiled function: compiled autograd captures it
        return loss.detach()

    def run() -> torch.Tensor:
        with torch._dynamo.config.patch(compiled_autograd=True):
            return torch.compile(step, backend="eager")(ids)

    return run


REAL_MODELS: dict[str, Build] = {
    "gpt2_training_step (tests/programs.py)": _gpt2_training_step,
    "gpt2 two sequence lengths": _gpt2_generate_two_lengths,
    "gpt2 greedy decode (.item() break)": _gpt2_greedy_decode,
    "gpt2 training + AdamW": _gpt2_adamw_training,
    "bert inference": _bert_inference,
    "t5 inference": _t5_inference,
    "gpt2 step under compiled autograd": _compiled_autograd_step,
}


def main() -> None:
    import programs

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", action="store_true", help="the suite's programs only")
    args = parser.parse_args()
    try:
        import depyf  # type: ignore[import-untyped]
    except ImportError:
        depyf = None
    groups = {"suite": programs.decompile_builds()}
    if not args.suite:
        groups["real models"] = REAL_MODELS
    print(f"Python {sys.version.split()[0]}, torch {torch.__version__}")
    for group, builds in groups.items():
        seen = decompiled = behaved = unchecked = depyf_decompiled = depyf_behaved = 0
        print(f"\n{group}:")
        for name, build in builds.items():
            start = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):  # the programs' own prints
                result = check(build)
            seconds = time.perf_counter() - start
            if depyf is not None:  # the second opinion, checked the same way
                with contextlib.redirect_stdout(io.StringIO()):
                    second = check(build, decompiler=depyf.decompile)
                depyf_decompiled += second.decompiled
                depyf_behaved += second.behaves is True
            seen += len(result.frames)
            decompiled += result.decompiled
            behaved += result.behaves is True
            unchecked += len(result.unchecked)
            verdict = {True: "behaves", False: "DIFFERS", None: "not run"}[result.behaves]
            print(
                f"  {name:42s} {result.decompiled:3d}/{len(result.frames):<3d} {verdict:8s}"
                f" {seconds:5.1f} s {result.why[:120]}"
            )
            for frame in result.frames:
                if frame.error:
                    print(f"      {frame.code_name}: {frame.error}")
        print(
            f"  {group}: {decompiled}/{seen} frames decompiled; "
            f"{behaved}/{len(builds)} programs behave like the original on the decompiled code"
            f" ({unchecked} frame(s) not put in place: no function holds their code)"
        )
        if depyf is not None:
            print(
                f"  {group}, depyf {depyf.__version__} (second opinion): {depyf_decompiled}/{seen} "
                f"frames decompiled; {depyf_behaved}/{len(builds)} programs behave"
            )


if __name__ == "__main__":
    main()
