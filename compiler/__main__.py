"""``python -m compiler report SCRIPT_OR_TRACE -o DIR``: a report folder from the shell.

A ``.py`` argument is run as ``__main__`` with every torch.compile compile it triggers
recorded (``--nproc N``: on N ranks by torchrun, each under ``TORCH_TRACE``, and the ranks'
divergence printed; the script's own arguments follow ``--``); anything else (a
``TORCH_TRACE`` directory, a ``.log`` or ``.log.gz`` file) is read with ``load_trace``.
Either way ``exploration.json`` is written into DIR.
The Markdown report and the HTML page are the explorer's: ``python -m explorer report
DIR/exploration.json -o DIR`` adds ``DIR/explorer.html`` and ``DIR/report.md`` (``-o``
names a folder in both; ``compiler`` stays free of rendering and of the explorer's
dependencies).

Exit status: 0 on success, 1 when the script raised (what was captured is still
written), 2 for usage errors and ``compiler.ExploreError`` (no trace there, ...).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from compiler.capture.script import explore_path
from compiler.errors import ExploreError
from compiler.model import Exploration
from compiler.ranks.divergence import divergence
from compiler.ranks.launch import run_ranks

MARKDOWN_NOTE = (
    "the Markdown report and the HTML page now come from the explorer: "
    "python -m explorer report {path} -o {out}"
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m compiler",
        description="Capture torch.compile's stages headlessly and write them out.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    report = commands.add_parser(
        "report",
        help="write exploration.json for a script or a TORCH_TRACE log",
        description=(
            "Run a Python script with every torch.compile compile it triggers recorded, or "
            "read a TORCH_TRACE directory or .log/.log.gz file, then write exploration.json "
            "into the output folder. For report.md and the HTML page, run "
            "python -m explorer report."
        ),
    )
    report.add_argument(
        "path",
        metavar="SCRIPT_OR_TRACE",
        help="a .py script (run as __main__) or a TORCH_TRACE directory / .log / .log.gz file",
    )
    report.add_argument(
        "-o", "--output", metavar="DIR", default="report",
        help="folder to write exploration.json into (default: report)",
    )  # fmt: skip
    report.add_argument(
        "--nproc", type=int, default=0, metavar="N",
        help="run the script on N ranks with torchrun (gloo/NCCL as the script chooses), "
        "every rank under TORCH_TRACE, and load all ranks",
    )  # fmt: skip
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the command; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    # what follows `--` is the script's own (argparse's subcommands mishandle `--`)
    cut = argv.index("--") if "--" in argv else len(argv)
    args = _parser().parse_args(argv[:cut])
    args.script_args = argv[cut + 1 :]
    try:
        return _report(Path(args.path), Path(args.output), args.nproc, args.script_args)
    except ExploreError as exc:
        _say(str(exc))
        return 2


def _report(path: Path, out_dir: Path, nproc: int = 0, script_args: Sequence[str] = ()) -> int:
    if nproc:
        if path.suffix != ".py":
            raise ExploreError(f"--nproc runs a script on several ranks; {path} is not a .py file.")
        exp, failure = run_ranks(path, nproc, script_args, progress=_say)
        if len(exp.ranks) > 1:
            _say(divergence(exp).summary)
    else:
        exp, failure = explore_path(path, progress=_say)
    if failure:
        _say(failure)
    if not exp.compiles:
        _say(f"{path} triggered no torch.compile compiles; the report says so and nothing more.")
    print(_write_json(exp, out_dir))
    _say(MARKDOWN_NOTE.format(path=out_dir / "exploration.json", out=out_dir))
    return 1 if failure else 0


def _write_json(exp: Exploration, out_dir: Path) -> Path:
    path = out_dir / "exploration.json"
    text = exp.to_json(indent=1)  # before touching the disk: no half-written folder
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        msg = f"cannot write {path}: {exc}. Choose a folder you can write to."
        raise ExploreError(msg, exploration=exp) from exc
    return path


def _say(message: str) -> None:
    print(f"compiler: {message}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
