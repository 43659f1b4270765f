"""The kernel lab in real JupyterLab: open a recorded Triton kernel in the lab, change
its block size, and see the PTX pane change.

Uses the server and browser set-up of ``test_browser.py``. The notebook opens the
pointwise GPU recording (made on an H100) in an ``ExplorationWidget``; no compile runs
here, only Triton's lowering (the [triton] extra); the module is ``slow`` all the same, as
every test of the explorer in JupyterLab is: the full tier runs it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from test_browser import (
    ARTIFACTS,
    ROOT,
    Messages,
    Server,
    explorer_in_cell,
    jupyter_server,
    open_page,
    run_notebook,
    widget_errors,
    write_notebook,
)

pytestmark = pytest.mark.slow
pytest.importorskip("triton", reason="the kernel lab needs the [triton] extra")

NOTEBOOK = "kernel_lab.ipynb"
RECORDING = ROOT / "notebooks" / "recordings" / "pointwise.json"
CELLS = [
    "import compiler\nfrom explorer.widget import ExplorationWidget\n\n"
    f"exp = compiler.Exploration.from_json(open({str(RECORDING)!r}).read())\n"
    "ExplorationWidget(exp)",
]
LOWER_S = 180  # the lab's worker start (torch and Triton imports) and a lowering


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("jupyter_root")
    write_notebook(root / NOTEBOOK, CELLS)
    with jupyter_server(root, tmp_path_factory.mktemp("jupyter_state")) as running:
        yield running


def _wait_lowered(lab: Any, not_before: str) -> str:
    """The lab's facts once a lowering newer than ``not_before`` is on show."""
    deadline = time.monotonic() + LOWER_S
    status = lab.locator(".tce-lab-status")
    facts = ""
    while time.monotonic() < deadline:
        state = status.get_attribute("data-lab-status")
        if state == "error":
            pytest.fail(f"the lab did not lower: {lab.inner_text()}")
        facts = lab.locator(".tce-lab-stats").inner_text()
        if state in ("lowered", "done") and facts != not_before:
            return facts
        time.sleep(0.25)
    pytest.fail(f"no lowering within {LOWER_S} s; the lab read: {lab.inner_text()!r}")


def test_changing_the_block_size_in_the_kernel_lab_changes_the_ptx_pane(
    server: Server, browser: Any
) -> None:
    messages = Messages()
    page = open_page(browser, messages)
    try:
        run_notebook(page, server, NOTEBOOK, len(CELLS))
        root = explorer_in_cell(page, 0)
        root.locator('.tce-tabs .tce-tab[data-stage$="/lowered"]').click()
        pane = root.locator(".tce-pane")
        pane.locator('button.tce-lstage[data-lstage="ptx"]').click()
        stage = pane.locator(".tce-lowering-stage .tce-code")
        captured_ptx = stage.inner_text()
        assert ".entry triton_poi_fused_add_mul_relu_sin_0" in captured_ptx

        pane.locator("[data-lab-open]").click()
        lab = pane.locator(".tce-lab")
        try:
            lab.locator(".cm-content").wait_for(state="visible", timeout=60_000)  # CodeMirror
        except Exception:
            head = pane.locator(".tce-lowering-source").inner_text()
            pytest.fail(
                f"the kernel lab did not open; the source column read {head[:600]!r}; "
                f"browser errors: {messages.errors()}"
            )
        unedited = _wait_lowered(lab, "")
        assert "same instructions as captured" in unedited, unedited
        assert pane.locator('[data-variant="lab"][aria-pressed="true"]').count() == 1
        # unedited, only lines pointing into torch's triton_helpers.py differ (the recording
        # was made with torch 2.11, whose helper functions sit at other lines)
        unedited_changes = pane.locator(".tce-lab-changed").count()

        block = lab.locator('select[data-lab-config="XBLOCK"]')
        recorded = block.input_value()
        block.select_option(str(2 * int(recorded)))
        edited = _wait_lowered(lab, unedited)
        assert "lines changed" in edited, edited
        new_ptx = stage.inner_text()
        assert new_ptx != captured_ptx
        assert pane.locator(".tce-lab-changed").count() > unedited_changes
        registers = lambda facts: facts.split("registers", 1)[1].split()[0]  # noqa: E731
        assert registers(edited) != registers(unedited), (unedited, edited)
        # a syntax error: Python's message at its line, marked in the editor
        lab.locator(".cm-content").click(position={"x": 20, "y": 8})  # its middle is scrolled off
        page.keyboard.press("Control+End")
        page.keyboard.press("Enter")
        page.keyboard.press("Home")
        page.keyboard.type("x = 1 +")
        lines = lab.locator(".cm-content .cm-line").count()
        deadline = time.monotonic() + LOWER_S
        while lab.locator(".tce-lab-status").get_attribute("data-lab-status") != "error":
            assert time.monotonic() < deadline, lab.inner_text()
            time.sleep(0.25)
        error = lab.locator(".tce-lab-error").inner_text()
        assert error.startswith(f"line {lines}: SyntaxError"), (lines, error)
        assert lab.locator(".cm-lint-marker-error").count() == 1
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        pane.screenshot(path=str(ARTIFACTS / "jupyterlab_kernel_lab.png"))
        assert not widget_errors(messages), "\n".join(widget_errors(messages))
    finally:
        page.context.close()
        server.shutdown_kernels()
