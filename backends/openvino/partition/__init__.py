"""What ``OpenvinoPartitioner`` (partitioner.py) decides, one rule per module.

Before ExecuTorch decomposes the program (after pre_decomposition/'s transforms):
the buffers and weights each method reads (shared_buffers.py, shared_weights.py),
and, for ``ops_to_not_decompose``, the ops kept whole for OpenVINO (kept_whole.py,
sort_family.py). Then, node by node: the op and its dtypes
(op_support.py), its arguments (argument_rules.py), where copies run
(copy_placement.py), which symbolic sizes may cross a boundary
(symint_boundary.py), and a trial conversion of each proposed partition
(trial_conversion.py), repeated until nothing moves. Last, the buffers a partition
owns (buffer_ownership.py), except those other methods use (shared_buffers.py).
"""
