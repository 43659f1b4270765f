"""Run a Python script with every torch.compile compile it triggers recorded."""

from __future__ import annotations

import runpy
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

from compiler._torch_files import torch_needed
from compiler.errors import ExploreError
from compiler.model import Exploration
from compiler.trace.load import load_trace


def explore_path(
    path: Path, *, progress: Callable[[str], None] | None = None
) -> tuple[Exploration, str]:
    """An Exploration from whatever ``path`` is: a ``.py`` script (run under capture),
    an Exploration ``.json``, or a ``TORCH_TRACE`` directory or log.

    Returns it with a one-line failure message when a script raised ('' otherwise).
    Reading a trace or a ``.json`` never executes anything from it.

    Example:
        >>> exp, failure = explore_path(Path("/tmp/my_trace"))  # doctest: +SKIP
    """
    if path.suffix == ".py":
        return explore_script(path, progress=progress)
    if progress is not None:
        progress(f"reading {path} ...")
    if path.suffix == ".json" and path.is_file():
        try:
            return Exploration.from_json(path.read_text(encoding="utf-8")), ""
        except (OSError, ValueError) as exc:
            msg = f"cannot read {path} as an Exploration .json: {exc}"
            raise ExploreError(msg) from exc
    return load_trace(path), ""


def explore_script(
    script: Path, *, progress: Callable[[str], None] | None = None
) -> tuple[Exploration, str]:
    """Run ``script`` as ``__main__`` with every compile it triggers recorded.

    Returns the Exploration and, if the script failed, a one-line message saying how
    (what it compiled before failing is still in the Exploration).

    Raises:
        ExploreError: there is no such file.

    Example:
        >>> exp, failure = explore_script(Path("examples/graph_break.py"))  # doctest: +SKIP
    """
    if not script.is_file():
        msg = f"no script at {script}: the file does not exist. Pass the path of a .py file."
        raise ExploreError(msg)
    try:  # capture needs torch; reading a trace (explore_path) does not
        from compiler.capture.recording import recording
    except ImportError as exc:
        raise torch_needed(f"running {script} under capture", exc) from exc
    if progress is not None:
        progress(f"running {script} under capture ...")
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
