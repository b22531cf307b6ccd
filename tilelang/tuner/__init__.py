"""The autotuner: `#[autotune(...)]` kernels, their candidate spaces
(`space.py`), the hints of Tile launches (`host.py`) and the records kept
beside the compile cache (`records.py`). The timing of candidates on a Python
call's own arguments is `api/tuning.py`, a kind of call.
`tilec tune` and `tilec cache list` are its command-line side."""
