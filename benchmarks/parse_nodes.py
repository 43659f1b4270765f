"""How much faster is ``parse_nodes`` (the line scanner) than the ``ast`` oracle?

Reads every graph text of the given traces (default: those of
``benchmarks/model_traces.py`` that exist) and, graph by graph, times the ``ast`` oracle
of the tests (``tests/graph_text_oracle.py``) and ``parse_nodes`` alternately,
``--rounds`` times, so both see the same load on a shared machine. Prints per-trace
totals and their ratio, and checks the two agree (nodes and parse error) on every graph.

``--reference DIR`` also times an older parser: DIR holds an older ``graph_text.py``
(and the ``graph_lines.py`` beside it, if it had one), e.g. ``mkdir /tmp/old && git
archive 89d6c89 compiler/parse | tar -x -C /tmp/old`` then ``--reference
/tmp/old/compiler/parse``. For one whose scanner handed graphs to ``ast``, it also
counts the graphs it handed over.

Run: ``python benchmarks/parse_nodes.py [TRACE_DIR ...] [--rounds 3] [--reference DIR]``.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from graph_text_oracle import parse_nodes_with_ast  # noqa: E402

import compiler  # noqa: E402
from compiler.parse.graph_text import parse_nodes  # noqa: E402

NAMES = ("gpt2_train", "bert_infer", "resnet_infer", "t5_infer")
DEFAULT_TRACES = [ROOT.parent / "traces" / n for n in NAMES]
Parse = Callable[[str], object]
_TEXT, _LINES = "compiler.parse.graph_text", "compiler.parse.graph_lines"


def graph_texts(trace: Path) -> list[str]:
    exp = compiler.load_trace(trace)
    return [
        g.text
        for c in exp.compiles
        for g in [*c.graphs.values(), *(g for oc in c.output_code for g in oc.graphs.values())]
    ]


class Reference:
    """An older ``graph_text.py`` (with its ``graph_lines.py``) loaded beside today's:
    while it runs, its modules stand in ``sys.modules`` under their own names, as the
    old code imports them (lazily, from inside its functions)."""

    def __init__(self, folder: Path) -> None:
        saved = {k: sys.modules[k] for k in (_TEXT, _LINES)}
        self.modules: dict[str, ModuleType] = {}
        try:
            for name, file in ((_TEXT, "graph_text.py"), (_LINES, "graph_lines.py")):
                if (folder / file).exists():
                    spec = importlib.util.spec_from_file_location(name, folder / file)
                    assert spec is not None and spec.loader is not None
                    self.modules[name] = sys.modules[name] = importlib.util.module_from_spec(spec)
            for module in self.modules.values():
                assert module.__spec__ is not None and module.__spec__.loader is not None
                module.__spec__.loader.exec_module(module)
        finally:
            sys.modules.update(saved)
        self.text = self.modules[_TEXT]

    def _within(self, call: Callable[[], Any]) -> Any:
        saved = {k: sys.modules[k] for k in self.modules}
        sys.modules.update(self.modules)
        try:
            return call()
        finally:
            sys.modules.update(saved)

    def parse(self, text: str) -> object:
        return self._within(lambda: self.text.parse_nodes(text))

    def handed_to_ast(self, text: str) -> bool:
        """Whether the old scanner gave this graph to its ``ast`` path."""
        lines = self.modules.get(_LINES)
        if lines is None:
            return True
        return bool(self._within(lambda: lines.scan_nodes(self.text._Parser(text)) is None))


def timed(parse: Parse, text: str) -> tuple[float, float]:
    """(wall, CPU) seconds of one parse; CPU time is the fairer ratio on a shared machine."""
    t0, c0 = time.perf_counter(), time.process_time()
    parse(text)
    return time.perf_counter() - t0, time.process_time() - c0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("traces", nargs="*", type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reference", type=Path)
    args = ap.parse_args()
    traces = args.traces or [t for t in DEFAULT_TRACES if any(t.glob("*.log"))]
    paths: dict[str, Parse] = {"ast": parse_nodes_with_ast, "scanner": parse_nodes}
    reference = Reference(args.reference) if args.reference else None
    if reference is not None:
        paths = {"before": reference.parse, **paths}
    for trace in traces:
        texts = graph_texts(trace)
        nodes = 0
        for text in texts:
            new, ref = parse_nodes(text), parse_nodes_with_ast(text)
            assert new == ref, f"the scanner and ast disagree on a graph of {trace}"
            assert new[1] is None, f"a graph of {trace} did not parse: {new[1]}"
            if reference is not None:
                assert reference.parse(text) == new, f"the reference disagrees on {trace}"
            nodes += len(new[0])
        handed = ""
        if reference is not None:
            count = sum(reference.handed_to_ast(t) for t in texts)
            handed = f"; the reference handed {count} of them to ast"
        wall = dict.fromkeys(paths, 0.0)
        cpu = dict.fromkeys(paths, 0.0)
        for _ in range(args.rounds):
            for text in texts:
                for name, parse in paths.items():
                    gc.collect()
                    w, c = timed(parse, text)
                    wall[name] += w
                    cpu[name] += c
        print(f"{trace.name}: {len(texts)} graphs, {nodes} nodes, all identical{handed}")
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
