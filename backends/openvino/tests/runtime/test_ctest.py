"""The C++ tests are registered with CTest, so `ctest --test-dir <build>` runs them without pytest.

CI runs each of them through its own pytest wrapper (test_cpp_*.py, test_blob_corpus.py);
here the quick ones run once more through ctest, to keep the registration working.
The load-options test is only listed: through ctest it first lowers six programs (25 s).
"""

from __future__ import annotations

import subprocess

from cpp_build import build_tool, cpp_programs

REGISTERED = ("tensor_binding", "crc32", "blob_corpus", "lower_programs", "load_options")


def ctest(*args: str) -> subprocess.CompletedProcess:
    build_dir = cpp_programs().build_dir
    return subprocess.run(
        [build_tool("ctest"), "--test-dir", str(build_dir), *args], capture_output=True, text=True, timeout=300
    )


def test_ctest_lists_every_cpp_test():
    listed = ctest("-N").stdout
    for name in REGISTERED:
        assert f": {name}\n" in listed, f"ctest does not list {name}:\n{listed}"


def test_ctest_runs_the_quick_cpp_tests():
    result = ctest("-R", "^(tensor_binding|crc32|blob_corpus)$", "--output-on-failure")
    assert result.returncode == 0, result.stdout[-4000:]
    assert "100% tests passed out of 3" in result.stdout
