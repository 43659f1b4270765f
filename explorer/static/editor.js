// @ts-check
/**
 * The source editor every widget shares: CodeMirror 6 (the editor JupyterLab's own cells
 * use), bundled by esbuild into each widget that imports it, with Python mode, undo
 * history, bracket matching, search (Ctrl+F), Python indentation and diagnostics at
 * their lines.
 *
 * Example:
 *   const ed = createEditor(el, { doc: "def f(x):\n    return x", onChange: (t) => send(t) });
 *   ed.setDiagnostics([{ line: 2, message: "NameError: name 'x' is not defined" }]);
 *   ed.setText("def f(x):\n    return x * 2");   // no onChange: only the user's edits call it
 *   ed.destroy();
 *
 * The API (createEditor's options and the returned handle) is shared with the kernel lab;
 * keep it stable.
 */

import { EditorState, Annotation, Compartment } from "@codemirror/state";
import {
  EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter,
  drawSelection, highlightSpecialChars, rectangularSelection, placeholder as placeholderText,
} from "@codemirror/view";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import {
  bracketMatching, indentOnInput, indentUnit, syntaxHighlighting, defaultHighlightStyle, foldGutter, foldKeymap,
} from "@codemirror/language";
import { closeBrackets, closeBracketsKeymap } from "@codemirror/autocomplete";
import { python } from "@codemirror/lang-python";
import { searchKeymap, highlightSelectionMatches } from "@codemirror/search";
import { lintGutter, setDiagnostics as lintDiagnostics } from "@codemirror/lint";

/**
 * @typedef {{line: number, message: string, severity?: "error"|"warning"|"info",
 *            column?: number}} Diagnostic  `line` counts from 1; `column` (from 1) is
 *            optional: without it the whole line is marked
 * @typedef {{doc?: string, language?: "python"|"text", readOnly?: boolean,
 *            onChange?: (text: string) => void, onRun?: (text: string) => void,
 *            placeholder?: string, maxHeight?: string}} EditorOptions  `onChange` runs
 *            on the user's edits only (not on setText); `onRun` on Ctrl+Enter or
 *            Shift+Enter
 * @typedef {{view: EditorView, getText(): string, setText(text: string): void,
 *            setDiagnostics(list: Diagnostic[]): void, setReadOnly(on: boolean): void,
 *            focus(): void, destroy(): void}} Editor
 */

/** Marks the transactions setText makes, so that onChange hears the user's edits only. */
const fromApi = Annotation.define();

/**
 * An editor in `parent` (appended to it).
 * @param {HTMLElement} parent
 * @param {EditorOptions} [options]
 * @returns {Editor}
 */
export function createEditor(parent, options = {}) {
  const { doc = "", language = "python", readOnly = false, onChange, onRun, placeholder, maxHeight = "420px" } = options;
  const editable = new Compartment();
  const run = onRun
    ? [{ key: "Mod-Enter", run: (/** @type {EditorView} */ v) => (onRun(v.state.doc.toString()), true) },
      { key: "Shift-Enter", run: (/** @type {EditorView} */ v) => (onRun(v.state.doc.toString()), true) }]
    : [];
  const extensions = [
    lineNumbers(), highlightActiveLineGutter(), highlightSpecialChars(), history(), foldGutter(),
    drawSelection(), EditorState.allowMultipleSelections.of(true), indentOnInput(),
    syntaxHighlighting(defaultHighlightStyle, { fallback: true }), bracketMatching(), closeBrackets(),
    rectangularSelection(), highlightActiveLine(), highlightSelectionMatches(), lintGutter(),
    keymap.of([...run, ...closeBracketsKeymap, ...defaultKeymap, ...searchKeymap, ...historyKeymap,
      ...foldKeymap, indentWithTab]),
    EditorState.tabSize.of(4),
    indentUnit.of("    "), // PEP 8's four spaces (CodeMirror's default is two)
    editable.of(readOnlyExtensions(readOnly)),
    EditorView.theme({
      "&": { fontSize: "13px", border: "1px solid #ccc", backgroundColor: "#fff" },
      ".cm-scroller": { fontFamily: "var(--jp-code-font-family, monospace)", maxHeight, overflow: "auto" },
      "&.cm-focused": { outline: "1px solid #7aa7e6" },
    }),
    EditorView.updateListener.of((u) => {
      if (!onChange || !u.docChanged) return;
      if (u.transactions.some((tr) => tr.annotation(fromApi))) return;
      onChange(u.state.doc.toString());
    }),
  ];
  if (language === "python") extensions.push(python());
  if (placeholder) extensions.push(placeholderText(placeholder));

  const view = new EditorView({ state: EditorState.create({ doc, extensions }), parent });
  // JupyterLab's notebook shortcuts (Enter, arrows, A/B, ...) must not see the editor's keys
  view.dom.setAttribute("data-lm-suppress-shortcuts", "true");

  return {
    view,
    getText: () => view.state.doc.toString(),
    setText(text) {
      const old = view.state.doc.toString();
      if (old === text) return;
      // keep the cursor where it was, as far as the new text reaches
      const head = Math.min(view.state.selection.main.head, text.length);
      view.dispatch({
        changes: { from: 0, to: old.length, insert: text },
        selection: { anchor: head },
        annotations: [fromApi.of(true)],
      });
    },
    setDiagnostics(list) {
      const doc = view.state.doc;
      const diagnostics = list
        .filter((d) => d.line >= 1 && d.line <= doc.lines)
        .map((d) => {
          const line = doc.line(d.line);
          const from = d.column ? Math.min(line.from + d.column - 1, line.to) : line.from;
          // an empty line still gets a mark: one character past it, if the doc has one
          const to = line.to > from ? line.to : Math.min(from + 1, doc.length);
          return { from, to, severity: d.severity || "error", message: d.message };
        });
      view.dispatch(lintDiagnostics(view.state, diagnostics));
    },
    setReadOnly(on) {
      view.dispatch({ effects: editable.reconfigure(readOnlyExtensions(on)) });
    },
    focus: () => view.focus(),
    destroy: () => view.destroy(),
  };
}

/** @param {boolean} on */
function readOnlyExtensions(on) {
  return [EditorState.readOnly.of(on), EditorView.editable.of(!on)];
}
