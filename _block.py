import numpy as np
import tilelang

mod = tilelang.load("examples/add.tile")     # checked now: CompileError if not
x = np.random.rand(5000).astype(np.float32)
y = np.random.rand(5000).astype(np.float32)
z = np.zeros_like(x)
mod.add(tilelang.partition(z, [1024]), x, y).sync()   # z is written in place
h = mod.add(tilelang.partition(z, [1024]), x, y).launch()
h.wait()                                      # z stays borrowed until here
help(mod.add)                                 # the Tile signature (`help(mod)`: every kernel and function)
