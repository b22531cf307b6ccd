"""The language server's analysis over the fuzzer's mutants (hrev13): each mutant
is analysed (`tilelang.lsp.analysis.analyze`), every query (hover, definition,
references, completions, signature help, rename) asked at six random offsets,
the document queries (symbols, inlay hints, semantic tokens, links, workspace
symbols) asked once, and each quick fix of its first five diagnostics applied
and the result analysed again. An `internal_error` or an exception is a bug;
a query past 20 s is shown as TIMEOUT. Not in the default suite
(`tests/lsp/test_robustness.py` is, on edited examples).

    python tests/fuzz/lsp_fuzz.py SEED START COUNT

prints `progress I BAD` every 200 cases and `done BAD`.
"""

from __future__ import annotations

import random
import resource
import signal
import sys
import traceback
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE))
sys.setrecursionlimit(10000)
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

from fuzzer import Corpus, make_case  # noqa: E402

from tilelang.lsp import analysis as A  # noqa: E402
from tilelang.lsp import server as S  # noqa: E402
from tilelang.lsp.fixes import quick_fixes  # noqa: E402



class TO(BaseException):
    pass


def alarm(*_: Any) -> None:
    raise TO()


signal.signal(signal.SIGALRM, alarm)

def main() -> int:
    seed, start, count = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    corpus = Corpus.load()
    bad = 0
    for i in range(start, start + count):
        text = make_case(seed, i, corpus)
        rng = random.Random(f"lsp{seed}:{i}")
        stage = "analyze"
        signal.alarm(20)
        try:
            an = A.analyze(text, "fz.tile")
            if an.internal_error:
                print("INTERNAL", seed, i, an.internal_error[:300], flush=True)
                bad += 1
            offs = [rng.randrange(0, len(text) + 1) for _ in range(6)]
            for o in offs:
                for stage, query in ((f"hover@{o}", A.hover), (f"definition@{o}", A.definition),
                                     (f"references@{o}", A.references), (f"completions@{o}", A.completions),
                                     (f"signature@{o}", A.signature_help)):
                    query(an, o)
                stage = f"rename@{o}"
                A.rename_spans(an, o, "renamed")
            for stage, doc_query in (("symbols", A.document_symbols), ("inlay", A.inlay_hints),
                                     ("tokens", S.encode_semantic_tokens), ("links", A.document_links)):
                doc_query(an)
            stage = "workspace"
            A.workspace_items(an, "a")
            for d in an.diagnostics[:5]:
                stage = f"fix {d.code}"
                for fx in quick_fixes(an, d):
                    t = text
                    for sp, new in sorted(fx.edits, key=lambda e: -e[0].start):
                        t = t[:sp.start] + new + t[sp.end:]
                    stage = f"after fix {d.code} {fx.title!r}"
                    an2 = A.analyze(t, "fz.tile")
                    if an2.internal_error:
                        print("INTERNAL-AFTER-FIX", seed, i, d.code, fx.title, an2.internal_error[:300], flush=True)
                        bad += 1
        except TO:
            print("TIMEOUT", seed, i, stage, flush=True)
        except MemoryError:
            print("MEMORY", seed, i, stage, flush=True)
        except BaseException as e:
            bad += 1
            print("CRASH", seed, i, stage, type(e).__name__, str(e)[:200], flush=True)
            traceback.print_exc(limit=-3)
        finally:
            signal.alarm(0)
        if (i - start) % 200 == 0:
            print("progress", i, bad, flush=True)
    print("done", bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
