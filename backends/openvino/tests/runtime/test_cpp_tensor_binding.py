"""The C++ zero-copy test of tensor_binding (tests/cpp/tensor_binding_test.cpp), run by pytest.

Static inputs and outputs are bound to the ExecuTorch tensors' own memory: OpenVINO
reads and writes the caller's buffer addresses; a second call with the same tensors
rebinds nothing; other memory is rebound; a dynamic output is copied back resized.
"""

import subprocess

from cpp_build import cpp_programs


def test_static_tensors_are_bound_without_a_copy_and_not_rebound():
    programs = cpp_programs()
    result = subprocess.run([str(programs.tensor_binding_test)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    assert "all checks passed" in result.stdout
