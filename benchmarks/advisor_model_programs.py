"""The real-model programs of the advisor's corpus: models built from library configs (no
weights), each a callable and its inputs, compiled as a user would.

``benchmarks/advisor_models.py`` runs them through the explorer and scores the advisor;
``python benchmarks/advisor_models.py --facts`` runs them under plain ``torch.compile``
with ``TORCH_LOGS=graph_breaks,recompiles`` and Dynamo's counters, the facts the expected
diagnoses are written from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch


@dataclass(frozen=True)
class Built:
    """A program ready to run: ``target(*inputs)`` compiled with ``compile_kwargs`` when
    ``wrap`` (else it calls compiled code itself); ``context`` wraps each call."""

    target: Callable[..., Any]
    inputs: tuple[Any, ...]
    compile_kwargs: dict[str, Any] = field(default_factory=dict)
    wrap: bool = True


def _gpt2(n_layer: int = 2, **kw: Any) -> Any:
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=n_layer, n_embd=64, n_head=2, vocab_size=512, n_positions=128, **kw)
    return GPT2LMHeadModel(cfg)


def gpt2_train_step() -> Built:
    """GPT-2 training step, the whole step compiled (forward, loss, backward)."""
    model = _gpt2()

    def step(x: torch.Tensor) -> torch.Tensor:
        loss = model(x, labels=x).loss
        loss.backward()
        return loss

    return Built(step, (torch.randint(0, 512, (2, 16)),), {"backend": "aot_eager"})


def gpt2_train_compiled_model() -> Built:
    """GPT-2 training: the model compiled, backward outside."""
    model = _gpt2()
    compiled = torch.compile(model, backend="aot_eager")

    def step(x: torch.Tensor) -> None:
        compiled(x, labels=x).loss.backward()

    return Built(step, (torch.randint(0, 512, (2, 16)),), wrap=False)


def gpt2_seq_lengths() -> Built:
    """GPT-2 inference at three sequence lengths (a serving loop without padding)."""
    model = _gpt2().eval()
    compiled = torch.compile(model, backend="aot_eager")

    def serve(batch: int) -> None:
        with torch.no_grad():
            for seq in (16, 24, 32):
                compiled(torch.randint(0, 512, (batch, seq)))

    return Built(serve, (2,), wrap=False)


def gpt2_train_seq_lengths() -> Built:
    """GPT-2 training on batches of three sequence lengths, the model compiled."""
    model = _gpt2()
    compiled = torch.compile(model, backend="aot_eager")

    def train(batch: int) -> None:
        for seq in (16, 24, 32):
            x = torch.randint(0, 512, (batch, seq))
            compiled(x, labels=x).loss.backward()

    return Built(train, (2,), wrap=False)


def gpt2_generate_step() -> Built:
    """GPT-2 greedy decoding step that stops on an end-of-sequence token, compiled."""
    model = _gpt2().eval()

    def decode_step(ids: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            nxt = model(ids).logits[:, -1].argmax(-1)
            if nxt.item() == 511:  # a Python decision on the model's output
                return ids
            return torch.cat([ids, nxt[:, None]], dim=1)

    return Built(decode_step, (torch.randint(0, 500, (1, 16)),), {"backend": "aot_eager"})


def gpt2_greedy_loop() -> Built:
    """A greedy generation loop over a compiled GPT-2 (no KV cache): the sequence grows by
    one token per step."""
    model = _gpt2().eval()
    compiled = torch.compile(model, backend="aot_eager")

    def generate(ids: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            for _ in range(4):
                nxt = compiled(ids, use_cache=False).logits[:, -1].argmax(-1)
                ids = torch.cat([ids, nxt[:, None]], dim=1)
        return ids

    return Built(generate, (torch.randint(0, 512, (1, 8)),), wrap=False)


def gpt2_checkpointed_train() -> Built:
    """GPT-2 training step with gradient checkpointing on."""
    model = _gpt2()
    model.gradient_checkpointing_enable()
    model.train()
    compiled = torch.compile(model, backend="aot_eager")

    def step(x: torch.Tensor) -> None:
        compiled(x, labels=x).loss.backward()

    return Built(step, (torch.randint(0, 512, (2, 16)),), wrap=False)


def _llama() -> Any:
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(
        hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, vocab_size=512, max_position_embeddings=128,
    )  # fmt: skip
    return LlamaForCausalLM(cfg)


def llama_inference() -> Built:
    """A Llama-style decoder (tiny LlamaConfig), inference without a cache."""
    model = _llama().eval()

    def infer(ids: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return model(ids, use_cache=False).logits

    return Built(infer, (torch.randint(0, 512, (2, 16)),), {"backend": "aot_eager"})


def llama_train_compiled_model() -> Built:
    """Llama-style training: the model compiled, backward outside."""
    model = _llama()
    compiled = torch.compile(model, backend="aot_eager")

    def step(x: torch.Tensor) -> None:
        compiled(x, labels=x, use_cache=False).loss.backward()

    return Built(step, (torch.randint(0, 512, (2, 16)),), wrap=False)


def _bert_cfg() -> Any:
    from transformers import BertConfig

    return BertConfig(
        num_hidden_layers=2, hidden_size=64, num_attention_heads=2, intermediate_size=128,
        vocab_size=512,
    )  # fmt: skip


def bert_inference() -> Built:
    """BERT encoder inference (clean)."""
    from transformers import BertModel

    torch.manual_seed(0)
    model = BertModel(_bert_cfg()).eval()

    def infer(ids: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return model(ids).last_hidden_state

    return Built(infer, (torch.randint(0, 512, (2, 16)),), {"backend": "aot_eager"})


def bert_mlm_train_compiled_model() -> Built:
    """BERT masked-LM training: the model compiled, backward outside (clean)."""
    from transformers import BertForMaskedLM

    torch.manual_seed(0)
    model = BertForMaskedLM(_bert_cfg())
    compiled = torch.compile(model, backend="aot_eager")

    def step(x: torch.Tensor) -> None:
        compiled(x, labels=x).loss.backward()

    return Built(step, (torch.randint(0, 512, (2, 16)),), wrap=False)


def bert_autocast_inference() -> Built:
    """BERT inference under CPU autocast (bfloat16) (clean)."""
    from transformers import BertModel

    torch.manual_seed(0)
    model = BertModel(_bert_cfg()).eval()

    def infer(ids: torch.Tensor) -> torch.Tensor:
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
            return model(ids).last_hidden_state

    return Built(infer, (torch.randint(0, 512, (2, 16)),), {"backend": "aot_eager"})


def t5_inference() -> Built:
    """T5 encoder-decoder, one forward with decoder inputs."""
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(0)
    cfg = T5Config(
        d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4, vocab_size=512,
        decoder_start_token_id=0,
    )  # fmt: skip
    model = T5ForConditionalGeneration(cfg).eval()

    def infer(ids: torch.Tensor, dec: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return model(input_ids=ids, decoder_input_ids=dec, use_cache=False).logits

    ids = torch.randint(0, 512, (2, 16))
    return Built(infer, (ids, ids[:, :8]), {"backend": "aot_eager"})


def vit_inference() -> Built:
    """A vision transformer (tiny ViTConfig) classifying 32x32 images (clean)."""
    from transformers import ViTConfig, ViTForImageClassification

    torch.manual_seed(0)
    cfg = ViTConfig(
        image_size=32, patch_size=8, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=128, num_labels=10,
    )  # fmt: skip
    model = ViTForImageClassification(cfg).eval()

    def infer(images: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return model(pixel_values=images).logits

    return Built(infer, (torch.randn(2, 3, 32, 32),), {"backend": "aot_eager"})


def resnet_train_step() -> Built:
    """A ResNet (transformers ResNetConfig, torchvision-style blocks) training step with
    the model compiled (clean)."""
    from transformers import ResNetConfig, ResNetForImageClassification

    torch.manual_seed(0)
    cfg = ResNetConfig(
        embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], num_labels=10,
    )  # fmt: skip
    model = ResNetForImageClassification(cfg).train()
    compiled = torch.compile(model, backend="aot_eager")

    def step(images: torch.Tensor, labels: torch.Tensor) -> None:
        compiled(pixel_values=images, labels=labels).loss.backward()

    return Built(step, (torch.randn(4, 3, 32, 32), torch.randint(0, 10, (4,))), wrap=False)


def resnet_eval_then_train() -> Built:
    """The same ResNet called in eval() and then train() mode (BatchNorm changes)."""
    from transformers import ResNetConfig, ResNetModel

    torch.manual_seed(0)
    model = ResNetModel(ResNetConfig(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1]))
    compiled = torch.compile(model, backend="aot_eager")

    def evaluate_then_train(images: torch.Tensor) -> None:
        model.eval()
        with torch.no_grad():
            compiled(pixel_values=images)
        model.train()
        compiled(pixel_values=images).pooler_output.sum().backward()

    return Built(evaluate_then_train, (torch.randn(4, 3, 32, 32),), wrap=False)


PROGRAMS: dict[str, Callable[[], Built]] = {
    f.__name__: f
    for f in (
        gpt2_train_step,
        gpt2_train_compiled_model,
        gpt2_seq_lengths,
        gpt2_train_seq_lengths,
        gpt2_generate_step,
        gpt2_greedy_loop,
        gpt2_checkpointed_train,
        llama_inference,
        llama_train_compiled_model,
        t5_inference,
        bert_inference,
        bert_mlm_train_compiled_model,
        bert_autocast_inference,
        vit_inference,
        resnet_train_step,
        resnet_eval_then_train,
    )
}
