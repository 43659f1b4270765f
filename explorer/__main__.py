"""``python -m explorer report SCRIPT_OR_TRACE -o DIR``: the explorer as one page in a folder.

A ``.py`` argument is run as ``__main__`` with every torch.compile compile it triggers
recorded; a ``.json`` file written by ``Exploration.to_json`` is read back; anything
else (a ``TORCH_TRACE`` directory, a ``.log`` or ``.log.gz`` file) is read with
``compiler.load_trace``. The result is one self-contained HTML page (no network
needed to open it) written with ``explorer.to_html``, ``DIR/explorer.html``, and the
Markdown report (``explorer.report.summarize``) beside it, ``DIR/report.md``.

``-o`` names a folder, as in ``python -m compiler report`` (which writes
``DIR/exploration.json``) and in tlparse: ``-o out`` makes ``out/explorer.html``, never a
page without a suffix. An ``-o`` ending in ``.html`` (the form before) still names the
page itself, its ``.md`` beside it.

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
            "write the explorer as one HTML page that opens offline (DIR/explorer.html) and "
            "the Markdown report (DIR/report.md)."
        ),
    )
    report.add_argument(
        "path",
        metavar="SCRIPT_OR_TRACE",
        help="a .py script (run as __main__), a TORCH_TRACE directory / .log / .log.gz "
        "file, or an Exploration .json",
    )
    report.add_argument(
        "-o", "--output", metavar="DIR", default="report",
        help="folder to write explorer.html and report.md into, as python -m compiler "
        "report writes its exploration.json (default: report); a name ending in .html "
        "is the page itself",
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
    page, markdown = pages(output)
    page.parent.mkdir(parents=True, exist_ok=True)
    to_html(exp, page)
    write_markdown(exp, markdown)
    _say(f"done in {time.perf_counter() - started:.1f} s")
    print(page)
    print(markdown)
    return 1 if failure else 0


def pages(output: Path) -> tuple[Path, Path]:
    """The page and the Markdown report that ``-o output`` names: in the folder
    ``output``, or, for a name ending in ``.html``, that page and its ``.md``.

    Example:
        >>> [str(p) for p in pages(Path("out"))]
        ['out/explorer.html', 'out/report.md']
        >>> [str(p) for p in pages(Path("pages/bert.html"))]
        ['pages/bert.html', 'pages/bert.md']
    """
    if output.suffix.lower() == ".html":
        return output, output.with_suffix(".md")
    return output / "explorer.html", output / "report.md"


def _say(message: str) -> None:
    print(f"explorer: {message}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
