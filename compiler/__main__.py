"""``python -m compiler report SCRIPT_OR_TRACE -o DIR``: a report folder from the shell.

A ``.py`` argument is run as ``__main__`` with every torch.compile compile it triggers
recorded; anything else (a ``TORCH_TRACE`` directory, a ``.log`` or ``.log.gz`` file)
is read with ``compiler.load_trace``. Either way ``exploration.json`` and ``report.md``
are written into DIR.

Exit status: 0 on success, 1 when the script raised (what was captured is still
written), 2 for usage errors and ``compiler.ExploreError`` (no trace there, ...).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .errors import ExploreError
from .report import write_report
from .script import explore_path


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m compiler",
        description="Capture torch.compile's stages headlessly and write them out.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    report = commands.add_parser(
        "report",
        help="write exploration.json and report.md for a script or a TORCH_TRACE log",
        description=(
            "Run a Python script with every torch.compile compile it triggers recorded, or "
            "read a TORCH_TRACE directory or .log/.log.gz file, then write exploration.json "
            "and report.md into the output folder."
        ),
    )
    report.add_argument(
        "path",
        metavar="SCRIPT_OR_TRACE",
        help="a .py script (run as __main__) or a TORCH_TRACE directory / .log / .log.gz file",
    )
    report.add_argument(
        "-o", "--output", metavar="DIR", default="report",
        help="folder to write exploration.json and report.md into (default: report)",
    )  # fmt: skip
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the command; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        return _report(Path(args.path), Path(args.output))
    except ExploreError as exc:
        _say(str(exc))
        return 2


def _report(path: Path, out_dir: Path) -> int:
    exp, failure = explore_path(path, progress=_say)
    if failure:
        _say(failure)
    if not exp.compiles:
        _say(f"{path} triggered no torch.compile compiles; the report says so and nothing more.")
    for written in write_report(exp, out_dir):
        print(written)
    return 1 if failure else 0


def _say(message: str) -> None:
    print(f"compiler: {message}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
