"""Memory findings from ``compiler.memory``: compiled peak memory above eager's, measured
at capture on CUDA (forward or backward), with the saved-for-backward tensors that explain
the difference. Cause key: ``memory|above_eager|<phase>``.
"""

from __future__ import annotations

from compiler.advise._common import Ranked, cause_key, finding
from compiler.advise.findings import Evidence
from compiler.costs.memory import memory
from compiler.link.ids import key_of, loc_key
from compiler.model import Exploration

_MIB = 2**20
_MARGIN = 1.05  # within 5% is allocator noise


def findings(exp: Exploration) -> list[Ranked]:
    """Compiled above eager, per phase; nothing where no peak was measured."""
    mem = memory(exp)
    eager, compiled = mem.peak("eager"), mem.peak("compiled")
    if eager is None or compiled is None:
        return []
    out = []
    for phase, e, c in (
        ("forward", eager.forward_bytes, compiled.forward_bytes),
        ("backward", eager.backward_bytes, compiled.backward_bytes),
    ):
        if e is None or c is None or c <= e * _MARGIN:
            continue
        evidence = [Evidence(text=f"{phase} peak: eager {e / _MIB:.1f} MiB, compiled "
                                  f"{c / _MIB:.1f} MiB")]
        biggest = sorted(
            ((s, cm) for cm in mem.compiles for s in cm.saved if s.kind == "activation"),
            key=lambda sc: -(sc[0].bytes or 0),
        )[:3]
        comp = {str(x.compile_id): x for x in exp.compiles}
        for s, cm in biggest:
            evidence.append(
                Evidence(
                    text=f"saved for backward: `{s.node}` {s.dtype}[{', '.join(s.shape)}] "
                    f"{(s.bytes or 0) / _MIB:.1f} MiB",
                    compile=key_of(comp[cm.compile_id]) if cm.compile_id in comp else None,
                    src=loc_key(s.source),
                )
            )
        out.append(
            finding(
                "memory.above_eager",
                "warning",
                f"Compiled {phase} needs {(c - e) / _MIB:.1f} MiB more than eager "
                f"({c / _MIB:.1f} against {e / _MIB:.1f} MiB)",
                evidence,
                "Trade recompute for memory: activation checkpointing of the repeated block "
                "(`torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)`), "
                "a memory budget for the partitioner "
                "(`torch._functorch.config.activation_memory_budget = 0.5`: below 1.0 it "
                "recomputes cheap ops instead of saving them), or selective recompute "
                "(`torch.utils.checkpoint.create_selective_checkpoint_contexts`). "
                "With mode=\"reduce-overhead\", the CUDA graph pool adds to the peak.",
                f"{(c - e) / _MIB:.1f} MiB above eager",
                score=(c - e) / _MIB,
                cause=cause_key("memory", "above_eager", phase),
            )
        )
    return out
