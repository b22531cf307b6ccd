"""The LLM engine's tests import its modules from `examples/llm/`."""

import sys
from pathlib import Path

LLM = Path(__file__).resolve().parents[2] / "examples" / "llm"
if str(LLM) not in sys.path:
    sys.path.insert(0, str(LLM))
