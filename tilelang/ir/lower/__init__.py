"""Lowering: one `kernel fn` of a checked program + an instantiation -> `ir.Kernel`.

    lower_kernel(program, kernel_name, instantiation, arg_facts=None) -> ir.Kernel

- `program`: the type checker's `Program` (`tilelang.sema.program`). The
  lowering reads the kernel's and device functions' declarations, module
  constants and, where present, its side tables (literal types, call
  instantiations); it falls back to its own inference where a table has no
  entry, so it also works on a partially checked program.
- `instantiation`: const generic name -> int, type parameter name -> `DType`.
  Generics missing from it are inferred from `arg_facts`.
- `arg_facts`: tensor parameter name -> a fact object with `dtype`, `shape`
  (the run-time shape) and `tile` (a `&mut` partition's tile shape) - the host
  runtime's `ArgFact`. Only dtypes, ranks and tile shapes are used: the IR does
  not specialise on run-time sizes (they are not in the compile cache key).

What it does: const generics are substituted (every tile shape becomes ints);
device functions are inlined (their own generics inferred from the argument
shapes, or taken from `program.instantiations`); untyped literals take their
dtype from the other operand (as the checker settles them); scalars and
size-1 dims are broadcast with explicit `Broadcast` ops; `for`/`while` loops
turn the variables assigned in their bodies into loop-carried values; `if`
merges the variables its branches assign (and its value) into results; an
`if` on a compile-time condition lowers only the branch taken.
Compile-time integers (generics, `N / 4`, `x.partition([..])` shapes) fold in
Python with the wrapping and truncating rules of the IR. The builder runs with
CSE on: an identical pure op (constants, index arithmetic, `block_id` ...)
already defined in the current or an enclosing region is reused; loads never
are (a store may come between).

`break`/`continue` set flags (`%break`, `%continue`); a `for` whose body
may jump becomes a `while` over a carried counter that also stops on the
flag; an early `return` sets `%return` and assigns one result variable. After
a statement that may jump, the rest of its block runs under an `if` on the
flags, so the IR stays structured (no gotos for the backend to untangle).

The kernel is verified before it is returned. A construct the lowering does
not support yet (an early `return` of a tuple, a `let` without a value or a
scalar/tile type) is a
`TileError` E0701 located at the construct; anything else unexpected is an
`ICE`.
"""

from __future__ import annotations

from tilelang.ir.lower.intrinsics import LOWERED_OPERATIONS
from tilelang.ir.lower.kernel import lower_kernel

__all__ = ["LOWERED_OPERATIONS", "lower_kernel"]
