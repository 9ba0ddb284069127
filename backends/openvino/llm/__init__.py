"""Exporting decoder LLMs for the OpenVINO delegate and ExecuTorch's LLM runner."""

from .export import export_llm, runner_metadata
from .huggingface import export_huggingface_llm

__all__ = ["export_huggingface_llm", "export_llm", "runner_metadata"]
