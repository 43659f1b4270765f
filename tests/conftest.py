import logging
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(scope="session", autouse=True)
def _torch_settled():
    """One plain compile first: torch's own LazyTraceHandler removes itself from the
    trace logger on the first trace record when TORCH_TRACE is unset. That one-time
    change is torch's, and state comparisons must not blame capture for it."""
    import torch

    torch.compile(lambda x: x + 1, backend="eager")(torch.zeros(1))
    torch.compiler.reset()


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    import torch

    torch.compiler.reset()
    yield
    torch.compiler.reset()


def torch_state():
    """Everything capture may touch, as comparable values."""
    from torch._dynamo.convert_frame import _bytecode_hooks

    from compiler import _compat

    trace_log = _compat.trace_logger()
    loggers = [trace_log] + [_compat.fusion_ir_logger(a) for a in _compat.FUSION_IR_ARTIFACTS]
    return {
        "loggers": [(lg.name, lg.level, lg.propagate, list(lg.handlers)) for lg in loggers],
        "inductor": _compat.inductor_config_snapshot(),
        "functorch": _compat.functorch_config_snapshot(),
        "dynamo": _compat.dynamo_config_snapshot(),
        "bytecode_hooks": list(_bytecode_hooks),
        "root_handlers": list(logging.getLogger().handlers),
        "torch_handlers": list(logging.getLogger("torch").handlers),
        # where Inductor and Triton keep their caches: capture must not move them
        "cache_dirs": [os.environ.get(v) for v in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")],
        # what capture swaps while Inductor formats its fusion IR (_compat.fusion_ir_formatted_once)
        "fusion_ir_printing": _fusion_ir_printing(),
    }


def _fusion_ir_printing():
    from sympy.core._print_helpers import Printable
    from torch._inductor.debug import DebugFormatter
    from torch._inductor.loop_body import LoopBodyBlock

    return [
        DebugFormatter.__dict__["_write_ir"],
        LoopBodyBlock.__dict__["debug_str"],
        Printable.__dict__["__str__"],
        Printable.__dict__["__repr__"],
    ]


@pytest.fixture
def subprocess_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "tests"), env.get("PYTHONPATH", "")])
    return env


# Tests of files other work changes often, left to the full tier (scripts/test.sh --all) here
# rather than by a marker in their file: each takes a minute or more of the fast tier's ten.
FULL_TIER = {
    # every recorded kernel through Triton's lowering: the fast tier lowers one
    "tests/test_lab.py::test_every_recorded_kernel_relowers_and_unedited_reproduces_its_recorded_ptx",
    "tests/test_live_state.py::test_a_library_models_method_is_live_edited",  # a transformers model
    "tests/test_live.py::test_a_hanging_edit_is_stopped_and_the_next_edit_compiles",  # waits a hang
    # two processes, live and from a trace
    "tests/test_compiled_autograd.py::"
    "test_compiled_autograds_backward_graph_is_captured_live_and_from_a_trace",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid in FULL_TIER:
            item.add_marker(pytest.mark.slow)
    import torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device: run `pytest -m gpu` on the GPU machine")
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            item.add_marker(skip)


GPT2_LAYERS = 6


@pytest.fixture(scope="session")
def gpt2_training():
    """A ``GPT2_LAYERS``-layer GPT-2 training step (``programs.gpt2_training_step``) explored
    under aot_eager, once per session for the tests that only read it (its explore takes
    seconds): the offline page's and the graph canvas's."""
    pytest.importorskip("transformers")
    import programs

    import compiler

    return compiler.explore(*programs.gpt2_training_step(GPT2_LAYERS), backend="aot_eager")


@pytest.fixture(scope="session")
def gpt2_training_inductor():
    """A 2-layer GPT-2 training step explored under Inductor (C++ kernel builds: the slowest
    explore of the suite), once per session: the AOT stacks' and the graph canvas's."""
    pytest.importorskip("transformers")
    import programs

    import compiler

    return compiler.explore(*programs.gpt2_training_step(2), backend="inductor")


def recorded_key(exp, text: str) -> str:
    """The source-line key of ``text`` in a recording's first compiled function, from
    the source and paths it was recorded with (the machine that made it had its own
    checkout path)."""
    c = exp.compiles[0]
    lines = (c.bytecode.source or "").split("\n")
    offset = next(i for i, line in enumerate(lines) if text in line)
    return f"{c.filename}:{c.first_line + offset}"


def built_view(exp):
    """The index of ``exp`` as JSON data, each compile's ``panes`` replaced by every pane
    built (``explorer.panes``), as the exported page carries them."""
    from explorer.panes import build_index, build_pane, pane_json

    view = pane_json(build_index(exp))
    for c in view["compiles"]:
        c["panes"] = [pane_json(build_pane(exp, c["key"], p["id"])) for p in c["panes"]]
    return view


def ipython_shell():
    """The test IPython shell of this process. IPython's ``start_ipython`` makes it once and
    answers None on later calls, so its ``get_ipython`` gives None to every test file but the
    first that asks: take the running shell then."""
    from IPython import get_ipython
    from IPython.testing.globalipapp import start_ipython

    return start_ipython() or get_ipython()


# Debian's chromium, driven by Playwright. Without these flags its background connections
# (updates, sync, QUIC probes) are refused by a closed network and it can stall or fail; the
# sandbox needs user namespaces root lacks.
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
BROWSER_SETUP = "install it with `bash scripts/setup.sh --browser test lab`"


def chromium_missing() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    import importlib.util

    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        return f"{CHROMIUM} (Debian's chromium) is missing; {BROWSER_SETUP}"
    if importlib.util.find_spec("playwright") is None:
        return f"playwright is not installed; {BROWSER_SETUP}"
    return None


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium per test module (its pages are the tests' own)."""
    missing = chromium_missing()
    if missing:
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


# the exported page's root once the explorer has drawn it; a selector, not
# wait_for_function: polling a predicate evaluates code, which the page's
# Content-Security-Policy forbids
PAGE_SHOWN = ".tce-root[data-shown]"


def open_html(
    browser,
    path: Path,
    *,
    width: int = 1400,
    height: int = 820,
    ready: str | None = PAGE_SHOWN,
    **options,
):
    """Open the HTML file ``path`` in a new page of ``browser`` (``options`` for
    ``new_page``) and wait for ``ready`` (a selector; None: the load alone). Returns the
    page and the list its problems go to: console errors and warnings, uncaught errors,
    dialogs, and any network request (the exported page works offline)."""
    page = browser.new_page(viewport={"width": width, "height": height}, **options)
    problems: list[str] = []
    page.on(
        "console",
        lambda m: (
            problems.append(f"console {m.type}: {m.text}")
            if m.type in ("error", "warning")
            else None
        ),
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
    page.on(
        "request",
        lambda r: (
            None
            if r.url.startswith(("file:", "data:", "blob:"))
            else problems.append(f"network request: {r.url}")
        ),
    )
    page.goto(path.as_uri())
    if ready is not None:
        page.locator(ready).wait_for(state="attached", timeout=30_000)
    return page, problems


@pytest.fixture
def open_page(browser):
    """``open_page(path)``: ``open_html`` on the module's browser; the pages close after
    the test."""
    pages = []

    def _open(path: Path, **options):
        page, problems = open_html(browser, path, **options)
        pages.append(page)
        return page, problems

    yield _open
    for page in pages:
        page.close()
