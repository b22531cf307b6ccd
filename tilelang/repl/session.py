"""`ReplSession`: the REPL's front door, `feed(text)`.

`feed` runs one entry or `:command` and never raises on user input: a crash
inside tilec is reported as an internal error and the session goes on.
"""

from __future__ import annotations

from tilelang.repl.commands import run_command
from tilelang.repl.complete import completions
from tilelang.repl.core import ReplOutput, SessionCore
from tilelang.repl.values import ice_text


class ReplSession(SessionCore):
    """The state of one REPL session (see `tilelang.repl`)."""

    def feed(self, text: str) -> ReplOutput:
        """Check and run one entry (or a `:command`); never raises on user input."""
        stripped = text.strip()
        if not stripped:
            return ReplOutput()
        try:
            if stripped.startswith(":"):
                return run_command(self, stripped)
            return self.entry(text)
        except KeyboardInterrupt:
            return ReplOutput(stderr="error: interrupted\n", ok=False)
        except Exception as e:  # a bug in tilec: say so, keep the session
            return ReplOutput(stderr=ice_text(e), ok=False)

    def completions(self, text: str) -> list[tuple[str, str]]:
        """Completions for the text before the cursor (see `complete.completions`)."""
        return completions(self, text)
