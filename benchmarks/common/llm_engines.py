"""Engines the LLM benchmarks time against each other: callables that run one call of
a decoder, `engine(tokens, position) -> logits`, starting a new sequence at position 0.

OpenVINO alone comes in two kinds that time different things, and each benchmark keeps
the kind its recorded results were measured with:
- `OpenvinoAloneLogitsView` hands back a view of OpenVINO's output tensor: it times
  `infer` alone (llm_engines.py, the per-node profile of the f32 Llama);
- `OpenvinoAloneLogitsCopy` copies the logits out (bf16 turned to f32), so that the
  caller may keep them past the next call: it times `infer` and that copy
  (llm_quantized.py and the quantized-LLM investigations).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Dict, List, Optional

import openvino as ov
import torch
from executorch.exir.backend.compile_spec_schema import CompileSpec
from executorch.runtime import Runtime
from executorch_openvino import OpenvinoPartitioner, openvino_compile_specs
from executorch_openvino.compile_specs import parse_compile_specs

from common.llm import dynamic_shapes, example_inputs


def compile_config(specs: Optional[List[CompileSpec]]) -> Dict[str, object]:
    """The configuration our runtime compiles with for these compile specs."""
    return parse_compile_specs(specs).compile_config()


def runtime_config(**specs: object) -> Dict[str, object]:
    """The configuration our runtime compiles with for ``openvino_compile_specs(**specs)``."""
    return compile_config(openvino_compile_specs(**specs))


class ExecutorchEngine:
    """A .pte loaded with executorch.runtime, its method called with tokens and position."""

    def __init__(self, pte: Path) -> None:
        self.method = Runtime.get().load_program(pte).load_method("forward")

    def __call__(self, tokens: torch.Tensor, position: int) -> torch.Tensor:
        return self.method.execute([tokens, torch.tensor([position])])[0]


class Eager:
    """The PyTorch module itself (a copy), under torch.no_grad."""

    def __init__(self, module: torch.nn.Module) -> None:
        self.module = copy.deepcopy(module)

    def __call__(self, tokens: torch.Tensor, position: int) -> torch.Tensor:
        with torch.no_grad():
            return self.module(tokens, {"input_pos": torch.tensor([position])})


def ir_with_attention_whole(model: torch.nn.Module, dynamic: bool, context: int) -> ov.Model:
    """Our converted IR of the whole edge program (KV cache as state, grown by concatenation,
    attention kept whole, with the layout fix our partitioner applies first), as our
    delegate gets it."""
    from executorch.exir import EdgeCompileConfig, to_edge
    from executorch_openvino.conversion import to_openvino_model
    from executorch_openvino.partition.kept_whole import SDPA

    with torch.no_grad():
        exported = torch.export.export(model, example_inputs(dynamic), dynamic_shapes=dynamic_shapes(dynamic, context))
    exported = OpenvinoPartitioner().transform_for_pre_decomposition(exported)
    edge_config = EdgeCompileConfig(_check_ir_validity=False, preserve_ops=[SDPA])
    return to_openvino_model(to_edge(exported, compile_config=edge_config).exported_program())


class _OpenvinoAlone:
    """An IR compiled by ov.Core alone with `config`, called as our delegate is: the state
    reset at position 0 (a new sequence, as our runtime does for a grown cache), then
    tokens and position in."""

    def __init__(self, ir: ov.Model, config: Dict[str, object]) -> None:
        self.request = ov.Core().compile_model(ir, "CPU", config).create_infer_request()

    def infer(self, tokens: torch.Tensor, position: int) -> ov.Tensor:
        if position == 0:
            self.request.reset_state()
        self.request.infer([tokens.numpy(), torch.tensor([position]).numpy()], share_inputs=True)
        return self.request.get_output_tensor(0)


class OpenvinoAloneLogitsView(_OpenvinoAlone):
    """Times `infer` alone: the logits are a view of OpenVINO's output tensor, which the
    next call overwrites; bf16 logits stay bf16."""

    def __call__(self, tokens: torch.Tensor, position: int) -> torch.Tensor:
        logits = self.infer(tokens, position)
        if logits.element_type == ov.Type.bf16:  # numpy has no bf16: OpenVINO hands its bits as float16
            return torch.from_numpy(logits.data.view("int16")).view(torch.bfloat16)
        return torch.from_numpy(logits.data)


class OpenvinoAloneLogitsCopy(_OpenvinoAlone):
    """Times `infer` and a copy of the logits the caller may keep past the next call;
    bf16 logits are turned to f32."""

    def __call__(self, tokens: torch.Tensor, position: int) -> torch.Tensor:
        logits = self.infer(tokens, position)
        if logits.element_type == ov.Type.bf16:
            return torch.from_numpy(logits.data.view("int16")).view(torch.bfloat16).float()
        return torch.from_numpy(logits.data.copy())
