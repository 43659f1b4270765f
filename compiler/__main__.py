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
import runpy
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from .capture import recording
from .errors import ExploreError
from .model import Exploration
from .report import write_report
from .trace import load_trace


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
    status = 0
    if path.suffix == ".py":
        exp, failure = _run_script(path)
        if failure:
            _say(failure)
            status = 1
    else:
        _say(f"reading the trace at {path} ...")
        exp = load_trace(path)
    if not exp.compiles:
        _say(f"{path} triggered no torch.compile compiles; the report says so and nothing more.")
    for written in write_report(exp, out_dir):
        print(written)
    return status


def _run_script(script: Path) -> tuple[Exploration, str]:
    """Run ``script`` as ``__main__`` under capture; returns what was recorded and, if
    the script failed, a one-line message saying how."""
    if not script.is_file():
        msg = f"no script at {script}: the file does not exist. Pass the path of a .py file."
        raise ExploreError(msg)
    _say(f"running {script} under capture ...")
    failure = ""
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    # As `python script.py` would: argv[0] is the script, its folder is first on sys.path.
    sys.argv = [str(script)]
    sys.path.insert(0, str(script.resolve().parent))
    try:
        with recording() as rec:
            rec.target = str(script)
            try:
                runpy.run_path(str(script), run_name="__main__")
            except SystemExit as exc:
                if exc.code not in (None, 0):
                    failure = f"{script} exited with status {exc.code}; writing what was captured."
            except Exception as exc:
                where = _script_frame(exc, script)
                first = str(exc).strip().split("\n", 1)[0]
                failure = (
                    f"{script} raised {type(exc).__name__}{where}: {first}. "
                    "Writing what was captured before it; run the script directly for the "
                    "full traceback."
                )
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    return rec.exploration(), failure


def _script_frame(exc: BaseException, script: Path) -> str:
    """`` at script.py:12`` for the deepest frame of the traceback inside ``script``."""
    target = script.resolve()
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        try:
            if Path(frame.filename).resolve() == target:
                line = frame.lineno
        except OSError:
            continue
    return f" at {script}:{line}" if line else ""


def _say(message: str) -> None:
    print(f"compiler: {message}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
