"""Stages import each other only where the contributors' README says they do.

Each stage of the pipeline is a folder of the package (backends/openvino/README.md,
"Imports between stages"). A module of one stage may import a module of another stage
only when ``ALLOWED`` names that pair, with the reason; it may never import the modules
that run the stages (partitioner.py, preprocess.py). What several stages read lives
outside the stages (edge_graph/, workarounds.py, compile_specs.py, backend_id.py), and
any module may import it. The imports are read from the installed package's source
with ``ast``, those inside functions included.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import executorch_openvino

PACKAGE = "executorch_openvino"
PACKAGE_DIR = Path(executorch_openvino.__file__).resolve().parent

#: The stage folders, in pipeline order.
STAGES = ("pre_decomposition", "partition", "passes", "conversion", "preprocessing", "serialization")
#: The modules that run the stages: no stage imports them.
RUNNERS = ("partitioner", "preprocess")

#: (importing stage, module of another stage it imports) -> why. The README lists the same pairs.
ALLOWED: Dict[Tuple[str, str], str] = {
    ("pre_decomposition", "partition.kept_whole"): "the views after the attention op the partitioner keeps whole",
    ("pre_decomposition", "partition.sort_family"): "twins exactly the nodes of several results the partitioner takes",
    ("partition", "conversion.frontend"): "the trial conversion converts each proposed partition as preprocess will",
    ("partition", "conversion.translators"): "an op our translators convert is supported",
    ("conversion", "passes"): "the conversion runs the graph passes (PASSES) before the frontend",
}


def module_name(path: Path) -> str:
    """The dotted name of a module of the package, relative to it ("partition.op_support")."""
    parts = list(path.relative_to(PACKAGE_DIR).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_module(name: str) -> bool:
    """Whether `name` (relative to the package) is a module or package of it."""
    path = PACKAGE_DIR.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imported_modules(path: Path) -> Iterator[str]:
    """The modules of the package that the module at `path` imports, relative to the package."""
    name = module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE + "."):
                    yield alias.name[len(PACKAGE) + 1 :]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.startswith(PACKAGE + "."):
                target = node.module[len(PACKAGE) + 1 :]
            else:
                continue
            submodules = [f"{target}.{alias.name}" if target else alias.name for alias in node.names]
            found = [submodule for submodule in submodules if is_module(submodule)]
            # "from . import scans" imports the module scans; "from .nodes import op_name", the module nodes.
            yield from found or ([target] if target else [])


def stage_of(name: str) -> str:
    first = name.split(".")[0]
    return first if first in STAGES else ""


def package_modules() -> List[Path]:
    return sorted(path for path in PACKAGE_DIR.rglob("*.py") if "tests" not in path.relative_to(PACKAGE_DIR).parts)


def imports_between_stages() -> Dict[Tuple[str, str], Set[str]]:
    """(importing stage, imported module of another stage or a runner) -> the modules importing it."""
    found: Dict[Tuple[str, str], Set[str]] = {}
    for path in package_modules():
        stage = stage_of(module_name(path))
        if not stage:
            continue
        for imported in imported_modules(path):
            if stage_of(imported) not in ("", stage) or imported in RUNNERS:
                found.setdefault((stage, imported), set()).add(module_name(path))
    return found


def test_the_stage_folders_exist():
    missing = [stage for stage in STAGES if not (PACKAGE_DIR / stage / "__init__.py").is_file()]
    assert missing == []


def test_stages_import_each_other_only_where_allowed():
    refused = {
        f"{importer} imports {imported}"
        for (stage, imported), importers in imports_between_stages().items()
        if (stage, imported) not in ALLOWED
        for importer in importers
    }
    assert sorted(refused) == [], (
        "imports from one stage into another that the README's 'Imports between stages' does not list: move "
        "what both read to edge_graph/, or add the pair to ALLOWED and to the README with the reason"
    )


def test_every_allowed_import_is_made():
    assert sorted(set(ALLOWED) - set(imports_between_stages())) == []


def test_the_readme_lists_the_allowed_imports():
    readme = (PACKAGE_DIR / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^- `(\w+)/` imports `([\w.]+)`", readme, flags=re.MULTILINE))
    assert listed == set(ALLOWED)
