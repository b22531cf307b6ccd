"""Rust's integer bit methods (`count_ones`, `leading_zeros`, `trailing_zeros`, `swap_bytes`, `reverse_bits`,
`rotate_left`, `rotate_right`) written out for the receiver's own element type (round 27, huser28).

The helps of `math_habits` were one `u32` spelling for every type: a `u16` tile's `x.swap_bytes()` was told
`(x >> 24) | ((x >> 8) & 0xFF00u32) | ..`, which mixes `u16` and `u32` (E0201) and shifts a 16-bit value by
24, and a `u64`'s `count_ones()` the 32-bit SWAR count. Each help here is statements and a final expression
that a kernel can take as they are, in the receiver's width: signed values are counted through the unsigned
type of their width (`x as u16` keeps an `i16`'s bits; widening a signed value first would copy its sign bit),
values below 32 bits in `u32`. Each gives Rust's result in the type Rust gives it (`u32` for the counts, the
receiver's type for the others); `tests/user/test_user_wrong30.py` runs every help on every integer type
against NumPy."""

from __future__ import annotations

from tilelang.dtypes import DType

BIT_METHODS = ("count_ones", "count_zeros", "leading_zeros", "trailing_zeros", "swap_bytes", "reverse_bits",
               "rotate_left", "rotate_right", "popcount", "bit_count")
#: other languages' names of a count of ones (C++20's `std::popcount`, NumPy 2's `bitwise_count`, Python's
#: `int.bit_count`)
_ALIASES = {"popcount": "count_ones", "bit_count": "count_ones"}


def _a(dt: DType) -> str:
    return f"an `{dt}`" if dt.value.startswith("i") else f"a `{dt}`"


def _unsigned(dt: DType) -> str:
    return f"u{dt.bits}"


def _as_word(x: str, dt: DType) -> tuple[str, str]:
    """`x`'s bits as the word the steps work in (`u32` below 32 bits, else the width's unsigned type), and that
    type."""
    word = "u64" if dt.bits == 64 else "u32"
    u = _unsigned(dt)
    if dt.value == word:
        return x, word
    if dt.is_signed and dt.bits < 32:
        return f"({x} as {u}) as {word}", word
    return f"{x} as {word}", word


def _popcount_steps(v: str, word: str) -> str:
    """Statements that leave the count of ones of `v` (a `word`) in `c`, a `word`."""
    m = ("0x5555555555555555", "0x3333333333333333", "0x0F0F0F0F0F0F0F0F", "0x0101010101010101", "56") \
        if word == "u64" else ("0x55555555", "0x33333333", "0x0F0F0F0F", "0x01010101", "24")
    return (f"let a = {v} - (({v} >> 1{word}) & {m[0]}{word}); "
            f"let b = (a & {m[1]}{word}) + ((a >> 2{word}) & {m[1]}{word}); "
            f"let c = (((b + (b >> 4{word})) & {m[2]}{word}) * {m[3]}{word}) >> {m[4]}{word};")


def _swap(v: str, bits: int) -> str:
    """The bytes of `v` (an unsigned value of `bits` bits) in the other order."""
    u = f"u{bits}"
    parts = []
    for k in range(bits // 8):
        to = bits - 8 - 8 * k  # byte k moves to byte bits/8 - 1 - k
        by = to - 8 * k
        mask = f"0x{0xFF << (8 * k):X}{u}"
        if by > 0:
            parts.append(f"(({v} & {mask}) << {by}{u})" if k else f"({v} << {by}{u})")
        else:
            parts.append(f"(({v} >> {-by}{u}) & 0x{0xFF << to:X}{u})" if k < bits // 8 - 1
                         else f"({v} >> {-by}{u})")
    return " | ".join(parts)


def bit_method_help(name: str, dt: object, x: str, args: list[str]) -> str | None:
    """The help of Rust's `x.name(args)` for a receiver of element type `dt` (None: not an integer type, or not
    one of `BIT_METHODS`), with `x` the receiver as written; a plain string (no `{x}` template)."""
    if name not in BIT_METHODS or not isinstance(dt, DType) or dt.is_float or dt is DType.BOOL:
        return None
    name = _ALIASES.get(name, name)
    x = x if len(x) < 30 else "x"
    if " " in x or "(" in x:
        x = f"({x})"
    n, u = dt.bits, _unsigned(dt)
    if name in ("count_ones", "count_zeros"):
        v, word = _as_word(x if name == "count_ones" else f"!{x}", dt)
        steps = _popcount_steps("v", word)
        last = "c" if word == "u32" else "c as u32"
        return (f"Tile has no bit-count built-ins: count with shifts and masks (the SWAR count), for {_a(dt)}: "
                f"`let v = {v}; {steps}` then `{last}` is the count of {'ones' if name == 'count_ones' else 'zeros'}"
                f", a `u32`")
    if name == "trailing_zeros":
        v, word = _as_word(x, dt)
        wide = n < 32
        low = f"v & (0{word} - v)"
        steps = _popcount_steps("w", word)
        last = "c" if word == "u32" else "c as u32"
        fix = f"minimum({last}, {n}u32)" if wide else last
        return (f"Tile has no bit-count built-ins: `{low}` keeps the lowest set bit, and the ones below it are the "
                f"count: `let v = {v}; let w = ({low}) - 1{word}; {steps}` then `{fix}` is the count, a `u32` "
                f"({n} for 0)")
    if name == "leading_zeros":
        v, word = _as_word(x, dt)
        w = 64 if word == "u64" else 32
        steps, shifts, k = [f"let v0 = {v};"], [], 0
        half = w // 2
        while half >= 1:
            steps.append(f"let z{k} = where(v{k} >> {w - half}{word} == 0{word}, {half}{word}, 0{word}); "
                         f"let v{k + 1} = v{k} << z{k};")
            shifts.append(f"z{k}")
            k, half = k + 1, half // 2
        total = " + ".join(shifts) + f" + where(v{k} == 0{word}, 1{word}, 0{word})"
        total = f"({total}) as u32" if word == "u64" else f"{total}"
        if n < 32:
            total = f"({total}) - {32 - n}u32"
        return (f"Tile has no bit-count built-ins: halve the range where the high half is zero, shifting it away; "
                f"for {_a(dt)}: `{' '.join(steps)}` then `{total}` is the count, a `u32` ({n} for 0)")
    if name == "swap_bytes":
        if n == 8:
            return f"{_a(dt)} is one byte: `{x}` is its own byte swap"
        v = x if not dt.is_signed else f"({x} as {u})"
        out = _swap("v", n)
        cast = "" if not dt.is_signed else f" as {dt}"
        return (f"Tile has no byte-swap built-in: for {_a(dt)}: `let v = {v};` then `({out}){cast}`"
                if dt.is_signed else f"Tile has no byte-swap built-in: for {_a(dt)}: `let v = {x};` then `{out}`")
    if name == "reverse_bits":
        v = x if not dt.is_signed else f"{x} as {u}"
        steps = [f"let v = {v};"]
        cur = "v"
        for k, s in enumerate((1, 2, 4)):
            m = {1: 0x55, 2: 0x33, 4: 0x0F}[s]
            mask = "0x" + f"{m:02X}" * (n // 8) + u
            nxt = "abc"[k]
            steps.append(f"let {nxt} = (({cur} >> {s}{u}) & {mask}) | (({cur} & {mask}) << {s}{u});")
            cur = nxt
        out = "c" if n == 8 else _swap("c", n)
        cast = f" as {dt}" if dt.is_signed else ""
        return (f"Tile has no bit-reversal built-in: swap bits, pairs and nibbles, then the bytes; for {_a(dt)}: "
                f"`{' '.join(steps)}` then `({out}){cast}`")
    # rotations: the amount as written where the call gives one
    k = args[0] if len(args) == 1 and len(args[0]) < 12 else "n"
    v = x if not dt.is_signed else f"({x} as {u})"
    a, b = ("<<", ">>") if name == "rotate_left" else (">>", "<<")
    body = f"({v} {a} {k}) | ({v} {b} ({n} - {k}))"
    body = f"({body}) as {dt}" if dt.is_signed else body
    return (f"`{body}` rotates {_a(dt)} {'left' if name == 'rotate_left' else 'right'} by 0 < {k} < {n} "
            f"(a rotation by 0 or {n} is the value itself: a shift by {n} gives 0)")
