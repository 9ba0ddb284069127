"""Exporting decoder LLMs for the OpenVINO delegate and ExecuTorch's LLM runner."""

from .decoder_program import export_llm, runner_metadata
from .export import speed_preset
from .huggingface import export_huggingface_llm
from .weight_compression import WEIGHT_COMPRESSION_FORMS

__all__ = [
    "WEIGHT_COMPRESSION_FORMS",
    "export_huggingface_llm",
    "export_llm",
    "runner_metadata",
    "speed_preset",
]
