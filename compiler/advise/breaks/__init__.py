"""Graph breaks and backend failures read through torch's own records: the graph-break
registry (``registry``), what a known cause usually takes (``causes``), and a backend
compiler that failed and fell back to eager (``backend``)."""
