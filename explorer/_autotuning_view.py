"""The Autotuning pane: Inductor's max-autotune benchmark per op, fastest candidate first.

A candidate links to an output-code kernel only where the link is proven: an extern
choice (``mm``) by the kernel of the same library call (``extern_kernels.mm``), and a
Triton template choice (``triton_mm_14``, a name the output code never uses) by the one
template kernel (``triton_tem_...``) whose ``tl.constexpr`` values, ``num_stages`` and
``num_warps`` equal every ``key=value`` of the candidate's description.
"""

from __future__ import annotations

import math
import re
from typing import Any

from compiler import Compile, Kernel
from compiler.model import Autotuning

from ._panes import pane

_CONSTEXPR = re.compile(r"^\s+(?P<key>\w+)\s*:\s*tl\.constexpr\s*=\s*(?P<value>.+?)\s*$", re.M)
_LAUNCH = re.compile(r"^\s*(?P<key>num_stages|num_warps)\s*=\s*(?P<value>\d+)\s*,?\s*$", re.M)
_BLOCKS = ("BLOCK_M", "BLOCK_N", "BLOCK_K")
_SPLIT_OUT = (*_BLOCKS, "num_stages", "num_warps")


def autotuning_pane(c: Compile, oc_keys: list[str]) -> dict[str, Any] | None:
    """Every autotuned op of ``c`` with its candidates, fastest first; None if none."""
    if not c.autotuning:
        return None
    kernels = [
        (f"{key}/{k.name}", k)
        for key, oc in zip(oc_keys, c.output_code, strict=True)
        for k in oc.kernels
    ]
    links = [_chosen_kernel(a, kernels) for a in c.autotuning]
    # a kernel claimed by two ops proves neither
    claimed = [kid for kid in links if kid is not None]
    ops = []
    for a, kid in zip(c.autotuning, links, strict=True):
        ops.append(_op(a, kid if kid is not None and claimed.count(kid) == 1 else None))
    return pane("autotuning", "autotuning", "autotuning", ops=ops)


def parse_config(description: str) -> list[list[str]]:
    """``"A='x', B=1"`` -> ``[["A", "x"], ["B", "1"]]``; [] unless every part is key=value."""
    parts, depth, start, quote = [], 0, 0, ""
    for i, ch in enumerate(description):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(description[start:i])
            start = i + 1
    parts.append(description[start:])
    pairs = []
    for part in (p.strip() for p in parts):
        key, eq, value = part.partition("=")
        if not eq or not key.strip().isidentifier():
            return []
        pairs.append([key.strip(), _unquote(value.strip())])
    return pairs


def config_text(pairs: list[list[str]], common: frozenset[str] = frozenset()) -> str:
    """Block sizes, stages and warps first: ``BLOCK 128x64x32 · 4 stages · 8 warps · ...``."""
    cfg = dict(pairs)
    out = []
    if all(b in cfg for b in _BLOCKS):
        out.append("BLOCK " + "x".join(cfg[b] for b in _BLOCKS) + " (MxNxK)")
    for key, word in (("num_stages", "stages"), ("num_warps", "warps")):
        if key in cfg:
            out.append(f"{cfg[key]} {word if cfg[key] != '1' else word[:-1]}")
    shown = {"num_stages", "num_warps"}
    if all(b in cfg for b in _BLOCKS):
        shown.update(_BLOCKS)
    out += [f"{k}={v}" for k, v in pairs if k not in shown and k not in common]
    return " · ".join(out)


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _op(a: Autotuning, kernel: str | None) -> dict[str, Any]:
    timed = [ch.ms for ch in a.choices if _finite(ch.ms)]
    fastest = min(timed) if timed else None
    slowest = max(timed) if timed else None
    order = sorted(a.choices, key=lambda ch: ch.ms if _finite(ch.ms) else math.inf)
    configs = [dict(p) for p in (parse_config(ch.description) for ch in a.choices) if p]
    # settings every configured candidate shares are said once, above the table
    common_pairs = [
        [k, v]
        for k, v in (configs[0].items() if len(configs) > 1 else ())
        if k not in _SPLIT_OUT and all(cfg.get(k) == v for cfg in configs)
    ]
    common = frozenset(k for k, _ in common_pairs)
    rows = []
    for ch in order:
        ms = ch.ms if _finite(ch.ms) else None
        rel = ms / fastest if ms is not None and fastest else None
        pairs = parse_config(ch.description)
        if rel is None:
            rel_text = "not timed"
        elif ms == fastest:
            rel_text = "1.00x"
        else:
            rel_text = f"{rel:.2f}x slower"
        kind = "triton" if ch.name.startswith("triton_") else "extern" if not ch.description else ""
        rows.append(
            {
                "name": ch.name,
                "kind": kind,
                "ms": ms,
                "ms_text": f"{ms:.4f}" if ms is not None else "-",
                "relative": rel,
                "relative_text": rel_text,
                "description": ch.description,
                "config": pairs,
                "config_text": config_text(pairs, common) if pairs else ch.description,
                "chosen": ch.name == a.chosen,
                "kernel": kernel if ch.name == a.chosen else None,
            }
        )
    return {
        "op": a.op,
        "input_sizes": list(a.input_sizes),
        "chosen": a.chosen,
        "kernel": kernel,
        "common_config": common_pairs,
        "common_text": " · ".join(f"{k}={v}" for k, v in common_pairs),
        "fastest_ms": fastest,
        "slowest_ms": slowest,
        "rows": rows,
    }


def _finite(ms: float | None) -> bool:
    return ms is not None and math.isfinite(ms)


def _chosen_kernel(a: Autotuning, kernels: list[tuple[str, Kernel]]) -> str | None:
    """The id of the one output-code kernel proven to run ``a.chosen``, else None."""
    choice = next((ch for ch in a.choices if ch.name == a.chosen), None)
    if choice is None:
        return None
    if not choice.name.startswith("triton_"):
        found = [
            kid
            for kid, k in kernels
            if k.language == "extern" and k.name == f"extern_kernels.{choice.name}"
        ]
    else:
        want = parse_config(choice.description)
        found = [
            kid
            for kid, k in kernels
            if want
            and k.language == "triton"
            and k.name.startswith("triton_tem_")
            and _template_config(k).items() >= dict(want).items()
        ]
    return found[0] if len(found) == 1 else None


def _template_config(k: Kernel) -> dict[str, str]:
    """A template kernel's ``tl.constexpr`` values plus its ``num_stages``/``num_warps``."""
    cfg = {m["key"]: _unquote(m["value"]) for m in _CONSTEXPR.finditer(k.source)}
    for m in _LAUNCH.finditer(k.source.split("@triton.jit", 1)[0]):
        cfg.setdefault(m["key"], m["value"])
    return cfg
