"""Exports a Hugging Face decoder LLM (a downloaded model folder or a loaded
``transformers`` model) to a .pte that ExecuTorch's LLM runner drives through OpenVINO.

transformers' own ExecuTorch wrapper (``transformers.integrations.executorch``) keeps
its static cache in buffers written by ``index_copy_`` at positions it counts in a
further buffer (``cumulative_length``) and computes the attention mask by comparing
index ranges. Lowered as it is (transformers 5.23.0), it runs whole in OpenVINO, but
the cache stays whole-length: each decode step writes into and attends over all of it.

So the model is wrapped here with a cache of our own (:class:`HuggingFaceDecoder`)
that has the form of the examples' Llama, which ``kv_cache_growth.py`` rewrites into
a cache that grows by concatenation inside the delegate:

- keys and values are written at ``input_pos`` (one token per call) or at
  ``arange(S) + input_pos[0]`` (a dynamic-length export);
- each attention reads the rows chosen by the positions of a constant mask table:
  causal, and for sliding-window layers also hiding the positions a window drops
  (``transformers.masking_utils``' own mask functions fill the tables, so the
  windows are the model's);
- the positions of the rotary embedding are the same positions.

The model itself runs unchanged: transformers' modeling code computes everything
else, so the results are transformers' own.
"""

from __future__ import annotations

import inspect
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import torch
from executorch.exir import ExecutorchProgramManager
from executorch.exir.backend.compile_spec_schema import CompileSpec

from .decoder_program import export_llm

logger = logging.getLogger(__name__)

#: The extra that installs transformers, named in the error raised without it.
EXTRA = "huggingface"
#: Attention layer types whose caches this wrapper keeps (transformers' names).
FULL, SLIDING = "full_attention", "sliding_attention"


def require_transformers() -> Any:
    """Imports transformers, or raises an ImportError saying which extra installs it."""
    try:
        import transformers
    except ImportError as error:
        raise ImportError(
            f"exporting a Hugging Face model needs transformers: pip install 'executorch-openvino[{EXTRA}]'"
        ) from error
    return transformers


@dataclass
class DecoderSettings:
    """What :func:`export_llm` and the runner's metadata need to know of the decoder."""

    max_seq_len: int
    n_layers: int
    vocab_size: int
    enable_dynamic_shape: bool
    use_kv_cache: bool = True
    sliding_window: Optional[int] = None  # of the sliding-window layers; None: every layer attends in full

    @property
    def max_context_len(self) -> int:
        return self.max_seq_len


# The wrapper gives the model its positions and masks; a model that still asks how much
# the cache holds would compute from a number this cache cannot know at export, so it
# is refused rather than answered wrongly.
_POSITIONS_NOT_TRACKED = (
    "this model asks its cache how many positions it holds, which the OpenVINO export's cache does not "
    "track; its family is not supported (see docs/huggingface.md)"
)


def _cache_of(layers: List["_PositionsLayer"]) -> Any:
    """A transformers Cache of our layers. Asked for its length (OPT, Falcon), it refuses
    with our reason: transformers' own Cache would answer that it holds only linear
    attention layers, as ours are not its CacheLayerMixin."""
    from transformers import cache_utils

    class PositionsCache(cache_utils.Cache):
        def get_seq_length(self, layer_idx: int = 0) -> int:
            raise NotImplementedError(_POSITIONS_NOT_TRACKED)

    return PositionsCache(layers=layers)


class _PositionsLayer:
    """One layer's cache: keys and values of ``max_seq_len`` positions, written where
    the decoder's positions say. Stands in for transformers' cache layers, whose
    interface (``update``, ``get_mask_sizes``...) the modeling code calls.

    The tensors are the decoder's buffers, looked up on each call: torch.export
    swaps a module's buffers for its own tensors while it traces, and a tensor
    held elsewhere would be traced as a constant, its writes lost."""

    is_compileable = True
    is_initialized = True
    supports_early_init = False

    def __init__(self, index: int, sliding: bool, decoder: "HuggingFaceDecoder"):
        self._names = (f"key_cache_{index}", f"value_cache_{index}")
        self.is_sliding = sliding
        self._decoder = decoder

    @property
    def keys(self) -> torch.Tensor:
        return getattr(self._decoder, self._names[0])

    @property
    def values(self) -> torch.Tensor:
        return getattr(self._decoder, self._names[1])

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        keys, values = self.keys, self.values
        self._decoder._write(keys, key_states)
        self._decoder._write(values, value_states)
        return keys, values

    def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        pass

    def get_mask_sizes(self, query_length: int) -> Tuple[int, int]:
        return self.keys.shape[2], 0

    def get_max_length(self) -> int:
        return self.keys.shape[2]

    def get_seq_length(self) -> int:
        raise NotImplementedError(_POSITIONS_NOT_TRACKED)

    def reset(self) -> None:
        self.keys.zero_()
        self.values.zero_()


class HuggingFaceDecoder(torch.nn.Module):
    """A transformers causal LM called as ExecuTorch's LLM runner calls a decoder:
    ``decoder(tokens [1, S], {"input_pos": positions})`` -> logits of the last token.

    With ``dynamic_shape`` the tokens' length varies and ``input_pos`` holds the first
    position; without it each call takes one token at ``input_pos[0]``.
    The cache (``key_cache_<i>``, ``value_cache_<i>``) and the mask tables are buffers
    of this module; the model is shared, not copied.
    """

    def __init__(self, model: torch.nn.Module, max_seq_len: int, dynamic_shape: bool = True) -> None:
        super().__init__()
        require_transformers()
        from transformers import configuration_utils

        config = model.config.get_text_config()
        name = type(model).__name__
        if config._attn_implementation not in ("sdpa", "eager"):
            raise ValueError(
                f"{name}: attention implementation {config._attn_implementation!r}; load the model with "
                "attn_implementation='sdpa' (or 'eager')"
            )
        check_rotary_embedding(name, config, max_seq_len)
        if getattr(config, "use_bidirectional_attention", False):
            raise ValueError(f"{name}: bidirectional attention is not a causal decoder's")
        if getattr(config, "kv_lora_rank", None):
            raise ValueError(
                f"{name}: multi-head latent attention (kv_lora_rank) keeps keys and values of different sizes, "
                "which the export's cache does not; not supported"
            )
        check_experts(name, config, dynamic_shape)
        self.model = model
        self.max_seq_len = max_seq_len
        self.dynamic_shape = dynamic_shape
        self._positions: Optional[torch.Tensor] = None
        layer_types, windows = _layer_types_and_windows(name, config)
        kv_heads, head_dims = _head_shapes(configuration_utils, config)
        kv_heads = kv_heads if isinstance(kv_heads, list) else [kv_heads] * len(layer_types)
        head_dims = head_dims if isinstance(head_dims, list) else [head_dims] * len(layer_types)
        # The first floating-point weights' dtype, as transformers' model.dtype: integer
        # weights (torchao's quantized embedding, optimum-executorch's --qembedding) come first.
        self._dtype = next((p.dtype for p in model.parameters() if p.dtype.is_floating_point), torch.float32)

        layers = []
        for index, (layer_type, heads, head_dim) in enumerate(zip(layer_types, kv_heads, head_dims)):
            shape = (1, heads, max_seq_len, head_dim)
            self.register_buffer(f"key_cache_{index}", torch.zeros(shape, dtype=self._dtype), persistent=False)
            self.register_buffer(f"value_cache_{index}", torch.zeros(shape, dtype=self._dtype), persistent=False)
            layers.append(_PositionsLayer(index, layer_type == SLIDING, self))
        self.cache = _cache_of(layers)
        # One mask table per kind of layer, as transformers passes one mask per kind.
        for kind, window in windows.items():
            self.register_buffer(f"{kind}_mask", mask_table(max_seq_len, window), persistent=False)
        self._kinds = sorted(windows)
        # A window of max_seq_len positions or more hides nothing the cache holds
        # (Mistral 7B v0.1's 4096 in a shorter export): no window, as far as the export goes.
        window = windows.get(SLIDING)
        self.sliding_window = window if window is not None and window < max_seq_len else None
        # sdpa takes a boolean mask; eager attention (Gemma 2's, for its logit
        # soft-capping) adds the mask to the scores: 0 or the dtype's lowest value, as
        # transformers' own eager masks.
        self._additive_mask = config._attn_implementation == "eager"
        parameters = inspect.signature(model.forward).parameters
        self._keeps_last_logits = "logits_to_keep" in parameters
        # transformers before 5.x's last form of the modeling code (5.0.0rc1, optimum-executorch's
        # pin) takes the positions as cache_position too, else asks the cache for its length.
        self._takes_cache_position = "cache_position" in parameters

    def _write(self, cache: torch.Tensor, values: torch.Tensor) -> None:
        """Writes this call's keys or values at its positions, in the form kv_cache_growth.py grows."""
        if self.dynamic_shape:
            cache.index_copy_(2, self._positions, values)
        else:
            cache[:, :, self._positions] = values

    def _rows(self, kind: str, input_pos: torch.Tensor, start: Optional[int], count: int) -> torch.Tensor:
        """The rows of this call's positions in the mask table of `kind`: [S, max_seq_len] booleans."""
        table = getattr(self, f"{kind}_mask")
        return table.narrow(0, start, count) if start is not None else table[input_pos]

    def _widened(self, rows: Dict[str, torch.Tensor], count: int) -> Dict[str, torch.Tensor]:
        """This call's mask rows, for a subclass to let more positions through (here: as they are)."""
        return rows

    def _mask(self, rows: torch.Tensor) -> torch.Tensor:
        """Mask rows as transformers takes a mask: [1, 1, S, max_seq_len]."""
        if self._additive_mask:
            rows = torch.where(rows, 0.0, torch.finfo(self._dtype).min).to(self._dtype)
        return rows[None, None]

    def forward(self, tokens: torch.Tensor, options: Mapping[str, torch.Tensor]) -> torch.Tensor:
        return self._logits({"input_ids": tokens}, tokens.shape[1], options["input_pos"])

    def _logits(self, inputs: Dict[str, torch.Tensor], count: int, input_pos: torch.Tensor) -> torch.Tensor:
        """The logits of the last of `count` positions the model takes as `inputs` (its
        tokens or their embeddings), from ``input_pos[0]`` on (dynamic shape) or at
        ``input_pos`` (one token a call)."""
        start = None
        if self.dynamic_shape:
            start = input_pos[0].item()
            torch._check(start >= 0)
            torch._check(start < self.max_seq_len)
            self._positions = torch.arange(count) + start
        else:
            self._positions = input_pos
        rows = self._widened({kind: self._rows(kind, input_pos, start, count) for kind in self._kinds}, count)
        masks = {kind: self._mask(rows[kind]) for kind in self._kinds}
        attention_mask = masks if len(masks) > 1 else next(iter(masks.values()))
        extra = {"logits_to_keep": 1} if self._keeps_last_logits else {}
        if self._takes_cache_position:
            extra["cache_position"] = self._positions
        try:
            output = self.model(
                **inputs,
                attention_mask=attention_mask,
                position_ids=self._positions[None],
                past_key_values=self.cache,
                use_cache=True,
                **extra,
            )
        finally:
            self._positions = None
        return output.logits[:, -1, :]


class EmbeddingsDecoder(HuggingFaceDecoder):
    """The decoder called as ExecuTorch's MultimodalRunner calls its ``text_decoder``:
    ``decoder(embeddings [1, n, hidden], cache_position [n])`` -> logits of the last position,
    the positions from ``cache_position[0]`` on (a prompt's tokens, an image's embeddings,
    then one token a call).

    With ``image_flag`` the embeddings have one channel more, ``[1, n, hidden + 1]``: its
    last channel is 1 in the embeddings of an image (the vision encoder appends it) and 0
    in those of text. A call whose first position says 1 is one image, whose positions
    then see each other in both directions, as transformers' Gemma 3 lets the image
    tokens of one image do in a prefill (its ``token_type_ids``); every other call is
    causal. The runner embeds each image in a call of its own, so the call is the image.
    """

    def __init__(self, model: torch.nn.Module, max_seq_len: int, image_flag: bool = False) -> None:
        super().__init__(model, max_seq_len, dynamic_shape=True)
        self.image_flag = image_flag
        self._is_image: Optional[torch.Tensor] = None
        if image_flag and FULL not in self._kinds:
            # The causal rows an image's own positions are read from (_widened); the model,
            # all of whose layers slide, is given them too and reads none.
            self.register_buffer(f"{FULL}_mask", mask_table(max_seq_len, None), persistent=False)
            self._kinds = sorted([*self._kinds, FULL])

    def forward(self, embeddings: torch.Tensor, cache_position: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        if self.image_flag:
            self._is_image = embeddings[0, 0, -1] > 0.5
            embeddings = embeddings[..., :-1]
        try:
            return self._logits({"inputs_embeds": embeddings}, embeddings.shape[1], cache_position)
        finally:
            self._is_image = None

    def _widened(self, rows: Dict[str, torch.Tensor], count: int) -> Dict[str, torch.Tensor]:
        """For an image's call, each kind's rows also let through the call's later positions.

        transformers' image masks (``create_masks_for_vision_model``) are causal OR within the
        image for full-attention layers, and that AND the window for sliding ones; an image's
        later positions are always inside the window, so both are this call's rows OR (at or
        before the call's last position AND after the query). Written from the causal rows of
        this call's positions and the last of them, so that the KV-cache rewrite
        (conversion/rewrites/kv_cache_growth.py) still sees rows that hide every position
        past the call's own.
        """
        if self._is_image is None:
            return rows
        causal = rows[FULL]
        # [1, L] (key <= the call's last position) and [count, L] (key > query)
        later_in_call = causal.narrow(0, count - 1, 1) & ~causal
        return {
            kind: torch.where(self._is_image, kind_rows | later_in_call, kind_rows) for kind, kind_rows in rows.items()
        }


def _layer_types_and_windows(name: str, config: Any) -> Tuple[List[str], Dict[str, Optional[int]]]:
    """Each layer's type, and the sliding window of each type (None: full attention)."""
    from transformers import cache_utils

    if hasattr(cache_utils, "get_layer_types_and_kwargs"):
        layer_types, layer_kwargs = cache_utils.get_layer_types_and_kwargs(config)
    else:
        layer_types, layer_kwargs = _layer_types_as_static_cache_infers(config)
    unsupported = sorted(set(layer_types) - {FULL, SLIDING})
    if unsupported:
        raise ValueError(
            f"{name}: layers of type {', '.join(unsupported)} are not supported; "
            f"the OpenVINO export keeps caches for {FULL} and {SLIDING} layers"
        )
    windows: Dict[str, set] = {}
    for kind, kwargs in zip(layer_types, layer_kwargs):
        windows.setdefault(kind, set()).add(kwargs.get("sliding_window") if kind == SLIDING else None)
    if len(windows.get(SLIDING, ())) > 1:
        raise ValueError(f"{name}: sliding windows of several sizes {sorted(windows[SLIDING])}; one is supported")
    return layer_types, {kind: next(iter(sizes)) for kind, sizes in windows.items()}


def _layer_types_as_static_cache_infers(config: Any) -> Tuple[List[str], List[Dict[str, Any]]]:
    """Each layer's type and cache arguments as the ``StaticCache`` of transformers releases
    without ``cache_utils.get_layer_types_and_kwargs`` infers them (5.0.0rc1, which
    optimum-executorch 1.1.0 pins: llm/optimum_executorch.py)."""
    layer_types = getattr(config, "layer_types", None)
    if layer_types is None:
        if getattr(config, "sliding_window", None) is not None:
            layer_types = [SLIDING] * config.num_hidden_layers
        elif getattr(config, "attention_chunk_size", None) is not None:
            layer_types = ["chunked_attention"] * config.num_hidden_layers
        else:
            layer_types = [FULL] * config.num_hidden_layers
    layer_kwargs = [{"sliding_window": config.sliding_window} if kind == SLIDING else {} for kind in layer_types]
    return list(layer_types), layer_kwargs


def _head_shapes(configuration_utils: Any, config: Any) -> Tuple[Any, Any]:
    """(KV heads, head size), each one int or one per layer: transformers' ``get_head_shapes``,
    or for releases without it (5.0.0rc1) the config's uniform ones, as their caches read them."""
    if hasattr(configuration_utils, "get_head_shapes"):
        return configuration_utils.get_head_shapes(config)
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    return getattr(config, "num_key_value_heads", None) or config.num_attention_heads, head_dim


def mask_table(length: int, window: Optional[int]) -> torch.Tensor:
    """[length, length] booleans, True where query position i attends to key position j:
    transformers' causal mask function, and its sliding-window overlay for a window."""
    from transformers import masking_utils

    allowed = masking_utils.causal_mask_function
    if window is not None:
        allowed = masking_utils.and_masks(allowed, masking_utils.sliding_window_overlay(window))
    positions = torch.arange(length)
    return allowed(0, 0, positions[:, None], positions[None, :])


def load_model(folder: Union[str, Path], dtype: torch.dtype = torch.float32) -> torch.nn.Module:
    """Builds a causal LM with transformers from a local model folder, downloading nothing."""
    require_transformers()
    from transformers import AutoModelForCausalLM

    folder = Path(folder)
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(f"{folder}: no config.json; give the folder of a Hugging Face model")
    return AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, dtype=dtype).eval()


def configured_bos_id(model: torch.nn.Module) -> int:
    """The bos id of the model's generation config, else of its config (0 with a warning if neither has one)."""
    bos = _first_set(_token_id_sources(model), "bos_token_id")
    if bos is None:
        logger.warning("%s: no bos_token_id in its configs; recording 0", type(model).__name__)
        return 0
    return int(bos)


def configured_eos_ids(model: torch.nn.Module) -> List[int]:
    """The eos ids of the model's generation config, else of its config (none, with a warning)."""
    eos = _first_set(_token_id_sources(model), "eos_token_id")
    eos_ids = [] if eos is None else ([eos] if isinstance(eos, int) else list(eos))
    if not eos_ids:
        logger.warning("%s: no eos_token_id in its configs; generation stops at max_new_tokens", type(model).__name__)
    return [int(token) for token in eos_ids]


def _token_id_sources(model: torch.nn.Module) -> List[Any]:
    return [getattr(model, "generation_config", None), model.config.get_text_config(), model.config]


def _first_set(sources: Sequence[Any], name: str) -> Any:
    for source in sources:
        value = getattr(source, name, None) if source is not None else None
        if value is not None:
            return value
    return None


def _rope_settings(config: Any) -> List[Dict[str, Any]]:
    """The config's rotary embedding settings: one dict, or one per kind of layer."""
    parameters = getattr(config, "rope_parameters", None) or getattr(config, "rope_scaling", None) or {}
    if not isinstance(parameters, dict):
        return []
    if "rope_type" in parameters:
        return [parameters]
    return [value for value in parameters.values() if isinstance(value, dict)]


def check_rotary_embedding(name: str, config: Any, max_seq_len: int) -> None:
    """Refuses rotary embeddings whose frequencies depend on the sequence's length.

    A KV cache keeps keys rotated at the frequencies of the call that wrote them, and
    transformers computes again the whole sequence when they change: "longrope" (Phi-3's
    128k models) changes them past ``original_max_position_embeddings``, and "dynamic"
    (dynamic NTK) at every length past the trained one, which torch.export cannot trace.
    """
    for settings in _rope_settings(config):
        kind = settings.get("rope_type")
        if kind == "dynamic":
            raise ValueError(
                f"{name}: rope_type 'dynamic' (dynamic NTK) rescales its frequencies with the sequence's length, "
                "which a KV cache exported once cannot follow; not supported"
            )
        if kind == "longrope":
            short = settings.get("original_max_position_embeddings") or getattr(
                config, "original_max_position_embeddings", None
            )
            if short is not None and max_seq_len > short:
                raise ValueError(
                    f"{name}: max_seq_len {max_seq_len} passes original_max_position_embeddings {short}, where "
                    "rope_type 'longrope' switches to its long factors for every position (transformers then "
                    f"computes the whole sequence again, which a KV cache cannot); export with a max_seq_len of "
                    f"{short} or less"
                )


def check_experts(name: str, config: Any, dynamic_shape: bool) -> None:
    """Refuses mixture-of-experts layers in the forms that do not export or do not run.

    transformers' default experts (``grouped_mm``) fail ExecuTorch's verifier, and its
    ``eager`` experts torch.export; ``batched_mm`` exports, but ExecuTorch 1.5.1 bounds a
    dynamic prompt length to the example's (2 tokens), so only one token per call runs.
    """
    experts = max((getattr(config, key, None) or 0 for key in _EXPERT_COUNTS), default=0)
    # Doge's config counts 16384 experts by default and builds them only with is_moe=True.
    if experts <= 1 or getattr(config, "is_moe", True) is False:
        return
    implementation = getattr(config, "_experts_implementation", None)
    if dynamic_shape or implementation != "batched_mm":
        raise ValueError(
            f"{name}: mixture-of-experts layers ({experts} experts, experts_implementation={implementation!r}) "
            "export only with experts_implementation='batched_mm', one token per call: load the model with "
            "experts_implementation='batched_mm' and export with dynamic_shape=False"
        )


# Config fields that count a mixture-of-experts layer's experts (Mixtral, Qwen2-MoE, DeepSeek).
_EXPERT_COUNTS = ("num_local_experts", "num_experts", "n_routed_experts")


def check_position_table(model: torch.nn.Module, max_seq_len: int) -> None:
    """Refuses a max_seq_len past a learned table of positions (GPT-2's ``wpe``): its rows
    end there, and what a model computes past them is no position at all."""
    for name, module in model.named_modules():
        leaf = name.rsplit(".", 1)[-1]
        if isinstance(module, torch.nn.Embedding) and leaf in _POSITION_TABLES and module.num_embeddings < max_seq_len:
            raise ValueError(
                f"{type(model).__name__}: max_seq_len {max_seq_len} passes the {module.num_embeddings} rows of its "
                f"table of learned positions ({name}); export with a max_seq_len of {module.num_embeddings} or less"
            )


# Names transformers' modeling code gives a table of learned absolute positions.
_POSITION_TABLES = frozenset({"wpe", "embed_positions", "position_embeddings"})

# How many positions the check below runs: a prompt, then one token, as a generation does.
_CHECKED_PROMPT = 5


def check_decoder_computes_as_model(decoder: "HuggingFaceDecoder") -> None:
    """Refuses a model that computes other logits under the export's cache than alone.

    The export gives the model its positions, masks and a cache of ``max_seq_len`` rows.
    Modeling code that reads the positions elsewhere (GPT-Neo's local attention masks by
    the number of keys it is handed) computes otherwise, silently: so a prompt and one
    more token run through the wrapper and through the model alone before export, and a
    difference past the dtype's rounding is refused. The cache is emptied after.
    """
    model = decoder.model
    vocab = model.config.get_text_config().vocab_size
    count = min(_CHECKED_PROMPT, decoder.max_seq_len - 1)
    tokens = (torch.arange(count + 1) * 7 + 3).remainder(vocab)[None]
    with torch.no_grad():
        expected = model(tokens).logits[0, -2:].float()
        if decoder.dynamic_shape:
            calls = [(tokens[:, :count], 0), (tokens[:, count:], count)]
        else:
            calls = [(tokens[:, position : position + 1], position) for position in range(count + 1)]
        logits = [decoder(part, {"input_pos": torch.tensor([start])})[0].float() for part, start in calls]
        for buffer_name, buffer in decoder.named_buffers():
            if buffer_name.startswith(("key_cache_", "value_cache_")):
                buffer.zero_()
    got = torch.stack(logits[-2:])
    scale = expected.abs().max().item()
    difference = (got - expected).abs().max().item()
    # f32: the two attention paths' rounding, under 2e-6 of the largest logit in 40 families.
    # 16-bit floats round each product, more with depth: 0.08 in a bfloat16 Llama of 48 layers
    # (random weights); GPT-Neo's masking gave 0.5.
    tolerance = (1e-3 if decoder._dtype == torch.float32 else 0.25) * max(scale, 1.0)
    if not difference <= tolerance:
        raise ValueError(
            f"{type(model).__name__}: under the export's cache its logits differ from its own by {difference:.3g} "
            f"(largest logit {scale:.3g}); its modeling code reads positions or masks from something the export "
            "does not give it, and its family is not supported (see docs/huggingface.md)"
        )


def export_huggingface_llm(
    model: Union[str, Path, torch.nn.Module],
    *,
    max_seq_len: int = 256,
    dynamic_shape: bool = True,
    compile_specs: Optional[List[CompileSpec]] = None,
    weight_compression: Union[str, Mapping[str, Any], None] = None,
    dtype: torch.dtype = torch.float32,
    bos_id: Optional[int] = None,
    eos_ids: Optional[Sequence[int]] = None,
    generate_etrecord: bool = False,
) -> ExecutorchProgramManager:
    """Exports a Hugging Face causal LM for ExecuTorch's LLM runner, lowered to OpenVINO.

    Args:
        model: a local model folder (``config.json``, weights, generation config) or a
            loaded ``transformers`` causal LM (``AutoModelForCausalLM``).
        max_seq_len: positions the KV cache holds (prompt plus generated tokens).
        dynamic_shape: prompts in one call (True) or token by token.
        compile_specs: from ``openvino_compile_specs(...)`` (device, precision, cache).
        weight_compression: as :func:`export_llm`'s: ``"int4"``, ``"int8"`` or
            ``nncf.compress_weights`` arguments (the ``quantization`` extra).
        dtype: the dtype a folder's weights are loaded in.
        bos_id, eos_ids: recorded for the runner; by default the model's generation
            config's (else its config's).
        generate_etrecord: as :func:`export_llm`'s (docs/profiling.md).

    Example::

        program = export_huggingface_llm("SmolLM2-135M", max_seq_len=512)
        Path("smollm2.pte").write_bytes(program.buffer)
    """
    if max_seq_len < 2:
        raise ValueError(f"export_huggingface_llm: max_seq_len is {max_seq_len}; the cache needs 2 positions or more")
    if not isinstance(model, torch.nn.Module):
        model = load_model(model, dtype)
    config = model.config.get_text_config()
    trained = getattr(config, "max_position_embeddings", None)
    if trained is not None and max_seq_len > trained:
        check_position_table(model, max_seq_len)
        logger.warning(
            "%s: max_seq_len %d passes the %d positions it was made for", type(model).__name__, max_seq_len, trained
        )
    decoder = HuggingFaceDecoder(model, max_seq_len, dynamic_shape)
    check_decoder_computes_as_model(decoder)
    settings = DecoderSettings(
        max_seq_len=max_seq_len,
        n_layers=config.num_hidden_layers,
        vocab_size=config.vocab_size,
        enable_dynamic_shape=dynamic_shape,
        sliding_window=decoder.sliding_window,
    )
    return export_llm(
        decoder,
        settings,
        compile_specs=compile_specs,
        bos_id=configured_bos_id(model) if bos_id is None else bos_id,
        eos_ids=configured_eos_ids(model) if eos_ids is None else list(eos_ids),
        weight_compression=weight_compression,
        generate_etrecord=generate_etrecord,
    )
