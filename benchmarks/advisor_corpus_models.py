"""Models of the public graph-break corpus (penguinwu/oss-model-graph-break-corpus), built
here from library configs without weights and nothing fetched at run time.

Each builder makes the model the corpus names, shrunk (one or two layers, hidden size 32)
so that it compiles on a small CPU in seconds, with random example inputs of the kinds the
model's ``forward`` takes. The corpus compiled ``model(**inputs)`` with
``backend="eager"``, in ``eval`` (``model.eval()`` under ``torch.no_grad()``) or ``train``
(``model.train()``, grad enabled) mode; ``Corpus.target`` calls the model the same way.

The expected causes are the corpus's labels, kept with its commit in
``benchmarks/data/oss_graph_break_corpus_labels.json``; nothing here decides them.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

SMALL = {"vocab_size": 128, "max_position_embeddings": 64}
TEXT_LEN = 16


@dataclass(frozen=True)
class CorpusModel:
    """A built corpus model: ``target(*inputs)`` calls ``model(**dict(zip(names, inputs)))``
    in the corpus's mode; ``grad`` says whether the corpus ran it with grad enabled."""

    target: Callable[..., Any]
    inputs: tuple[Any, ...]
    grad: bool


def _call(model: torch.nn.Module, names: tuple[str, ...]) -> Callable[..., Any]:
    def forward(*tensors: Any) -> Any:
        return model(**dict(zip(names, tensors, strict=True)))

    return forward


def _ids(batch: int = 2, length: int = TEXT_LEN, vocab: int = 128) -> torch.Tensor:
    # token 0 and the last ids are often special (pad/eos); keep to the middle of the vocab
    return torch.randint(4, vocab - 4, (batch, length))


def _hf(name: str, **cfg: Any) -> torch.nn.Module:
    import transformers

    model_cls = getattr(transformers, name)
    config_cls = model_cls.config_class
    torch.manual_seed(0)
    return model_cls(config_cls(**cfg))


def _text(name: str, **cfg: Any) -> tuple[torch.nn.Module, tuple[str, ...], tuple[Any, ...]]:
    model = _hf(name, **cfg)
    ids = _ids(vocab=cfg.get("vocab_size", 128))
    return model, ("input_ids", "attention_mask"), (ids, torch.ones_like(ids))


def _seq2seq(name: str, **cfg: Any) -> tuple[torch.nn.Module, tuple[str, ...], tuple[Any, ...]]:
    model = _hf(name, **cfg)
    ids = _ids()
    return model, ("input_ids", "decoder_input_ids"), (ids, _ids(length=8))


_ENC_DEC = {
    "d_model": 32,
    "encoder_layers": 1,
    "decoder_layers": 1,
    "encoder_attention_heads": 2,
    "decoder_attention_heads": 2,
    "encoder_ffn_dim": 64,
    "decoder_ffn_dim": 64,
    **SMALL,
}
_ENCODER = {
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 64,
    **SMALL,
}
_AUDIO = {
    "hidden_size": 32,
    "num_hidden_layers": 1,
    "num_attention_heads": 2,
    "intermediate_size": 64,
    "conv_dim": (16, 16),
    "conv_stride": (5, 2),
    "conv_kernel": (10, 3),
    "num_conv_pos_embeddings": 16,
    "num_conv_pos_embedding_groups": 2,
}


def _audio(name: str, **cfg: Any) -> tuple[torch.nn.Module, tuple[str, ...], tuple[Any, ...]]:
    model = _hf(name, **{**_AUDIO, **cfg})
    return model, ("input_values",), (torch.randn(1, 1600),)


def _image(name: str, **cfg: Any) -> tuple[torch.nn.Module, tuple[str, ...], tuple[Any, ...]]:
    model = _hf(name, **cfg)
    return model, ("pixel_values",), (torch.randn(1, 3, 32, 32),)


def _timm(name: str, size: int = 64) -> tuple[torch.nn.Module, tuple[str, ...], tuple[Any, ...]]:
    import timm

    torch.manual_seed(0)
    kw: dict[str, Any] = {"pretrained": False, "num_classes": 10}
    if name.startswith(("vit_", "deit_")):
        kw.update(img_size=size, depth=2)
    return timm.create_model(name, **kw), ("x",), (torch.randn(1, 3, size, size),)


BUILDERS: dict[str, Callable[[], tuple[torch.nn.Module, tuple[str, ...], tuple[Any, ...]]]] = {
    # copy.deepcopy (corpus: encoder-decoder models)
    "BartModel": lambda: _seq2seq("BartModel", **_ENC_DEC),
    "MarianModel": lambda: _seq2seq(
        "MarianModel", **_ENC_DEC, decoder_vocab_size=128, pad_token_id=1
    ),
    "MBartModel": lambda: _seq2seq("MBartModel", **_ENC_DEC),
    "PegasusModel": lambda: _seq2seq("PegasusModel", **_ENC_DEC),
    "BlenderbotSmallModel": lambda: _seq2seq("BlenderbotSmallModel", **_ENC_DEC),
    "T5Model": lambda: _seq2seq(
        "T5Model", d_model=32, d_kv=16, d_ff=64, num_layers=1, num_heads=2, vocab_size=128
    ),
    # data-dependent branching (corpus: train mode)
    "OPTModel": lambda: _text(
        "OPTModel", hidden_size=32, num_hidden_layers=2, num_attention_heads=2, ffn_dim=64,
        word_embed_proj_dim=32, **SMALL,
    ),
    "XGLMModel": lambda: _text(
        "XGLMModel", d_model=32, num_layers=2, attention_heads=2, ffn_dim=64, **SMALL
    ),
    "BioGptModel": lambda: _text("BioGptModel", **_ENCODER),
    "FlaubertModel": lambda: _text(
        "FlaubertModel", emb_dim=32, n_layers=2, n_heads=2, **SMALL
    ),
    "IBertModel": lambda: _text("IBertModel", **{**_ENCODER, "num_hidden_layers": 1}),
    "ReformerModel": lambda: _text(
        "ReformerModel", hidden_size=32, attention_head_size=16, num_attention_heads=2,
        attn_layers=["local", "lsh"], feed_forward_size=64, axial_pos_shape=[4, 4],
        axial_pos_embds_dim=[16, 16], local_attn_chunk_length=4, lsh_attn_chunk_length=4,
        num_buckets=2, vocab_size=128, max_position_embeddings=16,
    ),
    # logging.Logger
    "LongformerModel": lambda: _text("LongformerModel", **_ENCODER, attention_window=8),
    "LEDModel": lambda: _seq2seq(
        "LEDModel", **{k: v for k, v in _ENC_DEC.items() if k != "max_position_embeddings"},
        max_encoder_position_embeddings=64, max_decoder_position_embeddings=64,
        attention_window=8,
    ),
    # skipped function call (corpus: audio feature extractors)
    "Wav2Vec2Model": lambda: _audio("Wav2Vec2Model"),
    "HubertModel": lambda: _audio("HubertModel"),
    "WavLMModel": lambda: _audio("WavLMModel", num_buckets=16, max_bucket_distance=32),
    # Tensor requires_grad mutation
    "MraModel": lambda: _text("MraModel", **{**_ENCODER, "max_position_embeddings": 128}),
    "SEWDModel": lambda: _audio(
        "SEWDModel", squeeze_factor=2, position_buckets=8, max_position_embeddings=64
    ),
    # unbacked symbols
    "FunnelModel": lambda: _text(
        "FunnelModel", d_model=32, n_head=2, d_head=16, d_inner=64, block_sizes=(1, 1),
        vocab_size=128,
    ),
    # non-Tensor return / observed exception (MoE routers)
    "NllbMoeModel": lambda: _seq2seq(
        "NllbMoeModel", **_ENC_DEC, num_experts=4, expert_capacity=8, sparse_step=1
    ),
    "SwitchTransformersModel": lambda: _seq2seq(
        "SwitchTransformersModel", d_model=32, d_kv=16, d_ff=64, num_layers=2,
        num_decoder_layers=2, num_heads=2, num_experts=4, expert_capacity=8,
        num_sparse_encoder_layers=1, num_sparse_decoder_layers=1, vocab_size=128,
    ),
    # full_graph in the corpus
    "BertModel": lambda: _text("BertModel", **_ENCODER),
    "GPT2Model": lambda: _text(
        "GPT2Model", n_embd=32, n_layer=2, n_head=2, vocab_size=128, n_positions=64
    ),
    "AlbertModel": lambda: _text("AlbertModel", **_ENCODER, embedding_size=16),
    "DistilBertModel": lambda: _text(
        "DistilBertModel", dim=32, n_layers=2, n_heads=2, hidden_dim=64, **SMALL
    ),
    "ViTModel": lambda: _image("ViTModel", **_ENCODER, image_size=32, patch_size=8),
    "ConvNextModel": lambda: _image(
        "ConvNextModel", hidden_sizes=[8, 16], depths=[1, 1], num_stages=2, image_size=32
    ),
    # timm (the corpus: 99% of 1,284 timm models full_graph)
    "timm/resnet18": lambda: _timm("resnet18"),
    "timm/vit_tiny_patch16_224": lambda: _timm("vit_tiny_patch16_224", size=32),
    "timm/mobilenetv3_small_100": lambda: _timm("mobilenetv3_small_100"),
    "timm/efficientnet_b0": lambda: _timm("efficientnet_b0"),
    "timm/convnext_atto": lambda: _timm("convnext_atto"),
    "timm/deit_tiny_patch16_224": lambda: _timm("deit_tiny_patch16_224", size=32),
}


def available(name: str) -> str:
    """Why ``name`` cannot be built here ("" when it can): timm models need timm (and
    torchvision, which does not import beside every torch build)."""
    if name.startswith("timm/"):
        if importlib.util.find_spec("timm") is None:
            return "timm is not installed"
        try:
            import timm  # noqa: F401
        except Exception as e:  # torchvision built for another torch fails here
            return f"timm does not import: {type(e).__name__}: {e}"
    return ""


def build(name: str, mode: str) -> CorpusModel:
    """Build ``name`` in the corpus's ``mode`` (``eval`` or ``train``)."""
    model, names, inputs = BUILDERS[name]()
    model.train(mode == "train")
    return CorpusModel(_call(model, names), inputs, grad=mode == "train")


@dataclass(frozen=True)
class CauseMap:
    """How one corpus cause is recognised: torch's graph-break types (``Gb_type`` in
    ``torch/_dynamo/graph_break_registry.json``; their ids are read from the installed
    torch), and the advisor's finding kinds that name it."""

    gb_types: tuple[str, ...]
    kinds: tuple[str, ...]


# Written from the corpus's own descriptions of its causes (design/design-doc.md 4.2-4.3)
# and torch's registry types; never from the advisor's output.
CAUSES: dict[str, CauseMap] = {
    "Data-dependent branching": CauseMap(
        (
            "Data-dependent branching",
            "Data-dependent branching with non-constant __bool__",
            "Data-dependent assertion failed (cannot compile partial graph)",
            "Data dependent operator",
            # the corpus counts `aten._local_scalar_dense` (a tensor's value read into
            # Python) under this cause
            "Unsupported Tensor.item() call with capture_scalar_outputs=False",
        ),
        ("graph_break.data_dependent_branch", "graph_break.scalar_branch",
         "graph_break.scalar_output"),
    ),
    "copy.deepcopy()": CauseMap(
        ("copy.deepcopy()", "Attempted to copy.deepcopy a tensor"), ("graph_break.deepcopy",)
    ),
    "logging.Logger": CauseMap(
        ("logging.Logger method not supported for non-export cases",), ("graph_break.logging",)
    ),
    "Skipped function call": CauseMap(
        (
            "Attempted to call function marked as skipped",
            "Attempted to inline function marked as skipped",
            "Attempted to inline function marked as skipped (SkipFunctionVariable)",
        ),
        ("graph_break.unsupported_call", "graph_break.skipped"),
    ),
    "Tensor requires_grad mutation": CauseMap(
        (
            "Unsupported Tensor.requires_grad_() call",
            "setattr() on Tensor.requires_grad",
            "returning intermediate with requires_grad_()",
            "requires_grad_() intermediate leaked as output",
        ),
        ("graph_break.requires_grad",),
    ),
    "Unbacked symbols": CauseMap(
        ("Attempted to wrap unbacked SymInt", "Dynamic shape operator",
         "Dynamic shape operator (no meta kernel)"),
        ("graph_break.dynamic_output_shape",),
    ),
    "Non-Tensor return": CauseMap(("torch.* op returned non-Tensor",), ("graph_break.non_tensor",)),
    "Observed exception": CauseMap(
        ("Observed exception", "Observed exception (EXCEPT_HANDLER)"), ("graph_break.exception",)
    ),
    "full_graph": CauseMap((), ()),
}


def registry_ids(gb_types: tuple[str, ...]) -> tuple[str, ...]:
    """The installed torch's registry ids of ``gb_types`` (none where torch has no
    registry, or does not know a type).

    >>> registry_ids(("copy.deepcopy()",)) in ((), ("GB0179",))
    True
    """
    import json
    from pathlib import Path

    path = Path(torch._dynamo.__file__).parent / "graph_break_registry.json"
    if not path.exists():
        return ()
    registry = json.loads(path.read_text())
    wanted = set(gb_types)
    return tuple(
        gid for gid, entries in registry.items() if any(e["Gb_type"] in wanted for e in entries)
    )


def names_cause(finding: Any, cause: str, ids: tuple[str, ...]) -> bool:
    """Whether ``finding`` names the corpus ``cause``: its kind is one the mapping table
    lists, or its cause key, kind or title carries one of the cause's registry ids or
    graph-break types (read with ``getattr``, so findings with more or fewer fields work)."""
    m = CAUSES[cause]
    if finding.kind in m.kinds:
        return True
    text = " ".join(str(getattr(finding, a, "")) for a in ("cause", "kind", "title")).lower()
    return any(s.lower() in text for s in (*ids, *m.gb_types))
