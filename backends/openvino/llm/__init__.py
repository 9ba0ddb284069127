"""Exporting decoder LLMs for the OpenVINO delegate and ExecuTorch's LLM runner."""

from .export import export_llm, runner_metadata

__all__ = ["export_llm", "runner_metadata"]
