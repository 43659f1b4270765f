"""What the user edits and sees recompiled: live recompile (``live``), the kernel lab
(``lab``) and the diff shown after an edit (``diff_view``). Each drives a worker process
in ``compiler`` (``compiler.live``, ``compiler.lab``) and shares the CodeMirror editor
(``explorer/static/editor.js``)."""
