"""GPU IR: the stage between Tile IR and LLVM IR (see `nodes.py`, `layouts.py`,
`passes/`, `printer.py`)."""
