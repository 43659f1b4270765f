"""The explorer in a real browser: JupyterLab and Notebook 7, driven by Playwright.

A JupyterLab server is started on 127.0.0.1 (a random token, a free port, a temporary root
directory, its own config/settings/runtime directories) with a notebook written here:
``%load_ext explorer``, a tensor ``x``, and a ``%%compile`` cell. Debian's chromium opens it,
runs every cell through JupyterLab's own ``notebook:run-all-cells`` command, waits for the
explorer widget in the output of the ``%%compile`` cell, and checks what a user sees: the
compile selector lists ``0/0``, the Dynamo graph is drawn, the C++ kernel source is shown, and
clicking a source line highlights what it became. Screenshots land in ``tests/artifacts/``.

Needs chromium (``bash scripts/setup.sh --browser test lab``). Runs Inductor on the CPU, so
the whole module is ``slow``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import BROWSER_SETUP, chromium_missing

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts"

SERVER_START_S = 90  # jupyter lab answering /api/status
KERNEL_READY_S = 90  # the page loaded and its kernel idle
RUN_S = 180  # all cells run: importing torch and an Inductor compile on a 2-core CPU
WIDGET_S = 30  # the widget's front-end rendered once its cell has run
# the cells of the notebook on show: the module's server keeps one workspace, so a page
# opened by a later test also restores, hidden, the notebooks earlier tests opened
SHOWN_CELLS = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell"
STEP_MS = 10_000  # one click's effect showing up

# The notebook the browser runs: godbolt-shaped, a snippet whose free names come from the
# user namespace; the default backend (inductor) so there are C++ kernels to link to.
CELLS = [
    "%load_ext explorer",
    "import torch\n\ntorch.manual_seed(0)\nx = torch.randn(64, 64)",
    "%%compile\ny = torch.sin(x) + 1\n(y * 2).relu()",
]
COMPILE_CELL = 2


def _missing_requirement() -> str | None:
    for module in ("playwright", "jupyterlab", "notebook", "nbformat", "ipykernel", "anywidget"):
        if importlib.util.find_spec(module) is None:
            return f"the Python package {module!r} is not installed; {BROWSER_SETUP}"
    return chromium_missing()


_MISSING = _missing_requirement()
if _MISSING is not None:
    pytest.skip(_MISSING, allow_module_level=True)


# ---------------------------------------------------------------------------------------------
# The server
# ---------------------------------------------------------------------------------------------


@dataclass
class Server:
    port: int
    token: str
    root: Path
    log: Path
    process: subprocess.Popen[bytes]

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path.lstrip('/')}?token={self.token}"

    def api(self, path: str, method: str = "GET") -> Any:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/api/{path}",
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            body = response.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            for kernel in self.api("kernels"):
                self.api(f"kernels/{kernel['id']}", method="DELETE")

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError as error:
            return f"(no server log: {error})"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_notebook(path: Path, cells: list[str]) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    nbformat.write(nb, path)


def _write_settings(settings_dir: Path) -> None:
    # No "get notified about Jupyter news?" toast (it would cover the widget) and no fetches.
    notification = settings_dir / "@jupyterlab" / "apputils-extension"
    notification.mkdir(parents=True, exist_ok=True)
    (notification / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )


@contextlib.contextmanager
def jupyter_server(root: Path, state: Path) -> Iterator[Server]:
    """``jupyter lab`` serving ``root`` on 127.0.0.1; shut down (kernels too) on exit."""
    port, token = _free_port(), secrets.token_hex(24)
    _write_settings(state / "settings")
    env = dict(os.environ)
    env.update(
        # Isolated from the user's Jupyter set-up: config, kernelspecs, settings, workspaces
        # (a saved workspace would reopen other documents), runtime files, IPython profile.
        JUPYTER_CONFIG_DIR=str(state / "config"),
        JUPYTER_DATA_DIR=str(state / "data"),
        JUPYTER_RUNTIME_DIR=str(state / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(state / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(state / "workspaces"),
        IPYTHONDIR=str(state / "ipython"),
        # The kernel imports this checkout's explorer even if the editable install predates it.
        PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p),
        PYTHONUNBUFFERED="1",
    )
    command = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--allow-root",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        # Nothing that reaches the network: news, update checks, the PyPI extension manager.
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
        # window.jupyterapp, to run cells through the application's own commands.
        "--LabApp.expose_app_in_browser=True",
        "--JupyterNotebookApp.expose_app_in_browser=True",
    ]
    log = state / "server.log"
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            command,
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = Server(port=port, token=token, root=root, log=log, process=process)
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            if process.poll() is not None:
                pytest.fail(f"jupyter lab exited with {process.returncode}:\n{server.log_tail()}")
            with contextlib.suppress(OSError, ValueError):
                if "started" in server.api("status"):
                    break
            if time.monotonic() > deadline:
                pytest.fail(
                    f"jupyter lab did not answer in {SERVER_START_S} s:\n{server.log_tail()}"
                )
            time.sleep(0.25)
        yield server
    finally:
        _stop(server)


def _stop(server: Server) -> None:
    process = server.process
    if process.poll() is None:
        # Kernels run in process sessions of their own: the server ends them, through the
        # API first, and on SIGTERM too.
        server.shutdown_kernels()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


# ---------------------------------------------------------------------------------------------
# The browser
# ---------------------------------------------------------------------------------------------


@dataclass
class Messages:
    """What the page reported: console errors/warnings and uncaught exceptions."""

    console: list[tuple[str, str, str]] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)

    def errors(self) -> list[str]:
        out = [f"console.{kind}: {text} ({where})" for kind, text, where in self.console]
        return out + [f"uncaught: {e}" for e in self.page_errors]


def open_page(browser: Any, messages: Messages) -> Any:
    context = browser.new_context(viewport={"width": 1400, "height": 1200})
    page = context.new_page()

    def on_console(message: Any) -> None:
        if message.type in ("error", "assert"):
            location = message.location or {}
            where = f"{location.get('url', '')}:{location.get('lineNumber', '')}"
            messages.console.append((message.type, message.text, where))

    def on_page_error(error: Any) -> None:
        messages.page_errors.append(f"{error.message}\n{error.stack or ''}".strip())

    page.on("console", on_console)
    page.on("pageerror", on_page_error)
    return page


# The notebook panel the page shows, once its document and kernel are ready (null until then).
_PANEL_JS = """
(path) => {
  const app = window.jupyterapp;
  if (!app || !app.shell) return null;
  const candidates = [app.shell.currentWidget];
  if (app.shell.widgets) for (const w of app.shell.widgets('main')) candidates.push(w);
  return candidates.find((w) => w && w.context && w.context.path === path
                         && w.sessionContext && w.content && w.content.widgets) || null;
}
"""

_KERNEL_STATE_JS = f"""
(path) => {{
  const panel = ({_PANEL_JS})(path);
  if (!panel) return 'no notebook panel';
  if (!panel.context.isReady) return 'document loading';
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  if (!kernel) return 'no kernel';
  return kernel.status;
}}
"""

# Not awaited (the command's promise lasts as long as the cells run): run_all_cells polls.
_RUN_ALL_JS = f"""
(path) => {{
  const panel = ({_PANEL_JS})(path);
  window.jupyterapp.shell.activateById(panel.id);
  window.__runAllError = null;
  window.jupyterapp.commands.execute('notebook:run-all-cells')
    .catch((e) => {{ window.__runAllError = String(e); }});
}}
"""

# Per code cell: execution count and outputs in brief (type, error name/value, text head).
_CELLS_JS = f"""
(path) => {{
  const panel = ({_PANEL_JS})(path);
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  const cells = panel.content.widgets.map((cell) => {{
    const model = cell.model;
    const outputs = [];
    if (model.outputs) for (let i = 0; i < model.outputs.length; i++) {{
      const o = model.outputs.get(i).toJSON();
      let text = o.text || (o.data && (o.data['text/plain'] || '')) || '';
      if (Array.isArray(text)) text = text.join('');
      outputs.push({{type: o.output_type, ename: o.ename || '', evalue: o.evalue || '',
                    traceback: (o.traceback || []).join('\\n'), text: String(text).slice(0, 2000),
                    mimes: Object.keys(o.data || {{}})}});
    }}
    return {{count: model.executionCount, outputs}};
  }});
  return {{kernel: kernel ? kernel.status : 'none', cells, error: window.__runAllError}};
}}
"""


def wait_for_kernel(page: Any, path: str) -> None:
    state = "page loading"
    deadline = time.monotonic() + KERNEL_READY_S
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):  # the page may still be navigating
            state = page.evaluate(_KERNEL_STATE_JS, path)
        if state == "idle":
            return
        page.wait_for_timeout(250)
    pytest.fail(f"{path}: the kernel was not idle within {KERNEL_READY_S} s (last: {state})")


def run_notebook(page: Any, server: Server, path: str, expected: int) -> list[dict[str, Any]]:
    """Open notebook ``path`` of the server in JupyterLab, wait for its kernel, and run its
    ``expected`` cells (``run_all_cells``)."""
    page.goto(server.url(f"lab/tree/{path}"), wait_until="domcontentloaded")
    wait_for_kernel(page, path)
    return run_all_cells(page, path, expected)


def _strip_ansi(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def run_all_cells(page: Any, path: str, expected: int) -> list[dict[str, Any]]:
    """Runs every cell; returns the cells' states once all ran. Fails on any error output."""
    page.evaluate(_RUN_ALL_JS, path)
    deadline = time.monotonic() + RUN_S
    state: dict[str, Any] = {}
    while time.monotonic() < deadline:
        state = page.evaluate(_CELLS_JS, path)
        if state["error"]:
            pytest.fail(f"{path}: notebook:run-all-cells failed: {state['error']}")
        for index, cell in enumerate(state["cells"]):
            for output in cell["outputs"]:
                if output["type"] == "error":
                    pytest.fail(
                        f"{path}: cell {index} raised {output['ename']}: {output['evalue']}\n"
                        + _strip_ansi(output["traceback"])
                    )
        counts = [cell["count"] for cell in state["cells"]]
        if len(counts) == expected and all(counts) and state["kernel"] == "idle":
            return list(state["cells"])
        page.wait_for_timeout(500)
    pytest.fail(f"{path}: the cells did not all run within {RUN_S} s; last state: {state}")


# ---------------------------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------------------------

LAB_NOTEBOOK = "explorer_lab.ipynb"
NB7_NOTEBOOK = "explorer_notebook7.ipynb"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("jupyter_root")
    for name in (LAB_NOTEBOOK, NB7_NOTEBOOK):
        write_notebook(root / name, CELLS)
    with jupyter_server(root, tmp_path_factory.mktemp("jupyter_state")) as running:
        yield running


# ---------------------------------------------------------------------------------------------
# The explorer in the page (class names from explorer/static/**/*.js)
# ---------------------------------------------------------------------------------------------

# Errors that come from the widget: anywidget imports the bundle from a blob: URL and logs
# render failures itself; the widget manager's own errors name @jupyter-widgets.
_WIDGET_MARKERS = (
    "blob:",
    "anywidget",
    "explorer.js",
    "ExplorationWidget",
    "tce-",
    "@jupyter-widgets",
)


def widget_errors(messages: Messages) -> list[str]:
    return [e for e in messages.errors() if any(m in e for m in _WIDGET_MARKERS)]


def explorer_in_cell(page: Any, index: int) -> Any:
    """The explorer's root element in the outputs of code cell ``index``, once rendered."""
    cell = page.locator(SHOWN_CELLS).nth(index)
    root = cell.locator(".jp-OutputArea .tce-root")
    try:
        root.wait_for(state="attached", timeout=WIDGET_S * 1000)
    except Exception:
        outputs = cell.locator(".jp-OutputArea").inner_text(timeout=5000)
        pytest.fail(
            f"no explorer (.tce-root) in the outputs of cell {index} within {WIDGET_S} s; "
            f"the outputs read:\n{outputs[:3000]}"
        )
    root.scroll_into_view_if_needed()
    return root


def check_explorer(root: Any, graph_shot: Path) -> dict[str, str]:
    """What a user checks first: compiles, the graph, the kernel, source -> kernel links.

    Saves the widget showing the Dynamo graph, with the clicked line's nodes lit, to
    ``graph_shot``.
    """
    from playwright.sync_api import expect

    found: dict[str, str] = {}
    # The compile selector lists 0/0.
    ids = root.locator(".tce-compiles .tce-compile .tce-cid")
    expect(ids.first).to_be_visible(timeout=STEP_MS)
    assert "0/0" in [t.strip() for t in ids.all_inner_texts()]

    # The Dynamo graph, drawn by the graph canvas once Python sent the pane.
    root.locator('.tce-tabs .tce-tab[data-stage="dynamo_output_graph"]').click()
    graph = root.locator(".tce-pane .gc svg").first
    expect(graph).to_be_visible(timeout=STEP_MS)
    found["graph"] = "graph canvas"
    nodes = root.locator(".tce-pane .gc-unit")
    expect(nodes.first).to_be_attached(timeout=STEP_MS)
    assert nodes.count() >= 3, "the Dynamo graph of sin, add, mul, relu has more nodes"

    # The output code, with the C++ kernel Inductor generated.
    tab = root.locator('.tce-tabs .tce-tab[data-stage$="/inductor_output_code"]').first
    expect(tab).to_be_visible(timeout=STEP_MS)
    tab.click()
    code = root.locator(".tce-pane .tce-code")
    expect(code).to_contain_text(re.compile(r'cpp_fused|extern "C"'), timeout=STEP_MS)
    # the kernel's own source, inside the Python string, is highlighted as C++
    cpp_keyword = root.locator(".tce-pane .tce-row.tce-in-kernel .t-k", has_text="extern")
    expect(cpp_keyword.first).to_be_attached(timeout=STEP_MS)
    kernel_chips = root.locator(".tce-pane .tce-kernels .tce-kernel")
    expect(kernel_chips.first).to_be_visible(timeout=STEP_MS)
    found["kernels"] = ", ".join(kernel_chips.all_inner_texts())
    assert not root.locator(".tce-pane .tce-row.tce-in-kernel.hl").count(), "nothing selected"

    # Clicking the cell's last source line highlights the kernel it became...
    linked = root.locator('.tce-source .tce-row[data-linked="1"]')
    expect(linked.first).to_be_visible(timeout=STEP_MS)
    line = linked.filter(has_text="relu").first
    found["source line"] = line.inner_text().replace("\n", " ")
    line.click()
    expect(line).to_have_class(re.compile(r"\bhl\b"), timeout=STEP_MS)
    kernel_lines = root.locator(".tce-pane .tce-row.tce-in-kernel.hl")
    expect(kernel_lines.first).to_be_visible(timeout=STEP_MS)
    found["highlighted kernel lines"] = str(kernel_lines.count())
    expect(root.locator(".tce-pane .tce-kernels .tce-kernel.hl").first).to_be_attached()

    # ... and, with the selection kept, the graph nodes it became.
    root.locator('.tce-tabs .tce-tab[data-stage="dynamo_output_graph"]').click()
    lit = root.locator(".tce-pane .gc-unit.gc-src")
    expect(lit.first).to_be_attached(timeout=STEP_MS)
    found["highlighted graph nodes"] = str(lit.count())
    graph_shot.parent.mkdir(parents=True, exist_ok=True)
    root.screenshot(path=str(graph_shot))
    # Back to the kernel, highlighted and scrolled into its pane, for the screenshot.
    tab.click()
    expect(kernel_lines.first).to_be_attached(timeout=STEP_MS)
    kernel_lines.first.evaluate(_SCROLL_INTO_PANE_JS)

    # Export HTML: the kernel builds the page (an anywidget command) and the browser saves it.
    with root.page.expect_download(timeout=STEP_MS) as download:
        root.locator(".tce-export").click()
    page_text = Path(download.value.path()).read_text(encoding="utf-8")
    assert page_text.startswith("<!DOCTYPE html>") and 'id="tce-index"' in page_text
    expect(root.locator(".tce-status")).to_have_text("exported", timeout=STEP_MS)
    found["exported page (bytes)"] = str(len(page_text))
    return found


# Scrolls the nearest scrollable ancestor (inside the widget) so the element is near its top,
# without moving the notebook: what a user sees after scrolling to the highlighted kernel.
_SCROLL_INTO_PANE_JS = """
(el) => {
  for (let box = el.parentElement; box && !box.classList.contains('tce-root');
       box = box.parentElement) {
    if (box.scrollHeight > box.clientHeight + 1) {
      const dy = el.getBoundingClientRect().top - box.getBoundingClientRect().top;
      box.scrollTop += dy - box.clientHeight / 4;
      return;
    }
  }
}
"""


def explore_notebook(
    browser: Any, server: Server, url_path: str, notebook: str, screenshot: str
) -> dict[str, str]:
    messages = Messages()
    page = open_page(browser, messages)
    try:
        started = time.monotonic()
        page.goto(server.url(url_path), wait_until="domcontentloaded")
        wait_for_kernel(page, notebook)
        run_all_cells(page, notebook, len(CELLS))
        found = {"ran all cells (s)": f"{time.monotonic() - started:.1f}"}
        root = explorer_in_cell(page, COMPILE_CELL)
        try:
            found.update(check_explorer(root, ARTIFACTS / screenshot.replace(".png", "_graph.png")))
        except AssertionError as error:
            text = ""
            with contextlib.suppress(Exception):
                text = root.inner_text(timeout=5000)[:3000]
            raise AssertionError(f"{error}\n\nThe widget read:\n{text}") from None
        finally:
            # The %%compile cell at the top of the notebook's view: its source, its value and
            # the widget below them.
            with contextlib.suppress(Exception):
                cell = page.locator(SHOWN_CELLS).nth(COMPILE_CELL)
                cell.evaluate("(el) => el.scrollIntoView({block: 'start'})")
            page.wait_for_timeout(200)
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / screenshot))
            with contextlib.suppress(Exception):
                root.screenshot(path=str(ARTIFACTS / screenshot.replace(".png", "_widget.png")))
        page.wait_for_timeout(300)  # late errors from the last clicks
        assert not widget_errors(messages), "\n".join(widget_errors(messages))
        found["other page errors"] = str(len(messages.errors()))
        return found
    finally:
        page.context.close()
        server.shutdown_kernels()  # frees the CPU and memory the next notebook needs


# ---------------------------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------------------------


def test_explorer_in_jupyterlab(server: Server, browser: Any) -> None:
    found = explore_notebook(
        browser, server, f"lab/tree/{LAB_NOTEBOOK}", LAB_NOTEBOOK, "jupyterlab_explorer.png"
    )
    print("JupyterLab:", found)


def test_explorer_in_notebook7(server: Server, browser: Any) -> None:
    found = explore_notebook(
        browser, server, f"notebooks/{NB7_NOTEBOOK}", NB7_NOTEBOOK, "notebook7_explorer.png"
    )
    print("Notebook 7:", found)


FINDINGS_NOTEBOOK = "explorer_findings.ipynb"
# a print between two graphs: the advisor's finding suggests a Dynamo setting in a code block
FINDINGS_CELLS = [
    "%load_ext explorer",
    "import torch\n\nx = torch.randn(8)",
    '%%compile --backend eager\ny = x.sin()\nprint("halfway")\ny.cos()',
]


def test_findings_pane_in_jupyterlab_shows_code_blocks_not_fences(
    server: Server, browser: Any
) -> None:
    """The widget's findings pane draws the suggestion's code as a highlighted block; no
    Markdown fence or backtick reaches the page."""
    from playwright.sync_api import expect

    write_notebook(server.root / FINDINGS_NOTEBOOK, FINDINGS_CELLS)
    messages = Messages()
    page = open_page(browser, messages)
    try:
        run_notebook(page, server, FINDINGS_NOTEBOOK, len(FINDINGS_CELLS))
        root = explorer_in_cell(page, 2)
        root.locator('.tce-tabs .tce-tab[data-stage="findings"]').click()
        card = root.locator(".tce-finding.tce-problem").first
        expect(card).to_be_visible(timeout=STEP_MS)
        block = card.locator("pre.tce-suggestion-code")
        expect(block).to_have_count(1)
        expect(block).to_contain_text("reorderable_logging_functions.add(print)")
        expect(block.locator("span[class^='t-']").first).to_be_attached()
        assert "`" not in card.locator(".tce-suggestion").inner_text()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        card.screenshot(path=str(ARTIFACTS / "jupyterlab_findings.png"))
        assert not widget_errors(messages), "\n".join(widget_errors(messages))
    finally:
        page.context.close()
        server.shutdown_kernels()
