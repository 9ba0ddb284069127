"""What preprocess.py checks and records on a partition's OpenVINO model, beside converting it.

paged_attention.py: lowering's check of the compile spec ``paged_attention`` (OpenVINO's
rewrite tried on a copy). debug_handle_map.py: the map from OpenVINO's layers to the edge
operators, which ExecuTorch stores for its devtools.
"""
