"""Exporting decoder LLMs for the OpenVINO delegate and ExecuTorch's LLM runner."""

from .export import WEIGHT_COMPRESSION_FORMS, compile_specs_for_compressed_weights, export_llm, runner_metadata
from .huggingface import export_huggingface_llm

__all__ = [
    "WEIGHT_COMPRESSION_FORMS",
    "compile_specs_for_compressed_weights",
    "export_huggingface_llm",
    "export_llm",
    "runner_metadata",
]
