"""How many graph nodes of a trace carry a module stack, per graph stage and output code.

Counts every node but the output of each graph (``Node.module_stack`` non-empty), as a
trace gives them: the Dynamo graph reconstructed from parameter names, AOT graphs from
descriptors, source lines and dataflow, post-grad graphs from provenance, their AOT
graph and dataflow (compiler/link/post_stacks.py). Code no module runs (an optimizer step)
has none by nature, so the post-grad summary line leaves out ``inference`` output codes
of compiles whose Dynamo graph has no stack.

    python benchmarks/module_stacks.py /work/wt/traces/gpt2_train [more trace dirs]
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]


def coverage(trace: str) -> None:
    import compiler

    exp = compiler.load_trace(trace)
    total: collections.Counter[str] = collections.Counter()
    with_stack: collections.Counter[str] = collections.Counter()
    post = [0, 0]
    for c in exp.compiles:
        dynamo = c.graphs.get("dynamo_output_graph")
        has_modules = dynamo is not None and any(n.module_stack for n in dynamo.nodes)
        graphs = [(stage, g) for stage, g in c.graphs.items()]
        graphs += [(f"{oc.graph}/{s}", g) for oc in c.output_code for s, g in oc.graphs.items()]
        for stage, g in graphs:
            for n in g.nodes:
                if n.op == "output":
                    continue
                total[stage] += 1
                with_stack[stage] += bool(n.module_stack)
                if "post_grad" in stage and has_modules:
                    post[0] += bool(n.module_stack)
                    post[1] += 1
    print(trace)
    for stage in sorted(total):
        share = 100 * with_stack[stage] / total[stage]
        print(f"  {stage:40} {with_stack[stage]:7}/{total[stage]:<7} {share:5.1f}%")
    if post[1]:
        print(f"  post-grad nodes of compiles that ran modules: {post[0]}/{post[1]}"
              f" = {100 * post[0] / post[1]:.1f}%")


def main() -> None:
    for trace in sys.argv[1:] or [str(ROOT / "tests/data/traces/graph_break_eager")]:
        coverage(trace)


if __name__ == "__main__":
    main()
