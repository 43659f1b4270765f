"""Triton's lower stages of each kernel (TTIR, TTGIR, LLVM IR, PTX, SASS), read after
the compile from wherever Triton put them.

Capture changes nothing about where Triton compiles: Inductor compiles kernels in its
worker processes into Triton's cache folder (``TRITON_CACHE_DIR``, which Inductor sets
to ``<inductor cache>/triton/<device>`` when the user has not), and reloads their cubins
from there later in the process. Pointing that folder elsewhere during a capture broke
the user's compiles before and after it (Inductor's in-process kernel cache remembers
kernels by source and looks their cubins up under the *current* folder), so stages are
collected afterwards instead:

- the output code's module (still loaded in this process) holds each kernel's
  ``CachingAutotuner``, which names the kernel's own module file and, after
  autotuning, the winning variant's cache folder (``launcher.cache_hash``);
- every compiled variant leaves ``<name>.{ttir,ttgir,llir,ptx,cubin,json}`` in a folder
  of Triton's cache; a variant belongs to this kernel when its TTIR's ``#loc`` names
  the kernel's module file (seen with Triton 3.6).

The chosen variant keeps the text of every stage; the others are a summary: their
config (warps, stages, CTAs), target, shared memory and cache folder, each stage saying
where its text is. Their texts are dropped, not kept compressed: reading every variant's
files cost capture time (issue 15), autotuning ran the chosen one only, and the
explorer's lowered view opens on the chosen variant; lowering a variant again from the
kernel source and its config gives its stages where one is wanted. (Files written before
this keep the texts they have; schema 3.0 stores them compressed and any text two
variants or kernels share once, ``compiler/store/compact.py``.) SASS costs a ``cuobjdump``
run per kernel, so it is deferred: ``with_sass`` disassembles the cubins still in
Triton's cache when asked.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from compiler import _compat
from compiler.model import Exploration, Kernel, LoweredStage, TritonVariant
from compiler.parse.triton.kernel_module import module_path

TEXT_STAGES = ("ttir", "ttgir", "llir", "ptx")
STAGES = (*TEXT_STAGES, "sass")
_SASS_TIMEOUT_S = 60
# Triton names a kernel's cache files after the kernel, cut to 150 characters
# (``file_name = src.name[:150]`` in triton/compiler/compiler.py, Triton 3.6): Inductor's
# fused kernels outgrow it (a GPT-2 backward's persistent reduction has a 151-character
# name), and looked up by their whole name they had no variant, so no stages and no config.
TRITON_FILE_NAME_MAX = 150
SASS_DEFERRED = (
    "not disassembled yet: SASS is derived from the cubin in Triton's cache when asked "
    "(compiler.with_sass(exploration))."
)
NOT_KEPT = (
    "not kept: autotuning did not choose this variant. Its stages are in Triton's cache "
    "folder {folder}."
)


@dataclasses.dataclass
class Collected:
    """What ``collect`` found: variants by (output module path, kernel name), and the
    kernels whose chosen variant was compiled before the capture started (a cache)."""

    variants: dict[tuple[str, str], tuple[TritonVariant, ...]]
    from_cache: list[str]
    missing: list[str]
    cache_dir: str


def collect(outputs: Iterable[tuple[str, Iterable[str]]], *, since: float) -> Collected:
    """Variants of each Triton kernel named in ``outputs`` ((output code path, kernel
    names) pairs), read from Triton's cache; ``since`` is the capture's start (epoch s)."""
    root = _compat.triton_cache_dir()
    found = Collected(variants={}, from_cache=[], missing=[], cache_dir=str(root or ""))
    wanted: list[tuple[str, str, Any]] = []
    for path, names in outputs:
        module = _compat.loaded_output_module(path)
        for name in names:
            tuner = getattr(module, name, None) if module is not None else None
            wanted.append((path, name, tuner))
    if root is None or not wanted:
        found.missing = [name for _, name, _ in wanted]
        return found
    index = _index(root, {file_stem(_triton_name(name, tuner)) for _, name, tuner in wanted})
    for path, name, tuner in wanted:
        kernel_file = str(getattr(tuner, "filename", "") or "")
        compiled = file_stem(_triton_name(name, tuner))  # its files' name in Triton's cache
        candidates = index.get(compiled, []) if kernel_file else []
        folders = [f for f in candidates if _module_of(f, compiled) == kernel_file]
        chosen_key, chosen_config = _winner(tuner, kernel_file)
        known = any(f.name == chosen_key for f in folders)
        # a template kernel's TTIR can name another file: trust the autotuner's choice
        if chosen_key and not known and (root / chosen_key / f"{compiled}.json").exists():
            folders.append(root / chosen_key)
        if not folders:
            found.missing.append(name)
            continue
        if chosen_key is None and len(folders) == 1:
            chosen_key = folders[0].name
        variants = []
        for folder in sorted(folders, key=lambda f: (f.name != chosen_key, f.name)):
            chosen = folder.name == chosen_key
            variants.append(_variant(folder, compiled, chosen, chosen_config if chosen else {}))
            if chosen and (folder / f"{compiled}.json").stat().st_mtime < since:
                found.from_cache.append(name)
        found.variants[(path, name)] = tuple(variants)
    return found


def file_stem(name: str) -> str:
    """The name of a kernel's files in Triton's cache: its name, cut as Triton cuts it.

    >>> len(file_stem("triton_per_fused_" + "x" * 200)), file_stem("triton_poi_fused_add_0")
    (150, 'triton_poi_fused_add_0')
    """
    return name[:TRITON_FILE_NAME_MAX]


def _triton_name(name: str, tuner: Any) -> str:
    """The name Triton compiled a kernel under, which names its cache files: the name of
    the ``def`` the autotuner's ``JITFunction`` wraps. Inductor's own kernels are named so
    in the output code too; a user-written kernel (``triton_op`` + ``wrap_triton``) is
    ``user_add_kernel_0`` there while its ``def`` stays ``user_add_kernel`` (unless
    ``config.triton.unique_user_kernel_names``)."""
    jit = getattr(tuner, "fn", None)
    own = getattr(getattr(jit, "fn", None), "__name__", None) or getattr(jit, "__name__", None)
    return own if isinstance(own, str) and own else name


def _index(root: Path, names: set[str]) -> dict[str, list[Path]]:
    """Kernel name -> the cache folders holding a variant of a kernel of that name."""
    index: dict[str, list[Path]] = {}
    try:
        folders = list(os.scandir(root))
    except OSError:
        return index
    for entry in folders:
        if not entry.is_dir():
            continue
        try:
            files = os.listdir(entry.path)
        except OSError:
            continue
        for file in files:
            stem, dot, ext = file.rpartition(".")
            if dot and ext == "json" and stem in names:
                index.setdefault(stem, []).append(Path(entry.path))
    return index


def _module_of(folder: Path, name: str) -> str:
    try:
        with open(folder / f"{name}.ttir", errors="replace") as fh:
            return module_path(fh.read())
    except OSError:
        return ""


def _winner(tuner: Any, kernel_file: str) -> tuple[str | None, dict[str, str]]:
    """The chosen variant's cache folder and block sizes: from the autotuner's one
    remaining launcher, else from Inductor's ``.best_config`` beside the kernel file."""
    launchers = list(getattr(tuner, "launchers", []) or [])
    if len(launchers) == 1 and getattr(launchers[0], "cache_hash", None):
        config = getattr(launchers[0], "config", None)
        kwargs = getattr(config, "kwargs", {}) or {}
        return str(launchers[0].cache_hash), {str(k): str(v) for k, v in kwargs.items()}
    if not kernel_file:
        return None, {}
    best = Path(kernel_file).with_suffix(".best_config")
    try:
        data = json.loads(best.read_text())
    except (OSError, ValueError):
        return None, {}
    if not isinstance(data, dict) or not data.get("triton_cache_hash"):
        return None, {}
    extra = {str(k): str(v) for k, v in data.items() if k.isupper() or k.startswith("R")}
    return str(data["triton_cache_hash"]), extra


def _variant(folder: Path, name: str, chosen: bool, config: dict[str, str]) -> TritonVariant:
    try:
        meta = json.loads((folder / f"{name}.json").read_text())
    except (OSError, ValueError):
        meta = {}
    if chosen:
        stages = [_text_stage(folder / f"{name}.{stage}", stage) for stage in TEXT_STAGES]
        cubin = folder / f"{name}.cubin"
        sass = (
            LoweredStage(stage="sass", error=SASS_DEFERRED)
            if cubin.exists()
            else LoweredStage(stage="sass", error=f"Triton wrote no {cubin.name}")
        )
        stages.append(sass)
    else:
        why = NOT_KEPT.format(folder=folder)
        stages = [LoweredStage(stage=stage, error=why) for stage in STAGES]
    target = meta.get("target") or {}
    keys = ("num_warps", "num_stages", "num_ctas")
    return TritonVariant(
        hash=str(meta.get("hash", folder.name)),
        cache_key=folder.name,
        config={**{k: str(meta[k]) for k in keys if k in meta}, **config},
        chosen=chosen,
        target=f"{target.get('backend', '')} sm{target.get('arch', '')} "
        f"warp{target.get('warp_size', '')}".strip(),
        triton_version=str(meta.get("triton_version", "")),
        shared_memory=int(meta.get("shared") or 0),
        stages=tuple(stages),
    )


def _text_stage(path: Path, stage: str) -> LoweredStage:
    try:
        return LoweredStage(stage=stage, text=path.read_text(errors="replace"))
    except OSError:
        return LoweredStage(stage=stage, error=f"Triton wrote no {path.name}")


def with_sass(exploration: Exploration, *, workers: int = 8) -> Exploration:
    """Fill in the deferred SASS of every chosen Triton variant, disassembling its cubin
    from Triton's cache with ``cuobjdump`` (several at a time).

    Example:
        >>> import compiler
        >>> exp = compiler.Exploration(source="live")
        >>> compiler.with_sass(exp) == exp
        True
    """
    root = _compat.triton_cache_dir() if exploration.compiles else None
    jobs: dict[tuple[str, str], Path] = {}
    for c in exploration.compiles:
        for k in c.kernels():
            for v in k.variants:
                if _deferred(v):
                    jobs[(k.name, v.cache_key)] = _cubin(
                        Path(root or "") / v.cache_key, file_stem(k.name)
                    )
    if not jobs:
        return exploration
    with ThreadPoolExecutor(max_workers=workers) as pool:
        done = dict(zip(jobs, pool.map(sass, jobs.values()), strict=True))

    def kernel(k: Kernel) -> Kernel:
        variants = tuple(
            dataclasses.replace(
                v,
                stages=tuple(
                    done.get((k.name, v.cache_key), s) if s.stage == "sass" else s for s in v.stages
                ),
            )
            if _deferred(v)
            else v
            for v in k.variants
        )
        return dataclasses.replace(k, variants=variants)

    compiles = tuple(
        dataclasses.replace(
            c,
            output_code=tuple(
                dataclasses.replace(o, kernels=tuple(kernel(k) for k in o.kernels))
                for o in c.output_code
            ),
        )
        for c in exploration.compiles
    )
    return dataclasses.replace(exploration, compiles=compiles)


def _cubin(folder: Path, name: str) -> Path:
    """The cubin of kernel ``name`` in a cache folder: the folder's one cubin where the
    kernel's files are named otherwise (a user-written kernel's ``def`` name)."""
    cubin = folder / f"{name}.cubin"
    if not cubin.exists():
        others = list(folder.glob("*.cubin")) if folder.is_dir() else []
        if len(others) == 1:
            return others[0]
    return cubin


def _deferred(v: TritonVariant) -> bool:
    return any(s.stage == "sass" and s.error == SASS_DEFERRED for s in v.stages)


def sass(cubin: Path) -> LoweredStage:
    """The SASS of one cubin, or why it could not be disassembled: the one SASS path, for
    captured kernels (``with_sass``) and the kernel lab's re-lowerings alike, so that
    both come from the same ``cuobjdump``.

    >>> sass(Path("/nonexistent/k.cubin")).error.startswith("the cubin /nonexistent/k.cubin")
    True
    """
    if not cubin.exists():
        return LoweredStage(
            stage="sass",
            error=f"the cubin {cubin} is no longer in Triton's cache (another process or "
            "machine, or the cache was cleared): capture again to disassemble it.",
        )
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
