"""export_llm: a KV-cache decoder LLM lowered to the .pte that ExecuTorch's LLM runner drives through OpenVINO.

One call does what the runner needs: export with the runner's calling convention
(``tokens [1, S]``, ``input_pos [1]``), lowering with ``OpenvinoPartitioner``
(the KV cache becomes OpenVINO state, attention one OpenVINO op) and the metadata
methods the runner reads (``get_max_seq_len``, ``get_vocab_size``, ``use_kv_cache``,
``enable_dynamic_shape``, bos and eos ids). The command line is export.py.
"""

from __future__ import annotations

import contextlib
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Union

import torch
from executorch.exir import (
    EdgeProgramManager,
    ExecutorchBackendConfig,
    ExecutorchProgramManager,
    to_edge_transform_and_lower,
)
from executorch.exir.backend.compile_spec_schema import CompileSpec
from executorch.exir.passes import MemoryPlanningPass

from ..compile_specs import parse_compile_specs
from ..partitioner import OpenvinoPartitioner
from ..preprocessing.paged_attention import PagedAttentionRefused
from .weight_compression import (
    check_compression,
    compressed_module,
    compression_settings,
)


def runner_metadata(args: Any, bos_id: int, eos_ids: Sequence[int]) -> Dict[str, Any]:
    """The constant methods ExecuTorch's LLM runner reads, from ModelArgs-like settings."""
    max_context_len = getattr(args, "max_context_len", None) or args.max_seq_len
    return {
        "get_max_seq_len": args.max_seq_len,
        "get_max_context_len": max_context_len,
        "get_n_layers": args.n_layers,
        "get_vocab_size": args.vocab_size,
        "use_kv_cache": True,
        "use_sdpa_with_kv_cache": False,
        "enable_dynamic_shape": bool(args.enable_dynamic_shape),
        "get_bos_id": bos_id,
        "get_eos_ids": list(eos_ids),
    }


def program_reading_inputs_in_place(edge: EdgeProgramManager) -> ExecutorchProgramManager:
    """The ExecuTorch program of ``edge``, with no memory planned for its methods' inputs.

    A method whose inputs are planned copies each input into the program's memory at
    every call. Whisper's ``text_decoder`` takes the encoder's output (1500 x d_model
    values, 2.3 MB at whisper-tiny's f32) at every step and reads it only at position
    0, and a vision-language ``text_decoder`` takes a prompt's embeddings. Without
    planned inputs, ExecuTorch's ``set_input`` (and its Python and C++ ``Module``)
    hands the caller's tensor to the delegate, which binds it in place; the caller
    keeps it alive for the call, as it already does. Outputs stay planned: the
    delegate writes them into the program's memory.
    """
    inputs_in_place = MemoryPlanningPass(alloc_graph_input=False)
    return edge.to_executorch(ExecutorchBackendConfig(memory_planning_pass=inputs_in_place))


def export_llm(
    model: torch.nn.Module,
    args: Any,
    *,
    compile_specs: Optional[List[CompileSpec]] = None,
    bos_id: int = 1,
    eos_ids: Sequence[int] = (2,),
    weight_compression: Union[str, Mapping[str, Any], None] = None,
    generate_etrecord: bool = False,
) -> ExecutorchProgramManager:
    """Exports and lowers a KV-cache decoder called as ``model(tokens, {"input_pos": pos})``.

    Args:
        model: the decoder, such as ``construct_transformer(args)`` from
            ``executorch.examples.models.llama``, with ``use_kv_cache=True``.
        args: its settings (``ModelArgs`` or any object with ``max_seq_len``,
            ``n_layers``, ``vocab_size``, ``enable_dynamic_shape``). With
            ``enable_dynamic_shape`` the runner prefills a prompt in one call;
            without it, one token per call.
        compile_specs: from ``openvino_compile_specs(...)`` (device, precision, cache).
        bos_id, eos_ids: the tokenizer's ids, recorded for the runner.
        weight_compression: ``"int4"`` or ``"int8"`` (:data:`WEIGHT_COMPRESSION_FORMS`),
            or arguments of ``nncf.compress_weights`` such as ``{"mode": "int4_sym",
            "group_size": 64}`` (the mode a ``nncf.CompressWeightsMode`` or its value);
            data-aware ones (``awq``, ``scale_estimation``, a ``ratio`` below 1) take a
            ``dataset`` of the model's inputs (``calibration.calibration_inputs``).
            :func:`check_compression` says what is refused.
            Needs the ``quantization`` extra. OpenVINO then receives 4-bit or 8-bit
            weights (partition/compressed_weights.py), and the CPU plugin quantizes the
            activations of their layers to int8 in its own groups unless ``compile_specs``
            set ``dynamic_quantization_group_size``.
        generate_etrecord: also record an ETRecord (``program.get_etrecord()``), which
            ``executorch.devtools.Inspector`` reads with an ETDump to relate OpenVINO's
            layers to the model's operators (docs/profiling.md).

    Example::

        args = ModelArgs(dim=288, n_layers=6, n_heads=6, n_kv_heads=2, vocab_size=512,
                         max_seq_len=256, use_kv_cache=True, enable_dynamic_shape=True)
        program = export_llm(construct_transformer(args).eval(), args)
        Path("llama.pte").write_bytes(program.buffer)
    """
    if not getattr(args, "use_kv_cache", True):
        raise ValueError(
            "export_llm: the model must be built with use_kv_cache=True; "
            "ExecuTorch's LLM runner feeds one token per call after the prompt"
        )
    if args.max_seq_len < 2:
        # Checked before export: OpenVINO's compile divided by zero for a static cache of 0 positions.
        raise ValueError(f"export_llm: max_seq_len is {args.max_seq_len}; the KV cache needs 2 positions or more")
    options = parse_compile_specs(compile_specs)
    if options.paged_attention:
        _check_paged_attention_fits(args)
    compression = check_compression(compression_settings(weight_compression)) if weight_compression else None
    tokens = torch.tensor([[bos_id, bos_id]], dtype=torch.long)
    positions = torch.tensor([0], dtype=torch.long)
    dynamic_shapes = None
    if args.enable_dynamic_shape:
        sequence = torch.export.Dim("sequence", min=1, max=args.max_seq_len - 1)
        dynamic_shapes = ({1: sequence}, {"input_pos": None})
    else:
        tokens = tokens[:, :1]
    with torch.no_grad():
        example = (tokens, {"input_pos": positions})
        exported = export_in_eval_mode(model, example, dynamic_shapes)
        if compression:
            compressed = compressed_module(exported, compression)
            exported = torch.export.export(compressed, example, dynamic_shapes=dynamic_shapes)
        edge = to_edge_transform_and_lower(
            exported,
            partitioner=[OpenvinoPartitioner(compile_specs)],
            constant_methods=runner_metadata(args, bos_id, eos_ids),
            generate_etrecord=generate_etrecord,
        )
    return edge.to_executorch()


def _check_paged_attention_fits(args: Any) -> None:
    """Refuses, before the export, a model the compile spec paged_attention would run wrong."""
    window = getattr(args, "sliding_window", None)
    if window:
        # OpenVINO's SDPAToPagedAttention makes attention causal over the whole cache and
        # drops the window's mask (OpenVINO 2026.4.1): the logits would differ from position
        # `window` on, without an error.
        raise PagedAttentionRefused(
            f"export_llm: paged_attention does not keep a sliding window (sliding_window={window}); "
            "export this model without it"
        )


def export_in_eval_mode(
    model: torch.nn.Module, example: tuple, dynamic_shapes: Optional[tuple], strict: bool = False
) -> torch.export.ExportedProgram:
    """Exports `model` in eval mode, then gives each submodule back the mode it had:
    the module is the caller's."""
    with modules_in_eval_mode(model):
        return torch.export.export(model, example, dynamic_shapes=dynamic_shapes, strict=strict)


@contextlib.contextmanager
def modules_in_eval_mode(model: torch.nn.Module) -> Iterator[torch.nn.Module]:
    """`model` in eval mode for the block; each submodule gets back the mode it had."""
    modes = {module: module.training for module in model.modules()}
    try:
        yield model.eval()
    finally:
        for module, training in modes.items():
            module.training = training
