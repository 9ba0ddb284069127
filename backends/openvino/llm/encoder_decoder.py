"""Exports a Hugging Face encoder-decoder (Whisper, T5, BART, Marian) to one .pte whose
methods run whole in OpenVINO, in the layout of optimum-executorch's seq2seq exports and
ExecuTorch's ASR runner:

- ``encoder(inputs)``: Whisper's log-mel features ``[1, n_mels, frames]``, or the
  token ids ``[1, n]`` of a text encoder (``n`` dynamic), to the encoder's hidden
  states ``[1, positions, d_model]``;
- ``text_decoder(decoder_input_ids [1, 1], encoder_hidden_states, cache_position [1])``
  to the logits ``[1, 1, vocab]`` of that one token;
- constant methods with what a runner needs (:func:`runner_metadata`).

The decoder runs transformers' own modeling code with a cache of ours, as
huggingface.py does for decoder-only models: self-attention keys and values are
written at ``cache_position`` into buffers that lowering turns into a KV cache that
grows inside the delegate (conversion/rewrites/kv_cache_growth.py), masked by rows of
a constant causal table. Cross-attention keys and values are computed from
``encoder_hidden_states`` as transformers computes them; the compile spec
``per_sequence_inputs`` then has OpenVINO compute them at ``cache_position`` 0 only and
keep them as state (conversion/rewrites/per_sequence_values.py). A call at position 0
starts a new sequence: the cache empties and cross-attention reads the encoder's
output of that call.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import torch
from executorch.exir import ExecutorchProgramManager, to_edge_transform_and_lower
from executorch.exir.backend.compile_spec_schema import CompileSpec

from ..compile_specs import PER_SEQUENCE_INPUTS, openvino_compile_specs, parse_compile_specs, with_defaults
from ..partitioner import OpenvinoPartitioner
from .decoder_program import modules_in_eval_mode, program_reading_inputs_in_place
from .huggingface import configured_eos_ids, mask_table, require_transformers
from .weight_compression import compressed_module, compression_settings

logger = logging.getLogger(__name__)

#: The method names ExecuTorch's ASR runner and optimum-executorch's seq2seq exports use.
ENCODER_METHOD = "encoder"
DECODER_METHOD = "text_decoder"
#: The decoder's input holding the encoder's output: fixed over a sequence.
ENCODER_OUTPUT = "encoder_hidden_states"


@dataclass(frozen=True)
class EncoderDecoderShapes:
    """The sizes the two methods are exported for."""

    #: The decoder's positions: prompt tokens plus generated ones.
    max_seq_len: int
    #: The encoder's input: Whisper's frames (fixed), else the most tokens (dynamic).
    encoder_input: Tuple[int, ...]
    #: Whether the encoder's input length varies (text encoders) or is fixed (Whisper).
    dynamic_source: bool
    #: The encoder's output positions (the most, when they vary).
    max_source_positions: int


def is_encoder_decoder_folder(folder: Union[str, Path]) -> bool:
    """Whether a Hugging Face model folder holds an encoder-decoder (its config says so);
    False without a config.json, which the decoder-only export then names."""
    transformers = require_transformers()
    if not (Path(folder) / "config.json").is_file():
        return False
    return bool(getattr(transformers.AutoConfig.from_pretrained(Path(folder)), "is_encoder_decoder", False))


def load_encoder_decoder(folder: Union[str, Path], dtype: torch.dtype = torch.float32) -> torch.nn.Module:
    """Builds an encoder-decoder with transformers from a local folder, downloading nothing."""
    transformers = require_transformers()
    folder = Path(folder)
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(f"{folder}: no config.json; give the folder of a Hugging Face model")
    config = transformers.AutoConfig.from_pretrained(folder)
    speech = type(config) in transformers.AutoModelForSpeechSeq2Seq._model_mapping
    loader = transformers.AutoModelForSpeechSeq2Seq if speech else transformers.AutoModelForSeq2SeqLM
    return loader.from_pretrained(folder, local_files_only=True, dtype=dtype, attn_implementation="sdpa").eval()


class _SelfAttentionLayer:
    """One decoder layer's self-attention cache: keys and values of ``max_seq_len``
    positions, written at the call's position. The tensors are the decoder's buffers,
    looked up on each call (torch.export swaps buffers while it traces)."""

    def __init__(self, step: "DecoderStep", index: int) -> None:
        self._step = step
        self._names = (f"key_cache_{index}", f"value_cache_{index}")

    @property
    def keys(self) -> torch.Tensor:
        return getattr(self._step, self._names[0])

    @property
    def values(self) -> torch.Tensor:
        return getattr(self._step, self._names[1])

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        keys, values = self.keys, self.values
        positions = self._step.positions()
        keys[:, :, positions] = key_states
        values[:, :, positions] = value_states
        return keys, values

    def get_seq_length(self) -> torch.Tensor:
        # The positions before this call's: models that count their positions from the
        # cache (BART's and Whisper's learned ones, T5's relative bias) get them right.
        return self._step.positions()[0]

    def get_mask_sizes(self, query_length: int) -> Tuple[int, int]:
        return self.keys.shape[2], 0

    def get_max_length(self) -> int:
        return self.keys.shape[2]


class _CrossAttentionLayer:
    """One decoder layer's cross-attention cache: hands back the keys and values the
    layer computed from the encoder's output. Lowering keeps them as OpenVINO state
    computed at position 0 (per_sequence_values.py), so the exported graph computes
    them at every call, as transformers' own exportable decoder does."""

    keys = values = None

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        return key_states, value_states

    def get_seq_length(self) -> int:
        return 0

    def get_mask_sizes(self, query_length: int) -> Tuple[int, int]:
        return 0, 0

    def get_max_length(self) -> int:
        return -1


def _cache_layer(behaviour: type) -> type:
    """`behaviour` as a transformers cache layer (CacheLayerMixin, whose abstract methods
    the decoder never calls on these caches)."""
    from transformers import cache_utils

    unused = {
        name: lambda self, *args, **kwargs: None
        for name in getattr(cache_utils.CacheLayerMixin, "__abstractmethods__", ())
        if not hasattr(behaviour, name)
    }
    attributes = {"is_compileable": True, "is_initialized": True, "supports_early_init": False, "is_sliding": False}

    def __init__(self, *args, **kwargs):
        behaviour.__init__(self, *args, **kwargs)

    members = {**unused, **attributes, "__init__": __init__}
    return type(behaviour.__name__, (behaviour, cache_utils.CacheLayerMixin), members)


class EncoderForRunner(torch.nn.Module):
    """The model's encoder, called with its main input alone, returning its hidden states."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.encoder = model.get_encoder()
        self._input_name = model.main_input_name

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.encoder(**{self._input_name: inputs}).last_hidden_state


class DecoderStep(torch.nn.Module):
    """One decoder step as the ASR runner calls it: ``(decoder_input_ids [1, 1],
    encoder_hidden_states, cache_position [1])`` -> logits ``[1, 1, vocab]``.

    The self-attention cache (``key_cache_<i>``, ``value_cache_<i>``) and the causal
    mask table are buffers of this module; the model is shared, not copied.
    """

    def __init__(self, model: torch.nn.Module, max_seq_len: int) -> None:
        super().__init__()
        from transformers import cache_utils

        attention = model.config._attn_implementation
        if attention not in ("sdpa", "eager"):
            raise ValueError(
                f"{type(model).__name__}: attention implementation {attention!r}; load the model with "
                "attn_implementation='sdpa' (or 'eager')"
            )
        self.model = model
        self._positions: Optional[torch.Tensor] = None
        self._additive_mask = attention == "eager"
        self._dtype = next(model.parameters()).dtype
        shapes = _self_attention_shapes(model)
        self_layer, cross_layer = _cache_layer(_SelfAttentionLayer), _cache_layer(_CrossAttentionLayer)
        for index, (heads, head_dim) in enumerate(shapes):
            shape = (1, heads, max_seq_len, head_dim)
            self.register_buffer(f"key_cache_{index}", torch.zeros(shape, dtype=self._dtype), persistent=False)
            self.register_buffer(f"value_cache_{index}", torch.zeros(shape, dtype=self._dtype), persistent=False)
        self.register_buffer("causal_mask", mask_table(max_seq_len, None), persistent=False)
        self.cache = cache_utils.EncoderDecoderCache(
            cache_utils.Cache(layers=[self_layer(self, index) for index in range(len(shapes))]),
            cache_utils.Cache(layers=[cross_layer() for _ in shapes]),
        )

    def positions(self) -> torch.Tensor:
        if self._positions is None:
            raise RuntimeError("DecoderStep: the cache is read outside a call")
        return self._positions

    def forward(
        self, decoder_input_ids: torch.Tensor, encoder_hidden_states: torch.Tensor, cache_position: torch.Tensor
    ) -> torch.Tensor:
        from transformers.modeling_outputs import BaseModelOutput

        mask = self.causal_mask[cache_position][None, None]
        if self._additive_mask:
            mask = torch.where(mask, 0.0, torch.finfo(self._dtype).min).to(self._dtype)
        # Cross-attention computes its keys and values again at each call (lowering keeps them).
        for index in range(len(self.cache.cross_attention_cache.layers)):
            self.cache.is_updated[index] = False
        self._positions = cache_position
        try:
            output = self.model(
                encoder_outputs=BaseModelOutput(last_hidden_state=encoder_hidden_states),
                decoder_input_ids=decoder_input_ids,
                decoder_attention_mask=mask,
                past_key_values=self.cache,
                use_cache=True,
            )
        finally:
            self._positions = None
        return output.logits


def _self_attention_shapes(model: torch.nn.Module) -> List[Tuple[int, int]]:
    """(heads, head size) of each decoder layer's self-attention keys, read off one eager
    decoder step with a cache that records them: every family names them differently."""
    from transformers import cache_utils
    from transformers.modeling_outputs import BaseModelOutput

    seen: Dict[int, Tuple[int, int]] = {}

    class Recorder(cache_utils.DynamicLayer):
        def __init__(self, index: int) -> None:
            super().__init__()
            self._index = index

        def update(self, key_states, value_states, *args, **kwargs):
            seen[self._index] = (key_states.shape[1], key_states.shape[-1])
            return super().update(key_states, value_states, *args, **kwargs)

    layers = _decoder_layer_count(model)
    cache = cache_utils.EncoderDecoderCache(
        cache_utils.Cache(layers=[Recorder(index) for index in range(layers)]),
        cache_utils.DynamicCache(),
    )
    hidden = model.config.get_text_config(decoder=True)
    width = getattr(hidden, "d_model", None) or hidden.hidden_size
    with torch.no_grad():
        model(
            encoder_outputs=BaseModelOutput(last_hidden_state=torch.zeros(1, 1, width, dtype=model.dtype)),
            decoder_input_ids=torch.zeros(1, 1, dtype=torch.long),
            past_key_values=cache,
            use_cache=True,
        )
    if sorted(seen) != list(range(layers)):
        raise ValueError(f"{type(model).__name__}: its decoder layers did not all write their cache")
    return [seen[index] for index in range(layers)]


def _decoder_layer_count(model: torch.nn.Module) -> int:
    config = model.config
    for name in ("decoder_layers", "num_decoder_layers"):
        if isinstance(getattr(config, name, None), int):
            return getattr(config, name)
    return model.config.get_text_config(decoder=True).num_hidden_layers


def decoder_start_id(model: torch.nn.Module) -> int:
    """The token a decoder's sequence starts with: the generation config's, else the config's."""
    for source in (getattr(model, "generation_config", None), model.config):
        value = getattr(source, "decoder_start_token_id", None) if source is not None else None
        if value is not None:
            return int(value)
    raise ValueError(f"{type(model).__name__}: no decoder_start_token_id in its configs; give one")


def export_shapes(
    model: torch.nn.Module, max_seq_len: int, max_source_len: Optional[int] = None
) -> EncoderDecoderShapes:
    """The sizes to export `model` for, checked against what the model was made for."""
    config = model.config
    name = type(model).__name__
    target_positions = getattr(config, "max_target_positions", None)
    if target_positions is None and _has_position_table(model.get_decoder()):
        target_positions = config.max_position_embeddings  # BART's and Marian's, shared by both stacks
    if target_positions is not None and max_seq_len > target_positions:
        raise ValueError(f"{name}: max_seq_len {max_seq_len} passes its decoder's {target_positions} positions")
    if max_seq_len < 2:
        raise ValueError(f"{name}: max_seq_len is {max_seq_len}; the decoder's cache needs 2 positions or more")
    if model.main_input_name == "input_features":  # Whisper: a fixed window of frames
        if max_source_len is not None:
            raise ValueError(f"{name}: its encoder takes a fixed {2 * config.max_source_positions} frames")
        frames = 2 * config.max_source_positions
        return EncoderDecoderShapes(max_seq_len, (1, config.num_mel_bins, frames), False, config.max_source_positions)
    if model.main_input_name != "input_ids":
        raise ValueError(f"{name}: an encoder taking {model.main_input_name!r} is not supported")
    limit = getattr(config, "n_positions", None) or getattr(config, "max_position_embeddings", None) or 512
    tokens = limit if max_source_len is None else max_source_len
    if tokens < 2:
        raise ValueError(f"{name}: max_source_len is {tokens}; the encoder needs room for 2 tokens or more")
    if tokens > limit:
        if _has_position_table(model.get_encoder()):
            # A position past the table reads outside it: no error, other values.
            raise ValueError(f"{name}: max_source_len {max_source_len} passes its encoder's {limit} positions")
        logger.warning("%s: max_source_len %d passes the %d positions it was made for", name, max_source_len, limit)
    return EncoderDecoderShapes(max_seq_len, (1, tokens), True, tokens)


def _has_position_table(stack: torch.nn.Module) -> bool:
    """Whether the encoder or decoder stack reads its positions from a table of fixed
    length (BART's learned, Marian's sinusoidal), unlike T5's relative bias."""
    return getattr(stack, "embed_positions", None) is not None


def runner_metadata(
    model: torch.nn.Module, shapes: EncoderDecoderShapes, start_id: int, eos_ids: Sequence[int]
) -> Dict[str, Any]:
    """The constant methods a runner reads: the names ExecuTorch's LLM runners and
    optimum-executorch's seq2seq exports write."""
    return {
        "get_max_seq_len": shapes.max_seq_len,
        "get_max_context_len": shapes.max_seq_len,
        "get_vocab_size": model.config.get_text_config(decoder=True).vocab_size,
        "get_n_layers": _decoder_layer_count(model),
        "use_kv_cache": True,
        "enable_dynamic_shape": False,
        "get_bos_id": start_id,
        "decoder_start_token_id": start_id,
        "get_eos_ids": list(eos_ids),
        "max_hidden_seq_length": shapes.max_source_positions,
    }


def export_encoder_decoder(
    model: Union[str, Path, torch.nn.Module],
    *,
    max_seq_len: int = 256,
    max_source_len: Optional[int] = None,
    compile_specs: Optional[List[CompileSpec]] = None,
    weight_compression: Union[str, Mapping[str, Any], None] = None,
    dtype: torch.dtype = torch.float32,
    start_id: Optional[int] = None,
    eos_ids: Optional[Sequence[int]] = None,
    generate_etrecord: bool = False,
) -> ExecutorchProgramManager:
    """Exports a Hugging Face encoder-decoder to the ``encoder``/``text_decoder`` layout, lowered to OpenVINO.

    Args:
        model: a local model folder (``config.json``, weights, generation config) or a
            loaded ``transformers`` model (``WhisperForConditionalGeneration``,
            ``T5ForConditionalGeneration``, ``BartForConditionalGeneration``...).
        max_seq_len: decoder positions the cache holds (prompt plus generated tokens).
        max_source_len: the most tokens a text encoder takes (the config's
            ``n_positions`` or ``max_position_embeddings`` by default); Whisper's
            encoder takes its fixed window of frames.
        compile_specs: from ``openvino_compile_specs(...)`` (device, precision, cache).
        weight_compression: as :func:`~executorch_openvino.llm.export.export_llm`'s:
            ``"int4"``, ``"int8"`` or ``nncf.compress_weights`` arguments, applied to
            both methods (the ``quantization`` extra).
        dtype: the dtype a folder's weights are loaded in.
        start_id, eos_ids: recorded for runners; by default the model's generation
            config's (else its config's).
        generate_etrecord: also record an ETRecord (docs/profiling.md).

    Example::

        program = export_encoder_decoder("whisper-tiny", max_seq_len=128)
        Path("whisper.pte").write_bytes(program.buffer)
    """
    if not isinstance(model, torch.nn.Module):
        model = load_encoder_decoder(model, dtype)
    options = parse_compile_specs(compile_specs)
    if options.one_token_model or options.paged_attention:
        raise ValueError(
            "export_encoder_decoder: one_token_model and paged_attention are for decoder-only LLMs; "
            "the text_decoder takes one token a call already"
        )
    shapes = export_shapes(model, max_seq_len, max_source_len)
    compression = _adjusting_groups(compression_settings(weight_compression)) if weight_compression else None
    specs = with_defaults(compile_specs)
    start = decoder_start_id(model) if start_id is None else int(start_id)
    eos = configured_eos_ids(model) if eos_ids is None else [int(token) for token in eos_ids]
    with torch.no_grad(), modules_in_eval_mode(model):
        methods = _exported_methods(model, shapes, start)
        programs = {
            name: _compressed_again(method, compression) if compression else method.program
            for name, method in methods.items()
        }
        per_sequence = openvino_compile_specs(per_sequence_inputs=[ENCODER_OUTPUT])
        specs += [spec for spec in per_sequence if spec.key == PER_SEQUENCE_INPUTS]  # the encoder has no such input
        edge = to_edge_transform_and_lower(
            programs,
            # One partitioner for both methods: it sees which weights both read (T5's
            # embedding), which the program then stores once.
            partitioner=[OpenvinoPartitioner(specs)],
            constant_methods=runner_metadata(model, shapes, start, eos),
            generate_etrecord=generate_etrecord,
        )
    return program_reading_inputs_in_place(edge)


def _adjusting_groups(settings: Dict[str, Any]) -> Dict[str, Any]:
    """NNCF's settings with 4-bit groups made smaller where a layer's channels do not
    divide into them, unless the settings say otherwise: encoder-decoders have small
    layers (T5's relative position bias has one channel per head) that groups of 128
    do not fit, and NNCF refuses the whole model for one such layer by default."""
    if "advanced_parameters" in settings or not str(
        getattr(settings.get("mode"), "value", settings.get("mode"))
    ).startswith("int4"):
        return settings
    from nncf import GroupSizeFallbackMode
    from nncf.quantization.advanced_parameters import AdvancedCompressionParameters

    return {
        **settings,
        "advanced_parameters": AdvancedCompressionParameters(group_size_fallback_mode=GroupSizeFallbackMode.ADJUST),
    }


@dataclass
class _Method:
    """A method exported, with what exports it again (after its weights are compressed)."""

    program: torch.export.ExportedProgram
    example: Tuple[torch.Tensor, ...]
    dynamic_shapes: Any


def _exported_methods(model: torch.nn.Module, shapes: EncoderDecoderShapes, start_id: int) -> Dict[str, _Method]:
    """Both methods exported with ``strict=True``, the encoder's output on an example
    feeding the decoder's example."""
    encoder, decoder = EncoderForRunner(model), DecoderStep(model, shapes.max_seq_len)
    if shapes.dynamic_source:
        source = torch.full((1, min(8, shapes.encoder_input[1])), start_id, dtype=torch.long)
        tokens = torch.export.Dim("source_tokens", min=1, max=shapes.encoder_input[1])
        positions = torch.export.Dim("source_positions", min=1, max=shapes.max_source_positions)
        encoder_dims: Any = ({1: tokens},)
        decoder_dims: Any = (None, {1: positions}, None)
    else:
        source = torch.zeros(shapes.encoder_input, dtype=next(model.parameters()).dtype)
        encoder_dims = decoder_dims = None
    step = (torch.tensor([[start_id]]), encoder(source), torch.tensor([0]))
    return {
        ENCODER_METHOD: _exported(encoder, (source,), encoder_dims),
        DECODER_METHOD: _exported(decoder, step, decoder_dims),
    }


def _exported(module: torch.nn.Module, example: Tuple[torch.Tensor, ...], dynamic_shapes: Any) -> _Method:
    program = torch.export.export(module, example, dynamic_shapes=dynamic_shapes, strict=True)
    return _Method(program, example, dynamic_shapes)


def _compressed_again(method: _Method, compression: Mapping[str, Any]) -> torch.export.ExportedProgram:
    """The method with its weights compressed by NNCF, exported again as before."""
    return torch.export.export(
        compressed_module(method.program, dict(compression)), method.example, dynamic_shapes=method.dynamic_shapes
    )
