"""The autotuner: `#[autotune(...)]` kernels, their candidate spaces
(`space.py`), the timing of candidates on a call's own arguments
(`tuner.py`) and the records kept beside the compile cache (`records.py`).
`tilec tune` and `tilec cache list` are its command-line side."""
