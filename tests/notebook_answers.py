"""Checked answers: a solution states its fact in markup the test suite evaluates.

In an exercise's folded solution, a stated number or fact is written as
``<code title="check: EXPR">VALUE</code>``: the reader sees VALUE (and, on hover, what
checks it); the notebook tests insert, after the first code cell that follows the
exercise, a cell that evaluates EXPR in the kernel and fails unless ``str(EXPR)`` is
VALUE. ``check+N:`` evaluates after the N-th following code cell instead, for an answer
that a later cell computes. So no stated answer can drift from what torch does.
"""

from __future__ import annotations

import copy
import re

import nbformat

CHECK = re.compile(
    r'<code title="check(?:\+(?P<after>\d+))?: (?P<expr>[^"]+)">(?P<stated>[^<]*)</code>'
)
TAG = "answer-check"
_EXERCISE = re.compile(r"^#+\s+Exercise\b")


def answer_checks(source: str) -> list[tuple[int, str, str]]:
    """(code cells after the exercise, expression, stated text) of each checked statement.

    >>> answer_checks('<code title="check: len(exp.compiles)">2</code> compiles')
    [(1, 'len(exp.compiles)', '2')]
    """
    import html

    return [
        (int(m["after"] or 1), html.unescape(m["expr"]), html.unescape(m["stated"]).strip())
        for m in CHECK.finditer(source)
    ]


def exercises(nb: nbformat.NotebookNode) -> list[tuple[int, str]]:
    """(cell index, source) of each exercise: a markdown cell headed ``### Exercise...``."""
    return [
        (i, c.source)
        for i, c in enumerate(nb.cells)
        if c.cell_type == "markdown" and _EXERCISE.match(c.source.lstrip())
    ]


def with_answer_checks(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``nb`` with a check cell (tagged ``answer-check``) after the code cell
    that computes each exercise's stated answers."""
    out = copy.deepcopy(nb)
    inserts: dict[int, list[tuple[int, str, str]]] = {}
    for index, source in exercises(nb):
        code_after = [i for i in range(index + 1, len(nb.cells)) if nb.cells[i].cell_type == "code"]
        for after, expr, stated in answer_checks(source):
            if after > len(code_after):
                msg = f"exercise in cell {index} checks {expr!r} after code cell {after}: none"
                raise AssertionError(msg)
            inserts.setdefault(code_after[after - 1], []).append((index, expr, stated))
    for at in sorted(inserts, reverse=True):
        lines = ["# inserted by the notebook tests: the solutions' stated answers"]
        for index, expr, stated in inserts[at]:
            lines += [
                f"__got = str({expr})",
                f"assert __got == {stated!r}, (",
                f"    'exercise in cell {index}: the solution states ' + {stated!r} + "
                f"' for {expr.replace(chr(39), chr(34))}, the notebook computed ' + repr(__got))",
            ]
        cell = nbformat.v4.new_code_cell("\n".join(lines), metadata={"tags": [TAG]})
        out.cells.insert(at + 1, cell)
    return out


def is_check(cell: nbformat.NotebookNode) -> bool:
    """Whether a cell is an inserted answer check (run once, not on a reader's re-run)."""
    return TAG in cell.get("metadata", {}).get("tags", [])
