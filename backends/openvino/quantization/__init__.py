"""Quantized models: NNCF's packed 4-bit weights kept whole for OpenVINO (compressed_weights.py)
and torchao's quantization ops decomposed into ops OpenVINO converts (torchao_ops.py)."""
