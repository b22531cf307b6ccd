"""hstream: the rows that decide `TILEC_STREAM_AUTO`'s rule (`backend/stream_rule.py`) against PyTorch: call 39's
hcliff12 rows (`hcliff12_paths.cases`: the 4-token GEMV and the leading-axis sum under other tiles) and hcliff11's
natural kernels (softmax 1k/8k/64k, transpose, dwconv, cumsum), one process an arm (the switch is read when a
kernel is lowered). Each line ends with what the launch decided (`stream=(S,)`: the variant with rings of S
stages; `-`: the first variant; `asked`: the kernel asked and the launch left it).

    python benchmarks/hstream_paths.py [--dry] [--only TEXT] [--reps N]   (hcliff11_paths.py's command line)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import hcliff11_paths as hp

NATURAL = ("softmax", "transpose", "dwconv", "cumsum")
_natural = hp.cases  # hcliff11's own, before hcliff12_paths replaces the module's `cases`

import hcliff12_paths as h12  # noqa: E402


def cases() -> list[hp.Case]:
    return [*h12.cases(), *(c for c in _natural() if c.name.startswith(NATURAL))]


hp.cases = cases
DECIDED: dict[str, str] = {}


def _spy() -> None:
    """Record each launch's decision by kernel entry (`stream_rule.refine`, which the runtime calls)."""
    from tilelang.backend import stream_rule

    real = stream_rule.refine

    def refine(abi, facts, grid, sms, blocks):  # type: ignore[no-untyped-def]
        got = real(abi, facts, grid, sms, blocks)
        if getattr(abi, "stream", None) is not None:
            DECIDED[abi.name] = f"stream={got[0][1]}" if got else "asked"
        return got

    stream_rule.refine = refine  # type: ignore[assignment]


def _run(names: list[str], reps: int) -> None:
    import builtins

    _spy()
    real_print = builtins.print

    def tagged(*a, **k):  # type: ignore[no-untyped-def]
        # a result line: the case's decision after it (the one launch whose kernel asked, else "-")
        if a and isinstance(a[0], str) and " ms " in a[0]:
            a = (f"{a[0]}  {', '.join(sorted(set(DECIDED.values()))) or '-'}", *a[1:])
            DECIDED.clear()
        real_print(*a, **k)

    builtins.print = tagged
    try:
        run12(names, reps)
    finally:
        builtins.print = real_print


run12 = hp.run

if __name__ == "__main__":
    import user_paths

    sys.exit(user_paths.main(None, [c.name for c in cases()], _run, hp.dry))
