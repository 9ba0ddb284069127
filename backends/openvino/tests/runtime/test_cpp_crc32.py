"""The blob checksum in C++ (runtime/crc32.cpp, tests/cpp/crc32_test.cpp), run by pytest.

The runtime checks every blob's CRC-32 at load with carry-less multiplication where
the CPU has it, and with tables elsewhere. Both must give zlib's value, which
preprocess writes: a wrong checksum would refuse every good program.
"""

import random
import subprocess
import zlib

import pytest
from cpp_build import cpp_programs

SKIP_EXIT_CODE = 77


def test_folded_crc32_matches_the_tables_for_every_length_and_alignment():
    result = subprocess.run([str(cpp_programs().crc32_test)], capture_output=True, text=True, timeout=300)
    if result.returncode == SKIP_EXIT_CODE:
        pytest.skip(result.stdout.strip())
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    assert "all checks passed" in result.stdout


@pytest.mark.parametrize("size", [0, 9, 64, 1000, (1 << 20) + 13])
def test_runtime_crc32_equals_zlib(tmp_path, size):
    data = random.Random(size).randbytes(size)
    path = tmp_path / "data.bin"
    path.write_bytes(data)
    result = subprocess.run([str(cpp_programs().crc32_test), str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    printed = dict(line.split() for line in result.stdout.splitlines())
    assert printed.pop("portable") == f"{zlib.crc32(data):08x}"
    for implementation, value in printed.items():
        assert value == f"{zlib.crc32(data):08x}", implementation
