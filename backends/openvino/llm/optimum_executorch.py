"""The ``openvino`` recipe of optimum-executorch: ``--recipe openvino`` writes the .pte
that ``python -m executorch_openvino.llm.export --hf DIR`` writes, which ExecuTorch's
LLM runner (``TextLLMRunner``) generates with, each op in OpenVINO and the KV cache in
OpenVINO's PagedAttention form where it applies (else OpenVINO state that grows by
concatenation), as the command's default.

Importing this module registers the recipe in optimum-executorch's registry
(``optimum.exporters.executorch.recipe_registry``). optimum-executorch 1.1.0 has no
hook that imports another package's recipe (no entry point: ``discover_recipes``
imports the modules of its own ``recipes`` folder only). The plain ``optimum-cli``
finds it where the add-on ``integrations/optimum-executorch`` (executorch-openvino-optimum)
is installed: its module in optimum-cli's plug-in namespace adds an entry that imports
this module when the recipe is called. Without the add-on, this module's command
registers the recipe, then runs optimum-cli with the same arguments::

    python -m executorch_openvino.llm.optimum_executorch export executorch \\
        --model DIR --task text-generation --recipe openvino --output_dir OUT \\
        [--max_seq_len 1024] [--disable_dynamic_shapes] [--dtype bfloat16]

It writes ``OUT/model.pte``. From Python, import this module before calling
``optimum.exporters.executorch.main_export(..., recipe="openvino")``; there
``recipe_kwargs={"compile_specs": openvino_compile_specs(...), "weight_compression":
"int4"}`` reach the recipe (optimum-cli passes no recipe options).

The recipe takes the model optimum's ``text-generation`` task loaded (its
``CausalLMExportableModule``) and exports that model with
:func:`~executorch_openvino.llm.huggingface.export_huggingface_llm`, not the graph of
optimum's ``export()``: that graph is transformers' ``TorchExportableModuleForDecoderOnlyLM``,
whose whole-length cache OpenVINO keeps as state but cannot grow (see
``huggingface.py``), its inputs ``input_ids`` and ``cache_position``. So the cache
length is optimum's ``--max_seq_len`` (optimum's default 2048), ``--disable_dynamic_shapes``
exports one token per call, and ``--dtype`` is the weights' dtype; optimum's
``--use_custom_sdpa`` and ``--use_custom_kv_cache`` (ExecuTorch's own CPU ops for
XNNPACK) are ignored with a warning: attention is one OpenVINO op and the cache is
OpenVINO state without them. ``--qlinear`` quantizes the model with torchao before the
recipe receives it; the delegate decomposes torchao's ops and OpenVINO gets the integer
weights (tests/quantization/test_torchao_quantization.py). docs/huggingface.md says what else works.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, Dict, List, Optional, Sequence

from ..compile_specs import openvino_compile_specs
from .export import paged_where_it_applies

try:
    from optimum.exporters.executorch.recipe_registry import recipe_registry, register_recipe
except ImportError as error:  # optimum-executorch pins transformers==5.0.0rc1: a venv of its own
    raise ImportError(
        "the 'openvino' recipe plugs into optimum-executorch, which is not installed: "
        "pip install optimum-executorch==1.1.0 (it pins transformers==5.0.0rc1, so in a venv of its own: "
        "scripts/optimum_executorch_env.sh)"
    ) from error

logger = logging.getLogger(__name__)

#: The name ``--recipe`` takes (the add-on's module repeats it, importing nothing of ours).
RECIPE = "openvino"


@register_recipe(RECIPE)
def export_to_executorch_with_openvino(
    model: Any,
    *,
    compile_specs: Optional[List[Any]] = None,
    weight_compression: Any = None,
    **options: Any,
) -> Dict[str, Any]:
    """optimum-executorch's recipe interface: the task's exportable module in, ``{name:
    program}`` out; optimum writes ``<output_dir>/model.pte``.

    Args:
        model: what optimum's ``text-generation`` task made (``CausalLMExportableModule``).
        compile_specs: from ``openvino_compile_specs(...)`` (device, precision, cache), taken
            as given; without them, the export command's default: ``paged_attention``
            where the model allows it.
        weight_compression: as :func:`export_huggingface_llm`'s (``"int4"``, ``"int8"``...;
            the ``quantization`` extra, NNCF).
    """
    from optimum.exporters.executorch.integrations import CausalLMExportableModule

    from .huggingface import configured_bos_id, configured_eos_ids, export_huggingface_llm

    if not isinstance(model, CausalLMExportableModule):
        raise ValueError(
            f"the openvino recipe exports decoder-only LLMs (task text-generation), not a {type(model).__name__}; "
            "for an encoder-decoder (Whisper, T5) or a vision-language folder use "
            "python -m executorch_openvino.llm.export --hf DIR --output model.pte (docs/huggingface.md)"
        )
    if options:
        raise TypeError(f"the openvino recipe takes compile_specs and weight_compression, not {sorted(options)}")
    eager = model.model
    if model.use_custom_sdpa or model.use_custom_kv_cache:
        logger.warning(
            "openvino recipe: --use_custom_sdpa and --use_custom_kv_cache select ExecuTorch's CPU ops for XNNPACK; "
            "ignored: attention runs as one OpenVINO op and the KV cache is OpenVINO state without them"
        )
        if eager.config._attn_implementation != "sdpa":
            eager.set_attn_implementation("sdpa")
    generation_config = _folder_generation_config(eager)
    sources = [generation_config] if generation_config is not None else []

    def export(specs: Optional[List[Any]]) -> Any:
        return export_huggingface_llm(
            eager,
            max_seq_len=model.metadata["get_max_seq_len"],
            dynamic_shape=not model.disable_dynamic_shapes,
            compile_specs=specs,
            weight_compression=weight_compression,
            bos_id=_first_id(sources, "bos_token_id", lambda: configured_bos_id(eager)),
            eos_ids=_eos_ids(sources, lambda: configured_eos_ids(eager)),
        )

    if compile_specs is not None:
        return {"model": export(compile_specs)}
    # The export command's default: the KV cache in PagedAttention form where it applies.
    paged_specs = openvino_compile_specs(paged_attention=True)
    return {"model": paged_where_it_applies(lambda paged: export(paged_specs if paged else None))}


def _folder_generation_config(eager: Any) -> Any:
    """The generation config of the model's folder. optimum's task loads the model with a
    generation config of its own (cache settings only), so the folder's bos and eos ids
    are read again from where the model came from, downloading nothing."""
    from transformers import GenerationConfig

    try:
        return GenerationConfig.from_pretrained(eager.name_or_path, local_files_only=True)
    except (OSError, ValueError):
        return None


def _first_id(sources: Sequence[Any], name: str, fallback: Any) -> int:
    for source in sources:
        value = getattr(source, name, None)
        if value is not None:
            return int(value)
    return fallback()


def _eos_ids(sources: Sequence[Any], fallback: Any) -> List[int]:
    for source in sources:
        value = getattr(source, "eos_token_id", None)
        if value is not None:
            return [int(token) for token in ([value] if isinstance(value, int) else value)]
    return fallback()


def main(argv: Optional[Sequence[str]] = None) -> None:
    """optimum-cli with the ``openvino`` recipe registered (this module's import did it)."""
    from optimum.commands.optimum_cli import main as optimum_cli

    assert RECIPE in recipe_registry
    logging.basicConfig(level=logging.INFO)
    saved = sys.argv
    sys.argv = ["optimum-cli", *(sys.argv[1:] if argv is None else argv)]
    try:
        optimum_cli()
    finally:
        sys.argv = saved


if __name__ == "__main__":
    main()
