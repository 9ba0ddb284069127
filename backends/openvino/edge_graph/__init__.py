"""Facts about an edge program that several stages read: what a node calls and holds, what a
copy is, which inputs are weights and written buffers, the dtypes the runtime binds, pooling
geometry. Nothing here changes a graph."""
