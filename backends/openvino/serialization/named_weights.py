"""Weights a blob's IR reads from the program's named data, where the program stores them once.

For a weight that several methods read (partition/shared_weights.py names them by
digest in the compile spec ``shared_weights``), each Constant of the model holding its
bytes becomes a Parameter whose name gives the weight's key in ExecuTorch's named data
and the CRC-32 of its bytes, and the bytes go to a ``NamedDataStore`` under that key.
ExecuTorch keeps one copy per key for the whole program. At init the runtime
(``runtime/named_weights.cpp``) fetches each from the program's named data, checks its
size and CRC-32, and puts a Constant over those bytes in place of the Parameter before
it compiles; the blob records the fact (``FACT_NAMED_WEIGHTS``) so that a runtime that
does not know it refuses the blob.
"""

from __future__ import annotations

import logging
import zlib
from typing import Collection, Dict, Optional

import numpy as np

import openvino as ov
import openvino.opset13 as ov_ops

from ..edge_graph.program_inputs import MIN_SHARED_WEIGHT_BYTES, weight_digest

logger = logging.getLogger(__name__)

#: The name of a Parameter that stands for a named weight, followed by its key,
#: ".crc=" and the CRC-32 of its bytes in 8 hex digits (kNamedWeightName in backend.h).
NAMED_WEIGHT_NAME = "executorch_openvino.named_weight="
#: What our keys in the program's named data start with; other delegates use their own.
KEY_PREFIX = "openvino."
#: The alignment of the bytes in the program, as OpenVINO's IR weights are aligned in the blob.
ALIGNMENT = 64


def parameter_name(key: str, data: bytes) -> str:
    return f"{NAMED_WEIGHT_NAME}{key}.crc={zlib.crc32(data):08x}"


def name_shared_weights(model: ov.Model, digests: Collection[str]):
    """Moves the constants whose bytes have one of `digests` to a NamedDataStore.

    Returns the store's output for ``PreprocessResult.data_store_output``, or None when
    no constant of the model holds such a weight.
    """
    if not digests:
        return None
    from executorch.exir._serialize._named_data_store import NamedDataStore

    store = NamedDataStore()
    parameters: Dict[str, ov.Node] = {}
    for constant in model.get_ordered_ops():
        data = _bytes_of(constant)
        if data is None:
            continue
        digest = weight_digest(data)
        if digest not in digests:
            continue
        key = KEY_PREFIX + digest
        if key not in parameters:
            parameter = ov_ops.parameter(list(constant.get_output_shape(0)), constant.get_output_element_type(0))
            parameter.output(0).get_tensor().set_names({parameter_name(key, data)})
            parameters[key] = parameter
            store.add_named_data(key, data, alignment=ALIGNMENT)
        constant.output(0).replace(parameters[key].output(0))
    if not parameters:
        return None
    model.add_parameters(list(parameters.values()))
    model.validate_nodes_and_infer_types()
    logger.info("OpenVINO delegate: %d weight(s) stored once in the program's named data", len(parameters))
    return store.get_named_data_store_output()


def _bytes_of(node: ov.Node) -> Optional[bytes]:
    """A Constant's bytes, when it is large enough to share and numpy holds its type exactly."""
    if node.get_type_name() != "Constant":
        return None
    element_type = node.get_output_element_type(0)
    if element_type == ov.Type.bf16 or element_type.bitwidth % 8:
        return None  # numpy reads bf16 as float16, and sub-byte types are packed: not the bytes torch hashed
    if node.get_byte_size() < MIN_SHARED_WEIGHT_BYTES:
        return None
    return np.ascontiguousarray(node.get_data()).view(np.uint8).tobytes()
