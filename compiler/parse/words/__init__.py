"""What torch's words and names say, read into plain values: graph-break and recompile
messages, the names Dynamo gives placeholders, AOTAutograd's descriptor comments, and
the parts of a text that differ between processes of one program."""
