"""Every graph text a test run parses, compared with the ``ast`` oracle at the end.

Load it into any selection of tests: ``PYTHONPATH=tests python -m pytest -p parse_oracle_plugin
tests/test_trace.py ...``. It records each distinct text ``parse_nodes`` reads (the
plugin calls through to the real parser; nothing is replaced) and, when the session
ends, parses each again with tests/graph_text_oracle.py. A text the scanner reads must
give the oracle's nodes exactly, or the session fails; texts it refuses are counted and
the first errors shown (hand-made and damaged texts in tests/test_graph_lines.py are
refused on purpose).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from compiler.model import Node
from compiler.parse import graph_text

_texts: dict[str, None] = {}
_scan: list[Callable[[str], tuple[Node, ...]]] = []


def _recording(text: str) -> tuple[Node, ...]:
    _texts[text] = None
    return _scan[0](text)


def pytest_configure(config: pytest.Config) -> None:
    _scan.append(graph_text.scan_nodes)
    graph_text.scan_nodes = _recording


def pytest_unconfigure(config: pytest.Config) -> None:
    if _scan:
        graph_text.scan_nodes = _scan.pop()


def pytest_sessionfinish(session: pytest.Session, exitstatus: Any) -> None:
    from graph_text_oracle import parse_nodes_with_ast

    same = refused = 0
    differ: list[str] = []
    errors: dict[str, None] = {}
    for text in _texts:
        nodes, error = graph_text.parse_nodes(text)
        if error is not None:
            refused += 1
            errors[error] = None
        elif (nodes, error) == parse_nodes_with_ast(text):
            same += 1
        else:
            differ.append(text)
    lines = [
        f"parse oracle: {len(_texts)} distinct graph texts parsed; {same} identical to ast, "
        f"{len(differ)} different, {refused} refused with an error"
    ]
    shown = list(errors)[:10]
    lines += [f"  refused: {e}" for e in shown]
    if len(errors) > len(shown):
        lines.append(f"  ... and {len(errors) - len(shown)} more refusals")
    lines += [f"  DIFFERENT from ast:\n{t[:2000]}" for t in differ[:3]]
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line("\n".join(lines))
    if differ:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
