"""``python -m executorch_openvino --cmakedir``: the folder for CMAKE_PREFIX_PATH.

Prints the folder that holds the package's CMake config (the convention of
``python -m pybind11 --cmakedir``) and nothing else, without importing torch:

    cmake -S . -B build -DCMAKE_PREFIX_PATH="$(python -m executorch_openvino --cmakedir)"
"""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from . import cmake_prefix_path


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m executorch_openvino", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cmakedir",
        action="store_true",
        help="print the folder to put in CMAKE_PREFIX_PATH for find_package(executorch_openvino)",
    )
    args = parser.parse_args(argv)
    if not args.cmakedir:
        parser.print_help()
        return 2
    print(cmake_prefix_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
