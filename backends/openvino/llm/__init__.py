"""Exporting decoder LLMs for the OpenVINO delegate and ExecuTorch's LLM runner."""

from .export import (
    SPEED_PRESET,
    WEIGHT_COMPRESSION_FORMS,
    compile_specs_for_compressed_weights,
    export_llm,
    runner_metadata,
)
from .huggingface import export_huggingface_llm

__all__ = [
    "SPEED_PRESET",
    "WEIGHT_COMPRESSION_FORMS",
    "compile_specs_for_compressed_weights",
    "export_huggingface_llm",
    "export_llm",
    "runner_metadata",
]
