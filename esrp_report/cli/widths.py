"""How wide the CLI prints where no terminal says: shared by the plain console (``console.py``) and
the plain-text printers (``output.py``), which must not import each other (the layer test forbids
loops) and of which only the console may pull in Rich."""

PIPE_WIDTH = 160  # columns of output that does not go to a terminal
