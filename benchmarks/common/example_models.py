"""The models of examples/models.py, which the tests, the demo and the benchmarks share.

Importing this module puts examples/ on the path, so that a script anywhere under
benchmarks/ finds the models without knowing where examples/ is.
"""

from __future__ import annotations

import sys
from pathlib import Path

_EXAMPLES = str(Path(__file__).resolve().parents[2] / "examples")
if _EXAMPLES not in sys.path:
    sys.path.insert(0, _EXAMPLES)

from models import Mlp, SmallCnn, Tiny, TransformerBlock, small_llama  # noqa: E402

__all__ = ["Mlp", "SmallCnn", "Tiny", "TransformerBlock", "small_llama"]
