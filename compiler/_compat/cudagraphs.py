"""Inductor's CUDA graph trees: the loggers that tell their story, and what each replay copies
into a recorded graph's inputs.
"""

from __future__ import annotations

import logging

import torch


def cudagraph_trees_logger() -> logging.Logger:
    """The ``cudagraphs`` artifact logger of Inductor's CUDA graph trees: at DEBUG it
    says when it warms up or records a function, with the compile id as the first
    argument (``getArtifactLogger(__name__, "cudagraphs")``, torch 2.11/2.13)."""
    import torch._inductor.cudagraph_trees  # noqa: F401  (registers the logger)

    return logging.getLogger("torch._inductor.cudagraph_trees.__cudagraphs")


# The artifacts torch tells CUDA graphs' story through: ``cudagraphs`` (the scheduler's
# partitions, cudagraph_utils' skip reasons, cudagraph_trees' trees, warm-ups and
# recordings) and ``perf_hints`` (Inductor's hints, some about CUDA graphs).
CUDAGRAPH_ARTIFACTS = ("cudagraphs", "perf_hints")


def cudagraph_loggers() -> list[logging.Logger]:
    """Every registered artifact logger of ``CUDAGRAPH_ARTIFACTS``: torch names each
    ``<module>.__<artifact>`` and registers it (``getArtifactLogger``, 2.11/2.13); the
    modules that say most about CUDA graphs are imported first so theirs exist.

    >>> "torch._inductor.scheduler.__cudagraphs" in [lg.name for lg in cudagraph_loggers()]
    True
    """
    import torch._inductor.cudagraph_trees
    import torch._inductor.cudagraph_utils
    import torch._inductor.scheduler  # noqa: F401
    from torch._logging._internal import log_registry

    names: set[str] = log_registry.get_artifact_log_qnames()  # type: ignore[no-untyped-call]
    return [
        logging.getLogger(q) for q in sorted(names) if q.rsplit(".__", 1)[-1] in CUDAGRAPH_ARTIFACTS
    ]


def cudagraph_input_copy_bytes() -> list[int]:
    """Per recorded CUDA graph of device 0: the bytes cudagraph trees copy into its static
    input buffers before each replay (its non-static tensor inputs, as recorded). From
    ``torch._inductor.cudagraph_trees.get_manager`` and each ``CUDAGraphNode``'s
    ``non_static_input_idx``/``reconstructed_inputs`` (torch 2.11/2.13); empty when
    there are no CUDA graph trees or those names are gone."""
    try:
        from torch._inductor.cudagraph_trees import get_manager

        manager = get_manager(0, create_if_none_exists=False)
    except Exception:  # no CUDA, or the internals moved: report nothing, not a guess
        return []
    if manager is None:
        return []
    sizes = []
    pending = [node for nodes in manager.roots.values() for node in nodes]
    while pending:
        node = pending.pop()
        pending.extend(child for nodes in node.children.values() for child in nodes)
        inputs = getattr(node, "reconstructed_inputs", None)
        indices = getattr(node, "non_static_input_idx", None)
        if inputs is None or indices is None:
            continue
        sizes.append(
            sum(
                inputs[i].nbytes
                for i in indices
                if i < len(inputs) and isinstance(inputs[i], torch.Tensor)
            )
        )
    return sizes
