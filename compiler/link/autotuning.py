"""Which output-code kernel runs the candidate max-autotune chose, where that is provable.

An extern choice (``mm``) is the kernel of the same library call
(``extern_kernels.mm``). A Triton template choice (``triton_mm_14``, a name the output
code never uses) is the one template kernel (``triton_tem_...``) whose ``tl.constexpr``
values, ``num_stages`` and ``num_warps`` equal every ``key=value`` of the candidate's
description. Anything less certain links nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from compiler.model import Autotuning, Kernel
from compiler.parse.triton.autotune import parse_config, template_config
from compiler.parse.words.names import extern_call

__all__ = ["chosen_kernel", "parse_config"]


def chosen_kernel(a: Autotuning, kernels: Iterable[Kernel]) -> str | None:
    """The id of the one kernel (with ``Kernel.id`` set) proven to run ``a.chosen``."""
    choice = next((ch for ch in a.choices if ch.name == a.chosen), None)
    if choice is None:
        return None
    if not choice.name.startswith("triton_"):
        found = [
            k.id
            for k in kernels
            if k.language == "extern" and k.name == extern_call(choice.name)
        ]
    else:
        want = dict(parse_config(choice.description))
        found = [
            k.id
            for k in kernels
            if want
            and k.language == "triton"
            and k.name.startswith("triton_tem_")
            and template_config(k.source).items() >= want.items()
        ]
    return found[0] if len(found) == 1 else None
