"""The sources keep the checked-in style: ruff (pyproject.toml) for Python, clang-format (.clang-format) for C++.

Fix a failure with `ruff check --fix . && ruff format .` and
`clang-format -i $(git ls-files '*.cpp' '*.h')`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[4]


def tool(name: str) -> str:
    path = Path(sys.executable).parent / name
    if not path.exists():
        pytest.skip(f"{name} is not installed in this environment (pip install '.[test]')")
    if not (REPO_ROOT / ".git").exists():
        pytest.skip("the style is checked on a git checkout of the source tree")
    return str(path)


def run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)


def test_python_passes_ruff_check():
    result = run(tool("ruff"), "check", ".")
    assert result.returncode == 0, result.stdout[-4000:]


def test_python_is_ruff_formatted():
    result = run(tool("ruff"), "format", "--check", ".")
    assert result.returncode == 0, result.stdout[-4000:]


def test_cpp_is_clang_formatted():
    clang_format = tool("clang-format")
    files = run("git", "ls-files", "*.cpp", "*.h").stdout.split()
    assert files, "git lists no C++ files"
    result = run(clang_format, "--dry-run", "--Werror", *files)
    assert result.returncode == 0, result.stderr[-4000:]
