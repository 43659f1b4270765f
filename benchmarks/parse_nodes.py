"""How much faster is ``parse_nodes`` (line scanner first) than its ``ast`` reference?

Reads every graph text of the given traces (default: the three of
``benchmarks/model_traces.py``) and, graph by graph, times the reference
(``parse_nodes_with_ast``) and ``parse_nodes`` alternately, ``--rounds`` times, so both
see the same load on a shared machine. Prints per-trace totals and their ratio, and
checks the two agree (nodes and parse error) on every graph.

``--reference FILE`` also times an older ``graph_text.py`` (e.g. ``git show
main:compiler/parse/graph_text.py > /tmp/old_graph_text.py``), the code before the scanner.

Run: ``python benchmarks/parse_nodes.py [TRACE_DIR ...] [--rounds 3] [--reference FILE]``.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import compiler  # noqa: E402
from compiler.parse.graph_text import parse_nodes, parse_nodes_with_ast  # noqa: E402

DEFAULT_TRACES = [ROOT.parent / "traces" / n for n in ("gpt2_train", "bert_infer", "resnet_infer")]
Parse = Callable[[str], object]


def graph_texts(trace: Path) -> list[str]:
    exp = compiler.load_trace(trace)
    return [
        g.text
        for c in exp.compiles
        for g in [*c.graphs.values(), *(g for oc in c.output_code for g in oc.graphs.values())]
    ]


def load_reference(path: Path) -> Parse:
    spec = importlib.util.spec_from_file_location("compiler._graph_text_reference", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    parse: Parse = module.parse_nodes
    return parse


def timed(parse: Parse, text: str) -> tuple[float, float]:
    """(wall, CPU) seconds of one parse; CPU time is the fairer ratio on a shared machine."""
    t0, c0 = time.perf_counter(), time.process_time()
    parse(text)
    return time.perf_counter() - t0, time.process_time() - c0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("traces", nargs="*", type=Path, default=DEFAULT_TRACES)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reference", type=Path)
    args = ap.parse_args()
    paths: dict[str, Parse] = {"ast": parse_nodes_with_ast, "scanner": parse_nodes}
    if args.reference:
        paths = {"before": load_reference(args.reference), **paths}
    for trace in args.traces:
        texts = graph_texts(trace)
        nodes = 0
        for text in texts:
            new, ref = parse_nodes(text), parse_nodes_with_ast(text)
            assert new == ref, f"the scanner and ast disagree on a graph of {trace}"
            nodes += len(new[0])
        wall = dict.fromkeys(paths, 0.0)
        cpu = dict.fromkeys(paths, 0.0)
        for _ in range(args.rounds):
            for text in texts:
                for name, parse in paths.items():
                    gc.collect()
                    w, c = timed(parse, text)
                    wall[name] += w
                    cpu[name] += c
        print(f"{trace.name}: {len(texts)} graphs, {nodes} nodes, all identical")
        for label, totals in (("wall", wall), ("CPU", cpu)):
            per_round = {k: v / args.rounds for k, v in totals.items()}
            line = ", ".join(f"{k} {v:.3f} s" for k, v in per_round.items())
            ratios = ", ".join(
                f"{k}/scanner {per_round[k] / per_round['scanner']:.2f}x"
                for k in per_round
                if k != "scanner"
            )
            print(f"  {label:4s} per round: {line}; {ratios}")


if __name__ == "__main__":
    main()
