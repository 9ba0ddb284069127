"""The dtype table is written twice, once per language: edge_graph/dtypes.py for lowering and
to_ov_type in runtime/tensor_binding.cpp for binding. They must agree."""

import re
from pathlib import Path

import torch
from executorch_openvino.edge_graph.dtypes import OPENVINO_TYPES

TENSOR_BINDING = Path(__file__).resolve().parents[2] / "runtime" / "tensor_binding.cpp"

# ExecuTorch's ScalarType names (runtime/core/portable_type/scalar_type.h) for torch's dtypes.
SCALAR_TYPES = {
    "Float": torch.float32,
    "Half": torch.float16,
    "BFloat16": torch.bfloat16,
    "Double": torch.float64,
    "Byte": torch.uint8,
    "Char": torch.int8,
    "Short": torch.int16,
    "Int": torch.int32,
    "Long": torch.int64,
    "Bool": torch.bool,
    "UInt16": torch.uint16,
    "UInt32": torch.uint32,
    "UInt64": torch.uint64,
}


def cpp_table():
    """{torch dtype: OpenVINO element type name} from the switch in to_ov_type."""
    source = TENSOR_BINDING.read_text()
    body = source[source.index("to_ov_type(ScalarType type)") :]
    body = body[: body.index("default:")]
    pairs = re.findall(r"case ScalarType::(\w+):\s*return ov::element::(\w+);", body)
    return {SCALAR_TYPES[scalar_type]: element for scalar_type, element in pairs}


def test_runtime_binds_the_dtypes_lowering_accepts_with_the_same_element_types():
    python_table = {dtype: ov_type.get_type_name() for dtype, ov_type in OPENVINO_TYPES.items()}
    assert cpp_table() == python_table
