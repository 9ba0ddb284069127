"""Profiling with ExecuTorch's devtools: reading the OpenVINO delegate's events.

A method loaded with an event tracer logs one event per OpenVINO layer per call
(runtime/layer_events.h); lowering stored the map from layers to edge operators
(preprocessing/debug_handle_map.py). ``layer_metadata`` reads the events' metadata for
``executorch.devtools.Inspector``. docs/profiling.md shows the whole flow.
"""

from __future__ import annotations

import json
from typing import Dict, List, Union


def layer_metadata(metadatas: List[Union[bytes, str]]) -> Dict[str, str]:
    """Reads our events' metadata, for ``Inspector(delegate_metadata_parser=layer_metadata)``.

    Each event carries ``{"node_type", "exec_type", "runtime_precision"}``: the
    layer's type, the kernel OpenVINO ran it with, and the precision it ran at.
    Returns each field once, or its distinct values joined by ", " when calls ran
    the layer differently (a dynamic shape can change the kernel). Metadata that is
    not ours (another delegate's) comes back under "raw".
    """
    values: Dict[str, List[str]] = {}
    for metadata in metadatas:
        text = metadata.decode("utf-8", "replace") if isinstance(metadata, bytes) else metadata
        try:
            fields = json.loads(text)
        except ValueError:
            fields = None
        if not isinstance(fields, dict):
            fields = {"raw": text}
        for key, value in fields.items():
            seen = values.setdefault(key, [])
            if str(value) not in seen:
                seen.append(str(value))
    return {key: ", ".join(seen) for key, seen in values.items()}
