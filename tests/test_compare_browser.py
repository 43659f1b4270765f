"""compare.js in real Chromium: the table and bars it draws, escaping, and row selection."""

from __future__ import annotations

import json

import torch
from conftest import open_html

import compiler
from explorer._static import inline_module
from explorer.compare_widget import comparison_data

# A fake anywidget model: enough of its interface for render(), recording what is saved.
PAGE = """<!doctype html><html><body><div id="root"></div>
<script type="module">
%(module)s
const state = %(state)s;
const handlers = {};
window.saved = [];
const model = {
  get: (k) => state[k],
  set: (k, v) => { state[k] = v; (handlers["change:" + k] || []).forEach((f) => f()); },
  on: (e, f) => { (handlers[e] = handlers[e] || []).push(f); },
  off: () => {},
  save_changes: () => { window.saved.push(state.selected); },
};
compareModule.default.render({ model, el: document.getElementById("root") });
window.ready = true;
</script></body></html>"""


def test_the_compare_widget_draws_every_row_escapes_names_and_selects_on_click(browser, tmp_path):
    hostile = compiler.Config(name='<img src=x onerror="window.pwned=1">', backend="aot_eager")
    c = compiler.compare(lambda x: x.sin() + 1, torch.randn(8), configs=[hostile], steps=2)
    data = comparison_data(c)
    module = inline_module("compare", "compareModule")  # the built module the widget ships
    page_file = tmp_path / "compare.html"
    state = json.dumps({"comparison": data, "selected": ""})
    page_file.write_text(PAGE % {"module": module, "state": state})

    page, errors = open_html(browser, page_file, ready=None)
    page.wait_for_function("window.ready === true")
    rows = page.locator("table.cmp-table tr")
    assert rows.count() == 3  # header, eager, the compiled row
    assert rows.nth(2).locator("td").first.text_content() == hostile.name
    assert page.locator("#root img").count() == 0
    assert page.evaluate("window.pwned") is None
    assert page.locator(".cmp-bar-row").count() == 2
    rows.nth(1).click()  # eager: nothing to explore
    assert page.evaluate("window.saved") == []
    rows.nth(2).click()
    assert page.evaluate("window.saved") == [hostile.name]
    assert page.locator("tr.cmp-selected").count() == 1
    page.locator(".cmp-switch button").nth(1).click()  # the first-call chart
    eager_first = data["rows"][0]["first_call_ms"]
    shown = f"{eager_first:.3f}" if eager_first < 10 else f"{eager_first:.1f}"
    assert page.locator(".cmp-bar-value").first.text_content() == f"{shown} ms"
    assert not errors, errors
