"""The runtime: host values, the host evaluator, launches and devices.

Host side: `tensor.py` (Tensor, Partition, printing), `host.py` (the host
evaluator), `builtins.py` (BRIEF §5 builtins), `launch.py` (Operation,
Handle, Graph, launch-time checks), `device.py` (the Device interface),
`cpu.py` (the NumPy engine). GPU side: `cuda.py`, `cache.py`.

Nothing is imported here, so `import tilelang.runtime.cuda` costs no NumPy
work beyond its own and the CPU path never imports cuda-python.
"""
