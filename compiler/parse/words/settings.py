"""What torch says about the settings a graph ran under: why CUDA graphs were skipped
(Inductor's skip reason) and whether the guards pinned TF32 off (Dynamo's global state)."""

from __future__ import annotations

import re

# the causes of a CUDA graph skip, by the words Inductor's reason uses, checked in order
# ("skipping cudagraphs due to mutated inputs", "... cpu device", "... non gpu ops")
SKIP_CAUSES = ("mutated", "cpu", "dynamic", "non gpu")
_TF32_OFF = re.compile(r'"allow_tf32"\s*:\s*false')


def cudagraph_skip_cause(reason: str) -> str:
    """Which of ``SKIP_CAUSES`` a CUDA graph skip reason names, "" for none.

    Example:
        >>> cudagraph_skip_cause("skipping cudagraphs due to mutated inputs (1 instances)")
        'mutated'
    """
    low = reason.lower()
    return next((cause for cause in SKIP_CAUSES if cause in low), "")


def tf32_off(guard_tree: str) -> bool:
    """Whether a guard tree's global state says TF32 matmuls were off.

    Example:
        >>> tf32_off('GLOBAL_STATE: ___check_global_state() against {"allow_tf32":false}')
        True
    """
    return _TF32_OFF.search(guard_tree) is not None
