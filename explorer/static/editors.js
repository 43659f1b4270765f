// @ts-check
// The editors' bundle (dist/editors.js): the live editor and the kernel lab, which share
// one CodeMirror (editor.js) by being one bundle. Its default export is the live editor's
// widget module (explorer/editing/live.py's `_esm`); the Triton lowering pane imports the
// same file for `mountLab` when the user first opens the lab (explorer/editing/lab.py).

export { default } from "./live.js";
export { mountLab } from "./lab.js";
