"""The names by which a growing KV cache is found in a delegate's OpenVINO model.

conversion/rewrites/kv_cache_growth.py gives them, lowering's paged-attention check
(preprocessing/paged_attention.py) and the C++ runtime find the cache by them.
"""

#: The name the positions input gets, followed by ".max=<cache length>"; the C++
#: runtime reads it (kCachePositionsName in runtime/include/executorch_openvino/backend.h).
CACHE_POSITIONS_NAME = "executorch_openvino.cache_positions"
#: What a grown cache's variable id ends with; the runtime empties those at position 0
#: (kGrownCacheSuffix in backend.h).
GROWN_CACHE_SUFFIX = ".grown"
