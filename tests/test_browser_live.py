"""``%%compile --live`` in real JupyterLab: type an edit, see the kernels change.

Uses the server and browser set-up of ``test_browser.py``. The notebook defines ``x`` and
a helper, ``scale``, and a ``%%compile --live`` cell that calls it; the test types a new
function body into the live editor (CodeMirror: the body's indentation is the editor's
Python indentation; a matmul and a reduction: more kernels than the first version) and
waits until the explorer's output-code pane lists other kernels and the diff view names
the change; then a syntax error, shown as a diagnostic at its line over the last good
result, and its fix.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from test_browser import (
    ARTIFACTS,
    Messages,
    Server,
    jupyter_server,
    open_page,
    run_notebook,
    widget_errors,
    write_notebook,
)

pytestmark = pytest.mark.slow

NOTEBOOK = "live_lab.ipynb"
CELLS = [
    "%load_ext explorer",
    "import torch\n\ntorch.manual_seed(0)\nx = torch.randn(16, 16)\n\n"
    "def scale(t):\n    return t * 2",
    # a helper from the cell above: it crosses to the live worker by value
    "%%compile --live --inputs x\ndef f(x):\n    return scale(torch.relu(x))\n",
]
LIVE_CELL = 2
EDIT = "def f(x):\n    y = torch.relu(x @ x)\n    return scale(y.sum(0) * x)\n"
COMPILE_S = 300  # a worker start and an Inductor compile on a busy 2-core CPU


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("jupyter_root")
    write_notebook(root / NOTEBOOK, CELLS)
    with jupyter_server(root, tmp_path_factory.mktemp("jupyter_state")) as running:
        yield running


def _kernels(root: Any) -> list[str]:
    from playwright.sync_api import expect

    tab = root.locator('.tce-tabs .tce-tab[data-stage$="/inductor_output_code"]').first
    expect(tab).to_be_visible(timeout=30_000)
    tab.click()
    chips = root.locator(".tce-pane .tce-kernels .tce-kernel")
    expect(chips.first).to_be_visible(timeout=30_000)
    return sorted(chips.all_inner_texts())


def _wait_for_version(live: Any, not_before: str, *, after_error: bool = False) -> str:
    deadline = time.monotonic() + COMPILE_S
    status = live.locator(".tce-live-status")
    text = ""
    while time.monotonic() < deadline:
        text = status.inner_text()
        state = live.get_attribute("data-state")
        if state == "ok" and text != not_before:
            return text
        if state == "error" and not after_error:
            pytest.fail(f"the live compile failed: {text}")
        time.sleep(0.5)
    pytest.fail(f"no new version within {COMPILE_S} s; the status read: {text!r}")


def test_typing_an_edit_in_the_live_editor_changes_the_kernel_view(
    server: Server, browser: Any
) -> None:
    messages = Messages()
    page = open_page(browser, messages)
    try:
        run_notebook(page, server, NOTEBOOK, len(CELLS))
        cell = page.locator(".jp-Notebook .jp-Cell").nth(LIVE_CELL)
        live = cell.locator(".jp-OutputArea .tce-live")
        live.wait_for(state="attached", timeout=60_000)
        first = _wait_for_version(live, "")
        root = cell.locator(".jp-OutputArea .tce-root")
        root.wait_for(state="attached", timeout=60_000)
        before = _kernels(root)

        # the CodeMirror editor: Python indentation puts the body under the def by itself
        editor = live.locator(".tce-live-ed .cm-content")
        editor.click()
        page.keyboard.press("Control+a")
        for i, line in enumerate(EDIT.splitlines()):
            if i:
                page.keyboard.press("Enter")
            page.keyboard.type(line.lstrip())
        assert editor.inner_text().rstrip("\n") == EDIT.rstrip("\n")
        second = _wait_for_version(live, first)
        after = _kernels(root)
        assert after != before, f"the kernels stayed {before} after the edit ({second})"
        assert len(after) != len(before)
        summary = cell.locator(".jp-OutputArea .tce-diff-summary")
        with contextlib.suppress(Exception):
            summary.scroll_into_view_if_needed(timeout=5000)
        assert re.search(r"\d+ kernels? -> \d+", summary.inner_text()), summary.inner_text()
        named = summary.inner_text()
        # a syntax error: a CodeMirror diagnostic on its line, the last good result kept
        editor.click()  # the kernel tabs took the focus
        page.keyboard.press("Control+End")
        page.keyboard.type(" +")
        mark = live.locator(".cm-lintRange-error")
        mark.wait_for(state="visible", timeout=COMPILE_S * 1000)
        assert "return scale(y.sum(0) * x) +" in mark.inner_text()
        assert "SyntaxError" in live.locator(".tce-live-status").inner_text()
        assert _kernels(root) == after
        editor.click()
        page.keyboard.press("Control+End")
        page.keyboard.press("Backspace")
        page.keyboard.press("Backspace")
        _wait_for_version(live, second, after_error=True)
        assert live.locator(".cm-lintRange-error").count() == 0
        # the final version goes back into the cell, under its %%compile line
        live.locator("button.tce-live-writeback").click()
        cell_text = cell.locator(".jp-InputArea-editor .cm-content").inner_text()
        assert cell_text.startswith("%%compile --live --inputs x\ndef f(x):"), cell_text
        assert "torch.relu(x @ x)" in cell_text
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        cell.screenshot(path=str(ARTIFACTS / "jupyterlab_live.png"))
        print("live:", {"before": before, "after": after, "summary": named})
        assert not widget_errors(messages), "\n".join(widget_errors(messages))
    finally:
        page.context.close()
        server.shutdown_kernels()
