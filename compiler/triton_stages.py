"""Triton's lower stages of each kernel (TTIR, TTGIR, LLVM IR, PTX, SASS), read from
the Triton cache folder that capture points ``TRITON_CACHE_DIR`` at.

Every compiled variant leaves ``<name>.{ttir,ttgir,llir,ptx,cubin,json}`` in a
folder named by its hash (seen with Triton 3.6). The variant autotuning chose is the
one whose cache folder Inductor saved as ``triton_cache_hash`` in a ``.best_config`` file
beside the kernel's module, whose path the TTIR names in its first ``#loc``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from .model import LoweredStage, TritonVariant

TEXT_STAGES = ("ttir", "ttgir", "llir", "ptx")
_MODULE_LOC = re.compile(r'#loc\d* = loc\("(?P<path>[^"]+\.py)":\d+:\d+\)')
_SASS_TIMEOUT_S = 60


def collect_variants(cache_dir: Path) -> dict[str, tuple[TritonVariant, ...]]:
    """Kernel name -> its compiled variants, from a Triton cache folder."""
    found: dict[str, list[TritonVariant]] = {}
    for meta_file in sorted(cache_dir.rglob("*.json")):
        if meta_file.name.startswith("__grp__"):
            continue
        try:
            meta = json.loads(meta_file.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if not isinstance(meta, dict) or "name" not in meta or "hash" not in meta:
            continue
        found.setdefault(str(meta["name"]), []).append(_variant(meta_file, meta))
    return {name: _mark_chosen(variants) for name, variants in found.items()}


def _variant(meta_file: Path, meta: dict[str, Any]) -> TritonVariant:
    stem = meta_file.with_suffix("")
    stages = []
    for stage in TEXT_STAGES:
        path = stem.with_suffix(f".{stage}")
        if path.exists():
            stages.append(LoweredStage(stage=stage, text=path.read_text(errors="replace")))
        else:
            stages.append(LoweredStage(stage=stage, error=f"Triton wrote no {path.name}"))
    stages.append(_sass(stem.with_suffix(".cubin")))
    target = meta.get("target") or {}
    return TritonVariant(
        hash=str(meta["hash"]),
        cache_key=meta_file.parent.name,
        config={k: str(meta[k]) for k in ("num_warps", "num_stages", "num_ctas") if k in meta},
        target=f"{target.get('backend', '')} sm{target.get('arch', '')} "
        f"warp{target.get('warp_size', '')}".strip(),
        triton_version=str(meta.get("triton_version", "")),
        shared_memory=int(meta.get("shared") or 0),
        stages=tuple(stages),
    )


def _sass(cubin: Path) -> LoweredStage:
    if not cubin.exists():
        return LoweredStage(stage="sass", error=f"Triton wrote no {cubin.name}")
    tool = cuobjdump()
    if tool is None:
        return LoweredStage(
            stage="sass",
            error="cuobjdump not found (it ships with the CUDA toolkit and with Triton's "
            "NVIDIA backend); the cubin was compiled but not disassembled.",
        )
    try:
        proc = subprocess.run(
            [tool, "-sass", str(cubin)], capture_output=True, text=True, timeout=_SASS_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return LoweredStage(stage="sass", error=f"{tool} -sass failed: {exc}")
    if proc.returncode != 0:
        return LoweredStage(stage="sass", error=f"{tool} -sass failed: {proc.stderr.strip()}")
    return LoweredStage(stage="sass", text=proc.stdout)


def cuobjdump() -> str | None:
    """The CUDA toolkit's cuobjdump, else the one inside Triton's NVIDIA backend."""
    tool = shutil.which("cuobjdump")
    if tool:
        return tool
    try:
        import triton  # type: ignore[import-not-found,unused-ignore]

        bundled = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    except ImportError:
        return None
    return str(bundled) if bundled.exists() else None


def _mark_chosen(variants: list[TritonVariant]) -> tuple[TritonVariant, ...]:
    if len(variants) == 1:
        only = variants[0]
        return (_replace(only, chosen=True),)
    best = _best_configs(variants)
    out = []
    for v in variants:
        config = best.get(v.cache_key)
        if config is None:
            out.append(v)
            continue
        extra = {k: str(val) for k, val in config.items() if k.isupper() or k.startswith("R")}
        out.append(_replace(v, chosen=True, config={**v.config, **extra}))
    return tuple(out)


def _best_configs(variants: list[TritonVariant]) -> dict[str, dict[str, Any]]:
    """Inductor's saved autotuning choices beside the kernel module, by Triton cache key
    (``triton_cache_hash`` names the variant's folder in Triton's cache)."""
    folders: set[Path] = set()
    for v in variants:
        ttir = next((s.text for s in v.stages if s.stage == "ttir" and s.text), "")
        m = _MODULE_LOC.search(ttir)
        if m:
            folders.add(Path(m["path"]).parent)
    best: dict[str, dict[str, Any]] = {}
    for folder in folders:
        for path in folder.glob("*.best_config"):
            try:
                data = json.loads(path.read_text())
            except (OSError, json.JSONDecodeError):
                continue
            if isinstance(data, dict) and data.get("triton_cache_hash"):
                best[str(data["triton_cache_hash"])] = data
    return best


def _replace(v: TritonVariant, **changes: Any) -> TritonVariant:
    import dataclasses

    return dataclasses.replace(v, **changes)
