"""The delegate's processed blob: OpenVINO's IR behind a header (blob.py; the format is
described once, in runtime/blob_format.h)."""
