"""``python -m explorer report SCRIPT_OR_TRACE -o report.html``: the explorer as one file.

A ``.py`` argument is run as ``__main__`` with every torch.compile compile it triggers
recorded; a ``.json`` file written by ``Exploration.to_json`` is read back; anything
else (a ``TORCH_TRACE`` directory, a ``.log`` or ``.log.gz`` file) is read with
``compiler.load_trace``. The result is one self-contained HTML page (no network
needed to open it) written with ``explorer.to_html``, and the Markdown report
(``explorer.report.summarize``) next to it, with the same name ending in ``.md``.

Exit status: 0 on success, 1 when the script raised (what was captured is still
written), 2 for usage errors and ``compiler.ExploreError`` (no trace there, ...).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from compiler import ExploreError

# The same loader as ``python -m compiler report``: a script, a .json or a trace.
from compiler.capture.script import explore_path


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m explorer",
        description="Capture or load torch.compile's stages and write the explorer as HTML.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    report = commands.add_parser(
        "report",
        help="write the HTML explorer and a Markdown report for a script or a TORCH_TRACE log",
        description=(
            "Run a Python script with every torch.compile compile it triggers recorded, or "
            "read a TORCH_TRACE directory, a .log/.log.gz file or an Exploration .json, then "
            "write the explorer as one HTML file that opens offline, and the Markdown report "
            "beside it (same name, .md)."
        ),
    )
    report.add_argument(
        "path",
        metavar="SCRIPT_OR_TRACE",
        help="a .py script (run as __main__), a TORCH_TRACE directory / .log / .log.gz "
        "file, or an Exploration .json",
    )
    report.add_argument(
        "-o", "--output", metavar="FILE", default="report.html",
        help="HTML file to write; the .md goes beside it (default: report.html)",
    )  # fmt: skip
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the command; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        return _report(Path(args.path), Path(args.output))
    except ExploreError as exc:
        _say(str(exc).replace("\n", " "))
        return 2


def _report(path: Path, output: Path) -> int:
    from compiler.advise.breaks.registry import registry_note

    from .export import to_html
    from .report import write_markdown

    started = time.perf_counter()
    exp, failure = explore_path(path, progress=_say)
    if failure:
        _say(failure)
    if not exp.compiles:
        _say(f"{path} triggered no torch.compile compiles; the page says so and nothing more.")
    if exp.graph_breaks:
        _say(registry_note(exp.environment.torch))
    n = len(exp.compiles)
    _say(f"rendering {n} compile{'s' * (n != 1)} ...")
    output.parent.mkdir(parents=True, exist_ok=True)
    to_html(exp, output)
    markdown = write_markdown(exp, output.with_suffix(".md"))
    _say(f"done in {time.perf_counter() - started:.1f} s")
    print(output)
    print(markdown)
    return 1 if failure else 0


def _say(message: str) -> None:
    print(f"explorer: {message}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
