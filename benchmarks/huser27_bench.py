"""huser27 (round 26): the kernels of tests/user/programs/q*.tile that PyTorch has an equivalent of, timed on
the GPU against PyTorch on the same CUDA tensors (the Python API, in place), each result compared with
PyTorch's first. Run by benchmarks/huser27_device.sh; `--cpu` runs every call once on small NumPy arrays on the
interpreter (no PyTorch: a check of the calls themselves against NumPy, no timings).

Columns: the Tile kernel's median ms (CUDA events around `.launch()`), PyTorch's, and torch / tile (above 1:
Tile faster)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from _user_bench import CPU, F, P, arr, close, host, print_rows, time_ms, torch

import tilelang

ROWS: list[tuple[str, float, float, str]] = []


def bench(name: str, op: Any, ref: Callable[[], Any] | None, check: Callable[[], str]) -> None:
    op.sync()
    verdict = check()
    t_tile = time_ms(op.launch, True)
    t_torch = time_ms(ref, False) if ref is not None and not CPU else float("nan")
    ROWS.append((name, t_tile, t_torch, verdict))
    print(f"{name:30s} tile {t_tile:8.3f} ms  torch {t_torch:8.3f} ms  torch/tile {t_torch / t_tile:6.2f}  {verdict}",
          flush=True)


def main() -> None:
    rng = np.random.default_rng(27)

    # q04: C = 1.5 A B - 0.5 C in f64, tiles of [32, 32] (K in 16s)
    n = 96 if CPU else 2048
    m04 = tilelang.load(P / "q04_dgemm_f64_tails.tile")
    a, b = arr(rng.standard_normal((n, n))), arr(rng.standard_normal((n, n)))
    c0 = rng.random((n, n))
    c = arr(c0.copy())
    op = m04.dgemm[32, 32, 16](tilelang.partition(c, [32, 32]), a, b, 1.5, -0.5)
    want04 = 1.5 * host(a) @ host(b) - 0.5 * c0    # one run of `op` from c0

    def ref04() -> Any:
        return torch.addmm(c, a, b, beta=-0.5, alpha=1.5)

    bench("q04 DGEMM f64", op, None if CPU else ref04, lambda: close(c, want04, 1e-10))

    # q07: FFT of rows of 32 complex f32 (and the inverse in the same kernel)
    rows = 16 if CPU else 1 << 18
    m07 = tilelang.load(P / "q07_radix2_fft_rows.tile")
    xr, xi = (arr(rng.standard_normal((rows, 32), dtype=np.float32)) for _ in range(2))
    fr, fi, br, bi = (arr(np.zeros((rows, 32), np.float32)) for _ in range(4))
    op = m07.fft_rows[4](*(tilelang.partition(t, [4, 32]) for t in (fr, fi, br, bi)), xr, xi)
    want07 = np.fft.fft(host(xr).astype(np.float64) + 1j * host(xi), axis=1)

    def ref07() -> Any:
        f = torch.fft.fft(torch.complex(xr, xi), dim=1)
        return torch.fft.ifft(f, dim=1)

    bench("q07 FFT-32 rows + inverse", op, None if CPU else ref07, lambda: close(fr, want07.real, 1e-4))

    # q09: Dot2 of rows (lanes of 128) vs an f64 dot in PyTorch
    r9, k9 = (6, 2000) if CPU else (4096, 8192)
    m09 = tilelang.load(P / "q09_compensated_dot2.tile")
    x9 = rng.standard_normal((r9, k9), dtype=np.float32)
    y9 = rng.standard_normal((r9, k9), dtype=np.float32)
    X9, Y9 = arr(x9), arr(y9)
    acc, naive = arr(np.zeros(r9, np.float32)), arr(np.zeros(r9, np.float32))
    op = m09.dot2(tilelang.partition(acc, [1]), tilelang.partition(naive, [1]), X9, Y9)
    want09 = (x9.astype(np.float64) * y9).sum(1)

    def ref09() -> Any:
        return (X9.double() * Y9.double()).sum(1)

    bench("q09 Dot2 f32 (vs f64 dot)", op, None if CPU else ref09, lambda: close(acc, want09, 1e-6))

    # q14: one Gray-Scott step on a torus, [16, 16] tiles
    h, w = (32, 48) if CPU else (4096, 4096)
    m14 = tilelang.load(P / "q14_gray_scott_torus_tiles.tile")
    u0 = (1 - 0.5 * rng.random((h, w))).astype(np.float32)
    v0 = (0.25 * rng.random((h, w))).astype(np.float32)
    U, V = arr(u0), arr(v0)
    un, vn = arr(np.zeros((h, w), np.float32)), arr(np.zeros((h, w), np.float32))
    op = m14.react[16](tilelang.partition(un, [16, 16]), tilelang.partition(vn, [16, 16]), U, V)

    def lap(x: np.ndarray) -> np.ndarray:
        return np.roll(x, 1, 0) + np.roll(x, -1, 0) + np.roll(x, 1, 1) + np.roll(x, -1, 1) - 4 * x

    want14 = u0 + 0.16 * lap(u0) - u0 * v0 * v0 + 0.035 * (1 - u0)

    def ref14() -> Any:
        def tl(x: Any) -> Any:
            return x.roll(1, 0) + x.roll(-1, 0) + x.roll(1, 1) + x.roll(-1, 1) - 4 * x
        uvv = U * V * V
        return U + 0.16 * tl(U) - uvv + 0.035 * (1 - U), V + 0.08 * tl(V) + uvv - 0.1 * V

    bench("q14 Gray-Scott step", op, None if CPU else ref14, lambda: close(un, want14, 1e-5))

    # q19: SPH density, all pairs (tiles of 32 x 64)
    n19 = 300 if CPU else 16384
    m19 = tilelang.load(P / "q19_sph_density_pressure.tile")
    px, py = (rng.random(n19, dtype=np.float32) * (0.6 if CPU else 4.0) for _ in range(2))
    pm = np.full(n19, 0.36 / 220, np.float32)
    PX, PY, PM = arr(px), arr(py), arr(pm)
    rho = arr(np.zeros(n19, np.float32))
    op = m19.density[32, 64](tilelang.partition(rho, [32]), PX, PY, PM)

    def wk(q: Any, lib: Any) -> Any:
        s = 10 / (7 * np.pi * 0.08 * 0.08)
        return s * lib.where(q < 1, 1 - 1.5 * q ** 2 + 0.75 * q ** 3, lib.where(q < 2, 0.25 * (2 - q) ** 3, 0 * q))

    r = np.sqrt((px[:, None] - px[None]) ** 2 + (py[:, None] - py[None]) ** 2) if CPU else None
    want19 = (pm[None] * wk(r / 0.08, np)).sum(1) if CPU else None

    def ref19() -> Any:
        d = torch.cdist(torch.stack([PX, PY], 1), torch.stack([PX, PY], 1))
        return (PM[None] * wk(d / 0.08, torch)).sum(1)

    bench("q19 SPH density all pairs", op, None if CPU else ref19,
          lambda: close(rho, want19 if CPU else ref19(), 1e-3))

    # q17: JPEG 8x8 DCT, quantise, inverse, u8 out
    h17, w17 = (40, 48) if CPU else (4096, 4096)
    m17 = tilelang.load(P / "q17_jpeg_dct8_quantise.tile")
    img = rng.integers(0, 256, (h17, w17), dtype=np.uint8)
    rr, cc = np.meshgrid(np.arange(8), np.arange(8), indexing="ij")
    q = (16 + 3 * rr * cc + 4 * (rr + cc)).astype(np.int32)
    IMG, Q = arr(img), arr(q)
    coef, out = arr(np.zeros((h17, w17), np.int32)), arr(np.zeros((h17, w17), np.uint8))
    op = m17.jpeg_block(tilelang.partition(coef, [8, 8]), tilelang.partition(out, [8, 8]), IMG, Q)
    k = np.arange(8)[:, None]
    cm = (np.where(k == 0, np.sqrt(0.125), 0.5) * np.cos((2 * np.arange(8)[None] + 1) * k * np.pi / 16))
    cm = cm.astype(np.float32)

    def ref17() -> Any:
        ct = torch.from_numpy(cm).cuda()
        blocks = (IMG.float() - 128).reshape(h17 // 8, 8, w17 // 8, 8).permute(0, 2, 1, 3)
        y = ct @ blocks @ ct.T / Q.float()
        qc = torch.where(y < 0, -torch.floor(-y + 0.5), torch.floor(y + 0.5))
        back = ct.T @ (qc * Q.float()) @ ct + 128
        return back.permute(0, 2, 1, 3).reshape(h17, w17).add(0.5).floor().clamp(0, 255).to(torch.uint8)

    def chk17() -> str:
        blocks = (img.astype(np.float64) - 128).reshape(h17 // 8, 8, w17 // 8, 8).transpose(0, 2, 1, 3)
        y = cm @ blocks @ cm.T / q
        qc = np.where(y < 0, -np.floor(-y + 0.5), np.floor(y + 0.5)).transpose(0, 2, 1, 3).reshape(h17, w17)
        frac = float((host(coef) == qc).mean())
        return f"same ({frac:.4f} of coefficients)" if frac > 0.995 else f"DIFFERENT ({frac:.4f} of coefficients)"

    bench("q17 JPEG DCT-8 quantise", op, None if CPU else ref17, chk17)

    # q08: Harris response + peaks of [24, 32] images, one a block
    n8 = 3 if CPU else 16384
    m08 = tilelang.load(P / "q08_harris_corners_batch.tile")
    im8 = arr(rng.random((n8, 24, 32), dtype=np.float32))
    resp, peaks = arr(np.zeros((n8, 24, 32), np.float32)), arr(np.zeros(n8, np.int32))
    op = m08.harris[24, 32](tilelang.partition(resp, [1, 24, 32]), tilelang.partition(peaks, [1]), im8, 0.01)

    def ref08() -> Any:
        x = im8[:, None]
        kx = torch.tensor([[[[0.5, 0, -0.5]]]], device="cuda").flip(-1)
        gx = F.conv2d(x, kx, padding=(0, 1))
        gy = F.conv2d(x, kx.transpose(-1, -2), padding=(1, 0))
        box = torch.ones(1, 1, 3, 3, device="cuda")
        sxx, syy, sxy = (F.conv2d(g, box, padding=1) for g in (gx * gx, gy * gy, gx * gy))
        return (sxx * syy - sxy * sxy - 0.05 * (sxx + syy) ** 2)[:, 0]

    def chk08() -> str:
        x = host(im8).astype(np.float64)
        p = np.pad(x, ((0, 0), (1, 1), (1, 1)))
        gx = (p[:, 1:-1, 2:] - p[:, 1:-1, :-2]) / 2
        gy = (p[:, 2:, 1:-1] - p[:, :-2, 1:-1]) / 2

        def box(a: np.ndarray) -> np.ndarray:
            z = np.pad(a, ((0, 0), (1, 1), (1, 1)))
            return sum(z[:, 1 + i:25 + i, 1 + j:33 + j] for i in (-1, 0, 1) for j in (-1, 0, 1))

        sxx, syy, sxy = box(gx * gx), box(gy * gy), box(gx * gy)
        return close(resp, sxx * syy - sxy * sxy - 0.05 * (sxx + syy) ** 2, 1e-4)

    bench("q08 Harris response batch", op, None if CPU else ref08, chk08)

    print_rows(ROWS)


if __name__ == "__main__":
    main()
