"""Make TORCH_TRACE logs of real models: the inputs of the load and page benchmarks.

Three models built from ``transformers`` configs (no weights, nothing downloaded), each
compiled with Inductor on the CPU in a fresh Python process that has ``TORCH_TRACE`` set:

- ``gpt2_train``: a 12-layer GPT-2 training step (forward, backward and an AdamW step, the
  step compiled too) at two sequence lengths, so the second length recompiles. The largest
  log (over 15 MB).
- ``bert_infer``: a 12-layer BERT encoder, inference.
- ``resnet_infer``: a ResNet-50 layout (bottleneck blocks 3-4-6-3), inference.
- ``t5_infer``: a 6-layer T5 encoder-decoder (T5-small's depth), inference.

and four small ones (0.5-2 MB), where a fixed cost of the page would show: ``bert2_infer``
(2 layers), ``gpt2_2_train`` (2 layers, forward and backward), ``t5_1_infer`` (one layer
each side) and ``resnet_tiny_infer`` (one basic block per stage).

Widths, batch and sequence lengths are small so each finishes in minutes on a busy
2-core CPU; layer counts are the real ones, which is what sets the size of the graphs.
Inductor's caches are off and provenance tracking is on, as ``compiler.explore`` does.

Run: ``python benchmarks/model_traces.py [--out DIR] [--only gpt2_train bert_infer ...]``.
Each trace lands in ``DIR/<name>/`` (``DIR`` defaults to ``traces/`` next to the checkout).
Needs ``pip install transformers`` (the ``bench`` extra).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT.parent / "traces"


def gpt2_train() -> None:
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    config = GPT2Config(
        n_layer=12, n_head=4, n_embd=128, vocab_size=512, n_positions=128,
        bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    model = GPT2LMHeadModel(config)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    forward = torch.compile(model)

    @torch.compile
    def step() -> None:
        opt.step()

    for seq in (32, 48):
        ids = torch.randint(0, config.vocab_size, (2, seq))
        loss = forward(input_ids=ids, labels=ids).loss
        loss.backward()
        step()
        opt.zero_grad(set_to_none=True)


def bert_infer() -> None:
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(
        num_hidden_layers=12,
        num_attention_heads=4,
        hidden_size=128,
        intermediate_size=512,
        vocab_size=512,
    )
    model = BertModel(config).eval()
    compiled = torch.compile(model)
    ids = torch.randint(0, config.vocab_size, (2, 32))
    with torch.no_grad():
        compiled(input_ids=ids)


def resnet_infer() -> None:
    import torch
    from transformers import ResNetConfig, ResNetModel

    torch.manual_seed(0)
    config = ResNetConfig(
        depths=[3, 4, 6, 3],
        hidden_sizes=[64, 128, 256, 512],
        embedding_size=32,
        layer_type="bottleneck",
    )
    model = ResNetModel(config).eval()
    compiled = torch.compile(model)
    with torch.no_grad():
        compiled(torch.randn(1, 3, 64, 64))


def t5_infer() -> None:
    import torch
    from transformers import T5Config, T5Model

    torch.manual_seed(0)
    config = T5Config(
        num_layers=6, num_decoder_layers=6, num_heads=4, d_model=128, d_kv=32, d_ff=512,
        vocab_size=512, decoder_start_token_id=0,
    )  # fmt: skip
    model = T5Model(config).eval()
    compiled = torch.compile(model)
    ids = torch.randint(0, config.vocab_size, (2, 32))
    with torch.no_grad():
        compiled(input_ids=ids, decoder_input_ids=ids[:, :16])


def bert2_infer() -> None:
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(
        num_hidden_layers=2, num_attention_heads=4, hidden_size=128, intermediate_size=512,
        vocab_size=512,
    )  # fmt: skip
    compiled = torch.compile(BertModel(config).eval())
    with torch.no_grad():
        compiled(input_ids=torch.randint(0, config.vocab_size, (2, 32)))


def gpt2_2_train() -> None:
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    config = GPT2Config(
        n_layer=2, n_head=4, n_embd=128, vocab_size=512, n_positions=128,
        bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    model = GPT2LMHeadModel(config).train()
    ids = torch.randint(0, config.vocab_size, (2, 32))
    torch.compile(model)(input_ids=ids, labels=ids).loss.backward()


def t5_1_infer() -> None:
    import torch
    from transformers import T5Config, T5Model

    torch.manual_seed(0)
    config = T5Config(
        num_layers=1, num_decoder_layers=1, num_heads=4, d_model=128, d_kv=32, d_ff=512,
        vocab_size=512, decoder_start_token_id=0,
    )  # fmt: skip
    compiled = torch.compile(T5Model(config).eval())
    ids = torch.randint(0, config.vocab_size, (2, 32))
    with torch.no_grad():
        compiled(input_ids=ids, decoder_input_ids=ids[:, :16])


def resnet_tiny_infer() -> None:
    import torch
    from transformers import ResNetConfig, ResNetModel

    torch.manual_seed(0)
    config = ResNetConfig(
        depths=[1, 1, 1, 1], hidden_sizes=[16, 32, 64, 128], embedding_size=16,
        layer_type="basic",
    )  # fmt: skip
    compiled = torch.compile(ResNetModel(config).eval())
    with torch.no_grad():
        compiled(torch.randn(1, 3, 32, 32))


MODELS: dict[str, tuple[Callable[[], None], str]] = {
    "gpt2_train": (gpt2_train, "GPT-2, 12 layers, training step (fwd+bwd+AdamW) at seq 32 and 48"),
    "bert_infer": (bert_infer, "BERT encoder, 12 layers, inference at seq 32"),
    "resnet_infer": (resnet_infer, "ResNet-50 layout (bottleneck 3-4-6-3), inference, 64x64"),
    "t5_infer": (t5_infer, "T5 encoder-decoder, 6 layers each, inference at seq 32 / 16"),
    # small traces (0.5-2 MB), where the page's fixed cost shows against tlparse (issue 32)
    "bert2_infer": (bert2_infer, "BERT encoder, 2 layers, inference at seq 32"),
    "gpt2_2_train": (gpt2_2_train, "GPT-2, 2 layers, forward and backward at seq 32"),
    "t5_1_infer": (t5_1_infer, "T5 encoder-decoder, 1 layer each, inference at seq 32 / 16"),
    "resnet_tiny_infer": (resnet_tiny_infer, "ResNet, basic blocks 1-1-1-1, inference, 32x32"),
}
SMALL = ("bert2_infer", "gpt2_2_train", "t5_1_infer", "resnet_tiny_infer")


def _child_env(trace_dir: Path, cache_dir: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        TORCH_TRACE=str(trace_dir),
        INDUCTOR_PROVENANCE="1",
        TORCHINDUCTOR_FX_GRAPH_CACHE="0",
        TORCHINDUCTOR_AUTOGRAD_CACHE="0",
        TORCHINDUCTOR_CACHE_DIR=cache_dir,
    )
    return env


def make(name: str, out: Path) -> tuple[float, int]:
    """Run one model in a fresh process with TORCH_TRACE; return (seconds, log bytes)."""
    trace_dir = out / name
    trace_dir.mkdir(parents=True, exist_ok=True)
    for old in trace_dir.glob("*.log"):
        old.unlink()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tce-inductor-") as cache:
        subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--child", name],
            env=_child_env(trace_dir, cache),
            check=True,
        )
    size = sum(p.stat().st_size for p in trace_dir.glob("*.log"))
    return time.perf_counter() - start, size


def write_readme(out: Path) -> None:
    import torch

    lines = [
        "TORCH_TRACE logs of real models, made by benchmarks/model_traces.py",
        f"torch {torch.__version__}, CPU, Inductor; caches off, INDUCTOR_PROVENANCE=1.",
        "",
        f"Command: python benchmarks/model_traces.py --out {out}",
        "",
    ]
    for name, (_, what) in MODELS.items():
        logs = sorted((out / name).glob("*.log"))
        size = sum(p.stat().st_size for p in logs) / 1e6
        lines.append(
            f"{name}/  {what}  ({size:.1f} MB)" if logs else f"{name}/  {what}  (not made)"
        )
    (out / "README.txt").write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--only", nargs="*", choices=sorted(MODELS), default=None)
    parser.add_argument("--child", choices=sorted(MODELS), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        MODELS[args.child][0]()
        return
    try:
        import transformers  # noqa: F401
    except ImportError as exc:
        msg = "benchmarks/model_traces.py needs transformers: pip install transformers"
        raise SystemExit(msg) from exc
    out = args.out.resolve()
    for name in args.only or list(MODELS):
        seconds, size = make(name, out)
        print(f"{name:14s} {seconds:7.1f} s  {size / 1e6:6.1f} MB  -> {out / name}", flush=True)
    write_readme(out)


if __name__ == "__main__":
    main()
