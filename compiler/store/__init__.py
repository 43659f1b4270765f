"""An Exploration as a file: its JSON forms (plain and compact), the schema version and the
upgrades of older files.

Above ``link`` in the pipeline: reading a file builds the model and links it again with the
same ``compiler.link.derive`` that live capture and ``load_trace`` use, so a file written by
any schema version reads back as a capture would. ``Exploration.to_json`` and
``Exploration.from_json`` call into this room.

Example:
    >>> from compiler.store.serialize import from_json, to_json
    >>> import compiler
    >>> exp = compiler.Exploration(source="live", target="f")
    >>> from_json(to_json(exp)) == exp
    True
"""
