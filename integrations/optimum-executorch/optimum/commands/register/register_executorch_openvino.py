"""Makes the plain ``optimum-cli export executorch --recipe openvino`` find executorch-openvino's recipe.

optimum-cli imports every module of the ``optimum.commands.register`` namespace when it
starts, to collect their ``REGISTER_COMMANDS``. This one registers no command: it puts
an ``openvino`` entry into optimum-executorch's recipe registry, which otherwise holds
only the recipes of optimum-executorch's own folder. The entry imports the recipe
(``executorch_openvino.llm.optimum_executorch``, which brings torch, executorch and
OpenVINO) when optimum calls it, not here: this module runs at every optimum-cli
command, and imports only optimum-executorch's registry, a module of the standard
library's imports alone. Without optimum-executorch it does nothing.
"""

from __future__ import annotations

from typing import Any, Dict, List

#: optimum-cli's plug-in interface: the commands to add (none).
REGISTER_COMMANDS: List[Any] = []

# The name ``--recipe`` takes: executorch_openvino.llm.optimum_executorch.RECIPE, repeated
# because importing that module here would import torch at every optimum-cli command.
RECIPE = "openvino"
REGISTRY_MODULE = "optimum.exporters.executorch.recipe_registry"
RECIPE_MODULE = "executorch_openvino.llm.optimum_executorch"


def is_missing(error: ModuleNotFoundError, module: str) -> bool:
    """Whether ``error`` says ``module`` or a package holding it is not installed (and
    not that something ``module`` imports is missing)."""
    parts = module.split(".")
    return error.name in {".".join(parts[:length]) for length in range(1, len(parts) + 1)}


def export_with_openvino(model: Any, **options: Any) -> Dict[str, Any]:
    """The ``openvino`` recipe, imported on its first call. Importing it registers the
    recipe itself under the same name, which replaces this entry."""
    try:
        from executorch_openvino.llm.optimum_executorch import export_to_executorch_with_openvino
    except ModuleNotFoundError as error:
        if not is_missing(error, RECIPE_MODULE):
            raise  # executorch-openvino is there but one of its imports is not
        raise ModuleNotFoundError(
            "--recipe openvino is executorch-openvino's, which is not installed in this environment "
            "(this add-on, executorch-openvino-optimum, only registers it)",
            name=error.name,
        ) from error
    return export_to_executorch_with_openvino(model, **options)


def add_openvino_recipe() -> None:
    """Adds the lazy entry to optimum-executorch's registry, unless the recipe is there
    already (its module was imported) or optimum-executorch is not installed."""
    try:
        from optimum.exporters.executorch.recipe_registry import recipe_registry
    except ModuleNotFoundError as error:
        if not is_missing(error, REGISTRY_MODULE):
            raise  # optimum-executorch is there but one of its imports is not
        return
    recipe_registry.setdefault(RECIPE, export_with_openvino)


add_openvino_recipe()
