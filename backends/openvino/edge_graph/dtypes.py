"""The dtypes the delegate binds at its boundary, and OpenVINO's element type for each.

The C++ runtime has the same table (to_ov_type in runtime/tensor_binding.cpp);
tests/contracts/test_dtypes.py checks that the two agree.
"""

from __future__ import annotations

from typing import Dict, FrozenSet

import torch

import openvino as ov

OPENVINO_TYPES: Dict[torch.dtype, ov.Type] = {
    torch.float32: ov.Type.f32,
    torch.float16: ov.Type.f16,
    torch.bfloat16: ov.Type.bf16,
    torch.float64: ov.Type.f64,
    torch.uint8: ov.Type.u8,
    torch.int8: ov.Type.i8,
    torch.int16: ov.Type.i16,
    torch.int32: ov.Type.i32,
    torch.int64: ov.Type.i64,
    torch.bool: ov.Type.boolean,
    torch.uint16: ov.Type.u16,
    torch.uint32: ov.Type.u32,
    torch.uint64: ov.Type.u64,
}

# Dtypes the C++ runtime binds bit for bit.
BOUND_DTYPES: FrozenSet[torch.dtype] = frozenset(OPENVINO_TYPES)
