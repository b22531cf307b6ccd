"""A mutation fuzzer for the whole toolchain: `check`, `run --device cpu`, the REPL.

Seeds are the repository's own programs (examples, `tests/run`, `tests/ui`,
the stdlib, the explanation files' examples). Each case takes one seed and
applies a few random mutations: token edits (delete, duplicate, swap,
replace with a token of the corpus), interesting literals (0, -1, 2^31,
2^64, 1e400, thousands of digits, `1 << 40`), type swaps, shapes that are
zero, negative, huge or not a power of two, lines spliced from other
programs, deep nesting (past the nesting limit too), long words, odd
characters; sometimes a second program is spliced in whole.

Each mutant is checked (`driver.compile(.., "checked")`) and, when it checks,
run on the CPU (`run.execute`) with its output discarded; a few are fed to a
REPL session too. The outcome of each is one of:

- `ok`, `diagnostics` (the checker's errors), `no-main` (it checked, and has
  no `fn main` to run: a mutant of a stdlib or library file), `runtime-error`
  (a `TileError`: a located run-time diagnostic), `long-run` (the program was
  still running at the time limit: an infinite or long loop is a valid
  program; the case is shown so that it can be looked at);
- `ice`: anything else escaping (an `ICE`, a Python exception, a diagnostic
  with code `ICE`, a diagnostic that leaks a traceback or a Lark name, a
  diagnostic that cannot be rendered, an error without a help line);
- `hang`: the CHECK (not the run) took longer than the time limit (10 s of
  CPU time, so that the load of the machine does not count).

`ice` and `hang` are bugs. Every case is reproducible from (seed, index):
`python tests/fuzz/fuzzer.py --seed S --replay I` prints and reruns case I.

    python tests/fuzz/fuzzer.py --count 1000             # a short campaign
    nice -n 19 python tests/fuzz/fuzzer.py --count 100000 --seed 12 --log fuzz.log

Memory: the worker limits its address space (`--memory-gb`, default 4), so a
mutant allocating a huge tensor gets E0720 instead of taking the machine's
memory. The default test suite runs a few hundred cases with a fixed seed
(`tests/fuzz/test_fuzz.py`); `FUZZING.md` records the long runs.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import re
import resource
import signal
import sys
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

CHECK_LIMIT_S = 10.0  # CPU seconds: a check that takes longer is a hang (a bug)
RUN_LIMIT_S = 5.0     # CPU seconds: a run still going is a long-running program (not a bug)
WALL_FACTOR = 12      # and the wall-clock backstop of each limit

# ---------------------------------------------------------------- the corpus
TOKEN_RE = re.compile(
    r"\s+|//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\])*\"|0[xob][0-9A-Fa-f_]+\w*|\d[\d_]*(?:\.\d[\d_]*)?"
    r"(?:[eE][+-]?\d+)?\w*|[A-Za-z_]\w*|::|->|\.\.=|\.\.|<<=|>>=|<<|>>|==|!=|<=|>=|&&|\|\||"
    r"[+\-*/%&|^]=|.", re.S)

KEYWORDS = ["fn", "kernel", "let", "mut", "if", "else", "for", "in", "while", "return", "break",
            "continue", "const", "use", "unsafe", "graph", "as", "true", "false"]
DTYPES = ["f32", "f16", "bf16", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
          "bool"]
INTERESTING = ["0", "-1", "1", "2", "3", "7", "127", "128", "255", "256", "1000", "65535",
               "65536", "2147483647", "2147483648", "-2147483648", "4294967295", "4294967296",
               "9223372036854775807", "9223372036854775808", "18446744073709551615",
               "18446744073709551616", "1e308", "1e400", "0.0", "-0.0", "1e-45", "3.5",
               "(1 << 40)", "(0 - 1)", "(65536 * 65537)", "1u8", "255u8", "-1i8", "1i64",
               "0x7fffffff", "0xffffffffffffffff", "1_000_000", "9" * 5000, "2.5f16",
               "1e38f16", "(1 << 31)", "(-1 >> 70)", "(0 / 0)", "(1 % 0)"]
SHAPES = ["[0]", "[1]", "[3]", "[768]", "[-1]", "[1 << 20]", "[1, 0]", "[4, 4]", "[2, 3, 4]",
          "[65536 * 65537]", "[N]", "[]", "[?]", "[2147483647]"]
ODD_TEXT = ["\t", "\r\n", "\u00e9", "\u200b", "\ufeff", "\x00", "\x7f", "\u2028", "λ", "😀",
            "\\", "'", "`", "@", "$", "#", "~", "?", "\"", "/*", "*/", "//"]


def _seed_files() -> list[Path]:
    out: list[Path] = []
    for folder in ("examples", "tests/run", "tests/ui", "stdlib", "tests/soundness"):
        out.extend(sorted((REPO / folder).rglob("*.tile")))
    return out


def _explain_examples() -> list[str]:
    from tilelang.diagnostics import explain

    texts: list[str] = []
    for code in explain.explained_codes():
        texts.extend(body for _, body in explain.tile_blocks(explain.explain_text(code) or ""))
    return texts


@dataclass
class Corpus:
    programs: list[str]
    tokens: list[str]
    lines: list[str]

    @classmethod
    def load(cls) -> Corpus:
        programs = []
        for path in _seed_files():
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if 0 < len(text) < 40_000:
                programs.append(text)
        programs.extend(_explain_examples())
        vocab: set[str] = set()
        lines: list[str] = []
        for text in programs:
            vocab.update(t for t in TOKEN_RE.findall(text) if t.strip() and len(t) < 40)
            lines.extend(ln for ln in text.splitlines() if ln.strip())
        return cls(programs, sorted(vocab), lines)


# ---------------------------------------------------------------- mutations
def _tokens(text: str) -> list[str]:
    return TOKEN_RE.findall(text)


def _meaningful(toks: list[str]) -> list[int]:
    return [i for i, t in enumerate(toks) if t.strip() and not t.startswith(("//", "/*"))]


GENTLE_OPS = (4, 4, 5, 6, 16)  # values, element types, shapes, operators


def mutate(text: str, rng: random.Random, corpus: Corpus, gentle: bool = False) -> str:
    """One random mutation of `text` (`gentle`: one that often keeps it valid,
    so that the run-time paths see it)."""
    toks = _tokens(text)
    idx = _meaningful(toks)
    op = rng.choice(GENTLE_OPS) if gentle else rng.randrange(17)
    if not idx:
        return text + rng.choice(corpus.tokens)
    i = rng.choice(idx)
    t = toks[i]
    if op == 0:  # delete a token
        toks[i] = ""
    elif op == 1:  # duplicate a token
        toks[i] = t + " " + t
    elif op == 2:  # swap with a neighbour
        j = rng.choice(idx)
        toks[i], toks[j] = toks[j], toks[i]
    elif op == 3:  # any token of the corpus
        toks[i] = rng.choice(corpus.tokens)
    elif op == 4:  # an interesting number where a number is
        nums = [k for k in idx if toks[k][0].isdigit()]
        toks[rng.choice(nums) if nums else i] = rng.choice(INTERESTING)
    elif op == 5:  # another element type
        dts = [k for k in idx if toks[k] in DTYPES]
        toks[rng.choice(dts) if dts else i] = rng.choice(DTYPES)
    elif op == 6:  # a shape literal
        opens = [k for k in idx if toks[k] == "["]
        if opens:
            k = rng.choice(opens)
            depth, m = 0, k
            while m < len(toks):
                depth += toks[m] == "["
                depth -= toks[m] == "]"
                if depth == 0:
                    break
                m += 1
            toks[k:m + 1] = [rng.choice(SHAPES)]
    elif op == 7:  # a name replaced by another name or a keyword
        names = [k for k in idx if re.fullmatch(r"[A-Za-z_]\w*", toks[k])]
        pool = [w for w in corpus.tokens if re.fullmatch(r"[A-Za-z_]\w*", w)] + KEYWORDS
        toks[rng.choice(names) if names else i] = rng.choice(pool)
    elif op == 8:  # a line from another program
        lines = text.splitlines()
        if lines:
            lines[rng.randrange(len(lines))] = rng.choice(corpus.lines)
        return "\n".join(lines) + "\n"
    elif op == 9:  # delete, duplicate or swap lines
        lines = text.splitlines()
        if len(lines) > 1:
            a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
            choice = rng.randrange(3)
            if choice == 0:
                del lines[a]
            elif choice == 1:
                lines.insert(a, lines[b])
            else:
                lines[a], lines[b] = lines[b], lines[a]
        return "\n".join(lines) + "\n"
    elif op == 10:  # nest deeply around a token (sometimes past the nesting limit)
        n = rng.choice([3, 20, 200, 600, 1100, 3000])
        kind = rng.randrange(6)
        if kind == 0:
            toks[i] = "(" * n + t + ")" * n
        elif kind == 1:
            toks[i] = "{" * n + t + "}" * n
        elif kind == 2:
            toks[i] = "-" * n + t
        elif kind == 3:
            toks[i] = t + " as i32" * n
        elif kind == 4:
            toks[i] = t + " + 1" * n
        else:
            toks[i] = "if true { " * n + t + " } else { 0 }" * n
    elif op == 11:  # an odd character
        toks[i] = t + rng.choice(ODD_TEXT)
    elif op == 12:  # a long word
        toks[i] = t + " " + "a" * rng.choice([100, 5000, 40_000]) + " "
    elif op == 13:  # truncate
        return text[: rng.randrange(len(text) + 1)]
    elif op == 14:  # splice another program (items meet items)
        other = rng.choice(corpus.programs)
        return text + "\n" + other
    elif op == 15:  # a keyword anywhere
        toks[i] = rng.choice(KEYWORDS)
    else:  # an operator swap
        ops = [k for k in idx if toks[k] in ("+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^",
                                             "<", ">", "==", "&&", "||")]
        if ops:
            toks[rng.choice(ops)] = rng.choice(["+", "-", "*", "/", "%", "<<", ">>", "&", "|",
                                               "^", "<", "==", "&&", "||"])
    return "".join(toks)


def make_case(seed: int, index: int, corpus: Corpus) -> str:
    rng = random.Random(f"{seed}:{index}")
    text = rng.choice(corpus.programs)
    gentle = rng.random() < 0.4
    for _ in range(1 if gentle else rng.choice([1, 1, 1, 2, 2, 3, 5])):
        text = mutate(text, rng, corpus, gentle)
    return text


# ---------------------------------------------------------------- running
class _Timeout(BaseException):
    """Raised by the alarm; a BaseException so that no `except Exception` in
    tilec swallows it."""


@contextlib.contextmanager
def _limit(seconds: float) -> Iterator[None]:
    """Stop the block after `seconds` of CPU time (ITIMER_PROF: a campaign at
    `nice -n 19` on a loaded machine measures the work, not the load), or
    after WALL_FACTOR times that of wall time (a block that waits)."""
    def fire(signum: int, frame: object) -> None:
        raise _Timeout

    old_prof = signal.signal(signal.SIGPROF, fire)
    old_alrm = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, seconds * WALL_FACTOR)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGPROF, old_prof)
        signal.signal(signal.SIGALRM, old_alrm)


LEAKS = re.compile(r"Traceback \(most recent|Token\(|Tree\(|tilelang/|__[A-Z]+_\d|\$END")


@dataclass
class Outcome:
    kind: str  # ok | diagnostics | runtime-error | long-run | ice | hang
    detail: str = ""
    seconds: float = 0.0


def _render_all(diags: list, sources: object) -> str | None:  # type: ignore[type-arg]
    """Render in every format; the problem in words if that fails or leaks."""
    from tilelang.diagnostics import render

    for fmt in ("human", "short", "json"):
        try:
            text = render.render(diags, sources, fmt)  # type: ignore[arg-type]
        except Exception as e:
            return f"rendering ({fmt}) failed: {type(e).__name__}: {e}"
        m = LEAKS.search(text)
        if m:
            return f"the {fmt} rendering leaks internals ({m.group()!r})"
    for d in diags:
        if d.code == "ICE" or not d.code:
            return f"an ICE diagnostic: {d.message}"
        if d.severity.value == "error" and not d.help:  # every error proposes a fix (STYLE.md)
            return f"error[{d.code}] without a help line: {d.message}"
    return None


_SCRATCH: list[str] = []


def private_paths(text: str) -> str:
    """`text` with its "/tmp/.." file names moved into a folder of this
    process's own: the corpus's programs save and load .npy files at fixed
    paths (tests/run/npy_round_trip.tile, ..), so a mutant run beside the
    suite's own run of the original (another xdist worker) wrote the file
    that test was about to read back. The same folder for every case of a
    process (a campaign's, removed at its end), so a case is still
    reproducible from (seed, index)."""
    if '"/tmp/' not in text:
        return text
    if not _SCRATCH:
        import tempfile

        _SCRATCH.append(tempfile.mkdtemp(prefix="tile-fuzz-"))
    return text.replace('"/tmp/', f'"{_SCRATCH[0]}/')


def run_case(text: str, run: bool = True) -> Outcome:
    """Check (and, if it checks, run) one program; never raises. Its /tmp
    files go to a folder of the process's own (`private_paths`)."""
    from tilelang import driver
    from tilelang.diagnostics.model import TileError

    text = private_paths(text)
    start = time.perf_counter()
    try:
        with _limit(CHECK_LIMIT_S):
            result = driver.compile(text, "checked", name="fuzz.tile")
    except _Timeout:
        return Outcome("hang", "check", time.perf_counter() - start)
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        return Outcome("ice", "check: " + "".join(traceback.format_exception(e))[-3000:],
                       time.perf_counter() - start)
    problem = _render_all(list(result.diagnostics), result.sources)
    if problem:
        return Outcome("ice", problem, time.perf_counter() - start)
    if not result.ok:
        return Outcome("diagnostics", result.diagnostics[0].code, time.perf_counter() - start)
    if not run:
        return Outcome("ok", "", time.perf_counter() - start)
    from tilelang.run import CheckFailed, execute

    t_run = time.perf_counter()
    try:
        with _limit(RUN_LIMIT_S):
            execute(text, device="cpu", out=io.StringIO(), name="fuzz.tile")
    except _Timeout:
        return Outcome("long-run", "", time.perf_counter() - start)
    except TileError as e:
        from tilelang.source import SourceMap

        diags = list(e.diagnostics)
        sources = getattr(e, "sources", None) or SourceMap()
        problem = _render_all(diags, sources) if getattr(e, "sources", None) else None
        if problem or any(d.code == "ICE" for d in diags):
            return Outcome("ice", problem or diags[0].message, time.perf_counter() - start)
        if diags and diags[0].code == "E0717":
            # a module with no `fn main` (a stdlib file, a `use`d library): it checked, and
            # there is nothing to run; not a run-time error of the program
            return Outcome("no-main", "", time.perf_counter() - start)
        return Outcome("runtime-error", diags[0].code if diags else "", time.perf_counter() - start)
    except CheckFailed as e:
        return Outcome("ice", f"run's check disagrees with check: {e.diagnostics[:1]}",
                       time.perf_counter() - start)
    except MemoryError:
        return Outcome("ice", "MemoryError escaped (should be E0720)", time.perf_counter() - start)
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        return Outcome("ice", "run: " + "".join(traceback.format_exception(e))[-3000:],
                       time.perf_counter() - start)
    del t_run
    return Outcome("ok", "", time.perf_counter() - start)


def run_repl_case(text: str) -> Outcome:
    """Feed the program's lines to a REPL session, an entry per blank-line block
    (its /tmp files in the process's own folder, as `run_case`'s)."""
    from tilelang.repl import ReplSession

    text = private_paths(text)
    start = time.perf_counter()
    session = ReplSession(device="cpu")
    body = text
    m = re.search(r"fn main\(\)\s*\{(.*)\}\s*$", text, re.S)
    if m:
        body = m.group(1)
    try:
        with _limit(RUN_LIMIT_S * 2):
            for entry in re.split(r"\n\s*\n", body):
                out = session.feed(entry)
                if "internal compiler error" in out.stderr:
                    return Outcome("ice", "repl: " + out.stderr[-2000:], time.perf_counter() - start)
    except _Timeout:
        return Outcome("long-run", "repl", time.perf_counter() - start)
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        return Outcome("ice", "repl raised: " + "".join(traceback.format_exception(e))[-3000:],
                       time.perf_counter() - start)
    return Outcome("ok", "repl", time.perf_counter() - start)


# ---------------------------------------------------------------- campaigns
@dataclass
class Report:
    seed: int
    count: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    findings: list[tuple[int, str, str]] = field(default_factory=list)  # (index, kind, detail)
    long_runs: list[int] = field(default_factory=list)
    seconds: float = 0.0
    slowest_check: float = 0.0
    slowest_index: int = -1

    @property
    def bugs(self) -> int:
        return self.kinds["ice"] + self.kinds["hang"]


def limit_memory(gb: float) -> None:
    if gb > 0:
        limit = int(gb * 1024 ** 3)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def campaign_in_worker(seed: int, count: int, repl_every: int = 25, memory_gb: float = 4.0) -> Report:
    """`campaign` in a child process whose address space is limited (a mutant
    that allocates a huge tensor gets E0720 there, not the machine's memory):
    how a test runs a campaign inside pytest."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
        return pool.submit(_limited_campaign, seed, count, repl_every, memory_gb).result()


def _limited_campaign(seed: int, count: int, repl_every: int, memory_gb: float) -> Report:
    limit_memory(memory_gb)
    return campaign(seed, count, repl_every=repl_every)


def campaign(seed: int, count: int, start: int = 0, run_every: int = 1, repl_every: int = 25,
             log: Path | None = None, progress: int = 0) -> Report:
    from tilelang.limits import ensure_recursion_budget

    ensure_recursion_budget()
    corpus = Corpus.load()
    report = Report(seed)
    t0 = time.perf_counter()
    out = log.open("a", encoding="utf-8") if log else None
    try:
        for index in range(start, start + count):
            text = make_case(seed, index, corpus)
            outcome = run_case(text, run=index % run_every == 0)
            if outcome.kind == "diagnostics" and outcome.seconds > report.slowest_check:
                report.slowest_check = outcome.seconds
                report.slowest_index = index
            if repl_every and index % repl_every == 0 and outcome.kind in ("ok", "diagnostics"):
                repl = run_repl_case(text)
                if repl.kind in ("ice", "hang"):
                    outcome = repl
            report.count += 1
            report.kinds[outcome.kind] += 1
            if outcome.kind in ("ice", "hang"):
                report.findings.append((index, outcome.kind, outcome.detail))
                if out:
                    out.write(json.dumps({"seed": seed, "index": index, "kind": outcome.kind,
                                          "detail": outcome.detail, "program": text[:20000]})
                              + "\n")
                    out.flush()
            elif outcome.kind == "long-run":
                report.long_runs.append(index)
            if progress and report.count % progress == 0:
                elapsed = time.perf_counter() - t0
                line = (f"[{report.count}/{count}] {dict(report.kinds)} "
                        f"{elapsed:.0f}s ({report.count / elapsed:.1f}/s)")
                print(line, flush=True)
                if out:
                    out.write(json.dumps({"progress": report.count, "kinds": dict(report.kinds),
                                          "seconds": round(elapsed, 1)}) + "\n")
                    out.flush()
    finally:
        if out:
            out.close()
        if _SCRATCH:  # the cases' /tmp files (`private_paths`)
            import shutil

            shutil.rmtree(_SCRATCH.pop(), ignore_errors=True)
    report.seconds = time.perf_counter() - t0
    return report


def main() -> int:
    ap = argparse.ArgumentParser(description="mutation fuzzer for tilec (see the module docstring)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--start", type=int, default=0, help="first case index")
    ap.add_argument("--run-every", type=int, default=1, help="run every Nth mutant that checks")
    ap.add_argument("--repl-every", type=int, default=25)
    ap.add_argument("--memory-gb", type=float, default=4.0)
    ap.add_argument("--log", type=Path, help="append findings and progress (JSON lines)")
    ap.add_argument("--progress", type=int, default=1000)
    ap.add_argument("--replay", type=int, help="print case N and its outcome")
    args = ap.parse_args()
    limit_memory(args.memory_gb)
    if args.replay is not None:
        text = make_case(args.seed, args.replay, Corpus.load())
        print(text)
        print("----", run_case(text))
        return 0
    report = campaign(args.seed, args.count, args.start, args.run_every, args.repl_every,
                      args.log, args.progress)
    print(f"seed {report.seed}: {report.count} programs in {report.seconds:.0f} s: "
          f"{dict(report.kinds)}; slowest check {report.slowest_check:.2f} s (case "
          f"{report.slowest_index}); "
          f"long runs (first 20): {report.long_runs[:20]}")
    for index, kind, detail in report.findings[:20]:
        print(f"--- case {index}: {kind}\n{detail[-1500:]}")
    return 1 if report.bugs else 0


if __name__ == "__main__":
    sys.exit(main())
