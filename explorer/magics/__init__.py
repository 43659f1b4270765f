"""The notebook's cell magics: ``%%compile`` (``compile_magic``) and ``%%compare``
(``compare_magic``), registered by ``%load_ext explorer``."""
