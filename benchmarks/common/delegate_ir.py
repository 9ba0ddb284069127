"""What a lowered program holds: the ops left to ExecuTorch's CPU kernels, and the
OpenVINO model inside a method's delegate as our runtime compiles it."""

from __future__ import annotations

from typing import Any, List

import numpy as np
import openvino as ov
from executorch.exir import ExecutorchProgramManager
from executorch.exir.lowered_backend_module import LoweredBackendModule
from executorch_openvino import BACKEND_ID
from executorch_openvino.serialization.blob import read_blob
from executorch_openvino.serialization.named_weights import NAMED_WEIGHT_NAME


def cpu_ops_of(manager: ExecutorchProgramManager, method: str) -> List[str]:
    """The ops of `method` outside every delegate, by name."""
    names = set()
    for node in manager.exported_program(method).graph.nodes:
        if node.op != "call_function" or "getitem" in str(node.target):
            continue
        if "ExecutorchCallDelegate" not in type(node.target).__name__:
            names.add(str(node.target))
    return sorted(names)


def delegate_blobs(manager: ExecutorchProgramManager, method: str) -> List[Any]:
    """The parsed blobs of `method`'s OpenVINO delegates."""
    return [
        read_blob(bytes(module.processed_bytes))
        for module in manager.exported_program(method).graph_module.modules()
        if isinstance(module, LoweredBackendModule) and module.backend_id == BACKEND_ID
    ]


def ir_of(manager: ExecutorchProgramManager, method: str) -> ov.Model:
    """The OpenVINO model of `method` (which our partitioner gives whole to one delegate)
    as our runtime compiles it: the weights several methods read, which the blob takes as
    Parameters named after their key in the program's named data, put back as Constants."""
    blobs = delegate_blobs(manager, method)
    if len(blobs) != 1:
        raise RuntimeError(f"{method}: {len(blobs)} OpenVINO delegates; OpenVINO alone needs the method in one")
    weights = ov.Tensor(np.frombuffer(blobs[0].ir_weights, dtype=np.uint8).copy())
    model = ov.Core().read_model(blobs[0].ir_xml.decode(), weights)
    store = manager._named_data
    for parameter in list(model.get_parameters()):
        names = [name for name in parameter.output(0).get_names() if name.startswith(NAMED_WEIGHT_NAME)]
        if not names:
            continue
        key = names[0][len(NAMED_WEIGHT_NAME) :].rsplit(".crc=", 1)[0]
        data = bytes(store.buffers[store.pte_data[key].buffer_index])
        tensor = ov.Tensor(parameter.get_element_type(), parameter.get_output_shape(0))
        np.copyto(tensor.data.view(np.uint8).reshape(-1), np.frombuffer(data, dtype=np.uint8)[: tensor.byte_size])
        parameter.output(0).replace(ov.op.Constant(tensor).output(0))
        model.remove_parameter(parameter)
    model.validate_nodes_and_infer_types()
    return model
