"""Quantized models: NNCF's packed 4-bit weights kept whole for OpenVINO (compressed_weights.py).
torchao's quantization ops are decomposed before ExecuTorch's decomposition (pre_decomposition/torchao_ops.py)."""
