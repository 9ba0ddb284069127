"""``round(x, decimals=d)`` for ``d >= 0``: ``round(x * 10**d) / 10**d``, as PyTorch computes it.

PyTorch 2.13's CPU kernel multiplies by ``10**d`` in the op's math type (float32 for
float16, bfloat16 and float32; float64 for float64), rounds half to even and divides
by the same factor, rounding to the input's dtype once at the end: this form does the
same steps, so the multiply and the rounding are exact as in eager. OpenVINO's CPU
plugin divides through a reciprocal (seen on 2026.4.1, workarounds.py's
``float_division_one_ulp_off``), so the last step may be 1 ulp from eager's quotient, an
error no larger than that of any float division in the delegate.

For ``d < 0`` eager rounds a quotient, ``round(x / 10**-d) * 10**-d``, where that ulp
would move a tie by a whole ``10**-d``: it is not written here (``NotImplemented``), so
the op stays as it is and lowering warns that ExecuTorch's portable kernels lack it.
"""

from __future__ import annotations

import torch

_MATH_TYPE = {torch.float16: torch.float32, torch.bfloat16: torch.float32}


def round_decimals(x: torch.Tensor, decimals: int = 0) -> torch.Tensor:
    if not x.dtype.is_floating_point or decimals < 0:
        return NotImplemented
    if decimals == 0:
        return torch.round(x)
    # pow(10, d) in double as PyTorch's kernel takes it; past double's range, infinity.
    factor = 10.0**decimals if decimals <= 308 else float("inf")
    widened = x.to(_MATH_TYPE.get(x.dtype, x.dtype))
    return (torch.round(widened * factor) / factor).to(x.dtype)
