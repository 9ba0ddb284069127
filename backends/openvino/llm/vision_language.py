"""Exports a Hugging Face vision-language model (LLaVA, Gemma 3) to the layout ExecuTorch's
``MultimodalRunner`` loads, every method whole in OpenVINO:

- ``vision_encoder(pixel_values [1, 3, H, W])``: the vision tower and the projector,
  to the image's embeddings ``[1, image tokens, hidden]``;
- ``token_embedding(token_ids [1, n])``: the text embeddings, ``n`` dynamic;
- ``text_decoder(embeddings [1, n, hidden], cache_position [n])``: the logits of the
  last position, the KV cache as OpenVINO state that grows inside the delegate
  (huggingface.py's ``EmbeddingsDecoder``, the same cache as for text LLMs);
- the constant methods the runner reads.

The runner embeds the prompt's text with ``token_embedding``, the image with
``vision_encoder`` in place of the processor's run of image tokens, and prefills each
part with ``text_decoder`` in order, then decodes one token a call. A weight two
methods read (an embedding table tied to the output projection) is stored once
(partition/shared_weights.py).

Gemma 3's image tokens see each other in both directions while transformers prefills
them (its ``token_type_ids``), which the runner has no input for. Its embeddings
therefore carry one channel more, ``hidden + 1``: 1 from ``vision_encoder``, 0 from
``token_embedding``; ``text_decoder`` reads the flag off and lets the positions of an
image's call see each other (huggingface.py's ``EmbeddingsDecoder``). The runner passes
the embeddings from one method to the other as they are, so it needs nothing more.

With the compile spec ``paged_attention``, ``text_decoder`` keeps its KV cache in
OpenVINO's PagedAttention form, its prompts (the image's embeddings among them) filled
by the CPU plugin's PagedAttention kernel, as OpenVINO GenAI's VLMPipeline runs LLaVA;
the other two methods have no cache and do not take the spec. The form attends
causally over the whole cache, so a model whose text decoder masks otherwise (Gemma 3:
its image tokens see each other, and its sliding-window layers) is refused, and so is
one whose output projection is its embedding table, stored once for two methods, which
the form's load does not read.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import torch
from executorch.exir import ExecutorchProgramManager, to_edge_transform_and_lower
from executorch.exir.backend.compile_spec_schema import CompileSpec
from executorch.exir.backend.partitioner import DelegationSpec
from torch.export import ExportedProgram

from ..compile_specs import PAGED_ATTENTION, parse_compile_specs, with_defaults
from ..partitioner import OpenvinoPartitioner
from ..preprocessing.paged_attention import PagedAttentionRefused
from .decoder_program import modules_in_eval_mode, program_reading_inputs_in_place
from .huggingface import EmbeddingsDecoder, configured_bos_id, configured_eos_ids, require_transformers
from .weight_compression import (
    check_compression,
    compressed_module,
    compression_settings,
)

logger = logging.getLogger(__name__)

#: The model types exported, with their transformers classes (docs/huggingface.md).
SUPPORTED_MODEL_TYPES: Dict[str, str] = {
    "llava": "LlavaForConditionalGeneration",
    "gemma3": "Gemma3ForConditionalGeneration",
}
#: The model types whose image tokens attend to each other in both directions in a
#: prefill (transformers' ``token_type_ids``): their embeddings carry an image flag.
BIDIRECTIONAL_IMAGE_MODELS = frozenset({"gemma3"})

#: The method names MultimodalRunner loads.
VISION_METHOD = "vision_encoder"
EMBEDDING_METHOD = "token_embedding"
DECODER_METHOD = "text_decoder"


def is_vision_language_folder(folder: Union[str, Path]) -> bool:
    """Whether a model folder's config has a vision tower beside its text model."""
    transformers = require_transformers()
    if not (Path(folder) / "config.json").is_file():
        return False
    config = transformers.AutoConfig.from_pretrained(Path(folder))
    return getattr(config, "vision_config", None) is not None and getattr(config, "text_config", None) is not None


def load_vision_language(folder: Union[str, Path], dtype: torch.dtype = torch.float32) -> torch.nn.Module:
    """Builds an image-text-to-text model with transformers from a local folder, downloading nothing."""
    transformers = require_transformers()
    folder = Path(folder)
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(f"{folder}: no config.json; give the folder of a Hugging Face model")
    check_supported_folder(folder)
    return transformers.AutoModelForImageTextToText.from_pretrained(
        folder, local_files_only=True, dtype=dtype, attn_implementation="sdpa"
    ).eval()


class VisionEncoder(torch.nn.Module):
    """The model's image features, projector included, for one image: ``[1, tokens, hidden]``,
    or with ``image_flag`` ``[1, tokens, hidden + 1]``, the last channel 1 (an image's)."""

    def __init__(self, model: torch.nn.Module, image_flag: bool = False) -> None:
        super().__init__()
        self.model = model
        self.image_flag = image_flag

    def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
        output = self.model.get_image_features(pixel_values=pixel_values)
        features = getattr(output, "pooler_output", output)
        if isinstance(features, (list, tuple)):
            features = features[0]
        features = features if features.dim() == 3 else features[None]
        return _flagged(features, 1.0) if self.image_flag else features


class TokenEmbedding(torch.nn.Module):
    """The model's input embeddings of token ids (scaled where the model scales them),
    with ``image_flag`` one channel more, 0 (text's)."""

    def __init__(self, model: torch.nn.Module, image_flag: bool = False) -> None:
        super().__init__()
        self.embedding = model.get_input_embeddings()
        self.image_flag = image_flag

    def forward(self, token_ids: torch.Tensor) -> torch.Tensor:
        embeddings = self.embedding(token_ids)
        return _flagged(embeddings, 0.0) if self.image_flag else embeddings


def _flagged(embeddings: torch.Tensor, flag: float) -> torch.Tensor:
    """`embeddings` [1, n, hidden] with a last channel of `flag`: [1, n, hidden + 1]."""
    return torch.cat([embeddings, torch.full_like(embeddings[..., :1], flag)], dim=-1)


def has_image_flag(model: torch.nn.Module) -> bool:
    """Whether the model's image tokens attend to each other in both directions, so that
    its embeddings carry the image flag channel (:class:`EmbeddingsDecoder`)."""
    return model.config.model_type in BIDIRECTIONAL_IMAGE_MODELS


def check_supported(config: Any) -> None:
    """Raises a ValueError naming the model type of a model's config unless this export
    was made for it (:data:`SUPPORTED_MODEL_TYPES`)."""
    model_type = getattr(config, "model_type", None)
    if model_type not in SUPPORTED_MODEL_TYPES:
        supported = ", ".join(f"{name} ({cls})" for name, cls in sorted(SUPPORTED_MODEL_TYPES.items()))
        classes = getattr(config, "architectures", None)
        named = f"{model_type!r} ({', '.join(classes)})" if classes else repr(model_type)
        raise ValueError(
            f"vision-language model type {named} is not supported; the OpenVINO export supports {supported} "
            "(docs/huggingface.md)"
        )


def check_supported_folder(folder: Union[str, Path]) -> None:
    """:func:`check_supported` for a model folder's config, before its weights are loaded."""
    check_supported(require_transformers().AutoConfig.from_pretrained(Path(folder)))


def image_size(model: torch.nn.Module) -> int:
    """The side of the square images the vision tower takes."""
    size = getattr(model.config.vision_config, "image_size", None)
    if not isinstance(size, int):
        raise ValueError(f"{type(model).__name__}: its vision config gives no image_size")
    return size


def runner_metadata(model: torch.nn.Module, max_seq_len: int, bos_id: int, eos_ids: Sequence[int]) -> Dict[str, Any]:
    """The constant methods MultimodalRunner reads."""
    text = model.config.get_text_config()
    return {
        "get_max_seq_len": max_seq_len,
        "get_max_context_len": max_seq_len,
        "get_vocab_size": text.vocab_size,
        "get_n_layers": text.num_hidden_layers,
        "use_kv_cache": True,
        "enable_dynamic_shape": True,
        "get_bos_id": bos_id,
        "get_eos_ids": list(eos_ids),
    }


def export_vision_language(
    model: Union[str, Path, torch.nn.Module],
    *,
    max_seq_len: int = 512,
    compile_specs: Optional[List[CompileSpec]] = None,
    weight_compression: Union[str, Mapping[str, Any], None] = None,
    dtype: torch.dtype = torch.float32,
    bos_id: Optional[int] = None,
    eos_ids: Optional[Sequence[int]] = None,
) -> ExecutorchProgramManager:
    """Exports a vision-language model for ExecuTorch's MultimodalRunner, lowered to OpenVINO.

    Args:
        model: a local model folder (config.json with a vision config, weights) or a
            loaded ``transformers`` model (``LlavaForConditionalGeneration``...).
        max_seq_len: positions the KV cache holds: the prompt's tokens, the image's
            embeddings and the generated tokens.
        compile_specs: from ``openvino_compile_specs(...)``; ``paged_attention`` applies
            to ``text_decoder`` (refused for models whose attention is not causal over the
            whole cache, :func:`check_paged_attention_fits`),
            ``one_token_model`` is refused.
        weight_compression: as :func:`~executorch_openvino.llm.export.export_llm`'s
            (data-free), applied to every method.
        dtype: the dtype a folder's weights are loaded in.
        bos_id, eos_ids: recorded for the runner; by default the model's generation
            config's (else its config's).

    Example::

        program = export_vision_language("llava-folder", max_seq_len=1024)
        Path("llava.pte").write_bytes(program.buffer)
    """
    if not isinstance(model, torch.nn.Module):
        model = load_vision_language(model, dtype)  # checks the folder's type before loading
    else:
        check_supported(model.config)
    options = parse_compile_specs(compile_specs)
    if options.one_token_model:
        raise ValueError("export_vision_language: one_token_model is for text LLMs")
    if max_seq_len < 2:
        raise ValueError(f"export_vision_language: max_seq_len is {max_seq_len}; the cache needs 2 positions or more")
    decoder = text_decoder(model, max_seq_len)
    if options.paged_attention:
        check_paged_attention_fits(model, decoder)
    compression = check_compression(compression_settings(weight_compression)) if weight_compression else None
    specs = with_defaults(compile_specs)
    bos = configured_bos_id(model) if bos_id is None else int(bos_id)
    eos = configured_eos_ids(model) if eos_ids is None else [int(token) for token in eos_ids]
    with torch.no_grad(), modules_in_eval_mode(model):
        programs = _exported_methods(model, decoder)
        if compression:
            programs = {name: _compressed_again(program, compression) for name, program in programs.items()}
        edge = to_edge_transform_and_lower(
            {name: program for name, (program, _, _) in programs.items()},
            # One partitioner for every method: it sees which weights two of them read.
            partitioner=[_CachePartitioner(specs)],
            constant_methods=runner_metadata(model, max_seq_len, bos, eos),
        )
    return program_reading_inputs_in_place(edge)


def text_decoder(model: torch.nn.Module, max_seq_len: int) -> EmbeddingsDecoder:
    """The module exported as ``text_decoder``: `model`'s text model over a KV cache of
    `max_seq_len` positions, reading the image flag where the model has one."""
    return EmbeddingsDecoder(model, max_seq_len, image_flag=has_image_flag(model))


def check_paged_attention_fits(model: torch.nn.Module, decoder: EmbeddingsDecoder) -> None:
    """Raises PagedAttentionRefused (a ValueError), before the export, when the compile
    spec paged_attention would run `model`'s text decoder (`decoder`) otherwise than
    transformers: OpenVINO's SDPAToPagedAttention makes every attention causal over the
    whole cache (OpenVINO 2026.4.1), which drops a mask that lets an image's tokens see
    each other (the image flag) and the mask of a sliding window, without an error."""
    reasons = []
    if decoder.image_flag:
        reasons.append("its image tokens see each other in both directions (transformers' token_type_ids)")
    if decoder.sliding_window:
        reasons.append(
            f"its sliding-window layers hide the positions before their window (of {decoder.sliding_window})"
        )
    if reasons:
        raise PagedAttentionRefused(
            f"export_vision_language: paged_attention cannot run the text decoder of {model.config.model_type!r}: "
            f"{' and '.join(reasons)}, while OpenVINO's PagedAttention attends causally over the whole cache; "
            "export this model without paged_attention"
        )


class _CachePartitioner(OpenvinoPartitioner):
    """The partitioner of every method, whose delegates keep the compile spec
    paged_attention only in a method that writes a KV cache (``text_decoder``): the
    vision encoder and the token embedding have none to keep in that form, and their
    loads would try it and log that they could not."""

    def _delegation_spec_for(self, exported_program: ExportedProgram) -> DelegationSpec:
        spec = super()._delegation_spec_for(exported_program)
        if exported_program.graph_signature.buffers_to_mutate:
            return spec
        return DelegationSpec(spec.backend_id, [item for item in spec.compile_specs if item.key != PAGED_ATTENTION])


def _exported_methods(model: torch.nn.Module, decoder: EmbeddingsDecoder) -> Dict[str, tuple]:
    """Each method exported with ``strict=True``: (program, example, dynamic shapes)."""
    size = image_size(model)
    flag = decoder.image_flag
    vision, embedding = VisionEncoder(model, flag), TokenEmbedding(model, flag)
    pixels = torch.zeros(1, 3, size, size, dtype=next(model.parameters()).dtype)
    vision(pixels)  # transformers installs its output hooks on the first call, before export
    tokens = torch.ones(1, 4, dtype=torch.long)
    embeddings = embedding(tokens)
    sequence = torch.export.Dim("sequence", min=1, max=decoder.max_seq_len - 1)
    examples = {
        VISION_METHOD: (vision, (pixels,), None),
        EMBEDDING_METHOD: (embedding, (tokens,), ({1: sequence},)),
        DECODER_METHOD: (
            decoder,
            (embeddings, torch.arange(4)),
            ({1: sequence}, {0: sequence}),
        ),
    }
    return {
        name: (torch.export.export(module, example, dynamic_shapes=dims, strict=True), example, dims)
        for name, (module, example, dims) in examples.items()
    }


def _compressed_again(method: tuple, compression: Mapping[str, Any]) -> tuple:
    program, example, dims = method
    module = compressed_module(program, dict(compression))
    return torch.export.export(module, example, dynamic_shapes=dims), example, dims
