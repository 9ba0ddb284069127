"""Reading an op's arguments in a translator registered with OpenVINO's PyTorch frontend.

The frontend's Python ``NodeContext`` has no ``input_is_none``; an argument the
graph leaves out (a trailing default) is past ``get_input_size()``.
"""

from __future__ import annotations

from typing import Any, Optional


def constant_argument(context, index: int, default: Any) -> Any:
    """The value of a constant argument, or `default` when it is left out or None."""
    if index >= context.get_input_size():
        return default
    value = context.get_values_from_const_input(index)
    return default if value is None else value


def is_none(context, index: int) -> bool:
    """Whether a tensor argument is left out or None (and not a tensor the graph computes)."""
    if index >= context.get_input_size():
        return True
    try:
        return context.get_values_from_const_input(index) is None
    except Exception:  # the frontend refuses to read a computed tensor as a constant
        return False


def string_argument(context, index: int, default: Optional[str]) -> Optional[str]:
    """The value of a str argument (``side="right"``), or `default` when it is left out or None.

    The FX decoder (seen on OpenVINO 2026.4.1) makes a str a uint8 constant of its bytes,
    which ``get_values_from_const_input`` refuses.
    """
    if is_none(context, index):
        return default
    return bytes(context.get_input(index).get_node().get_data()).decode()
