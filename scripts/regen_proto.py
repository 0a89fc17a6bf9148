"""Regenerate the committed tfprof_widgets/proto/*_pb2.py modules from their .proto files.

Needs grpcio-tools (``pip install grpcio-tools``), which bundles protoc. The generated module
is committed so that users never need protoc.
"""

from __future__ import annotations

import pathlib
import sys


def main() -> int:
    import grpc_tools  # imported here: only this script needs grpcio-tools
    from grpc_tools import protoc

    root = pathlib.Path(__file__).resolve().parents[1]
    proto_dir = root / "tfprof_widgets" / "proto"
    # google/protobuf/any.proto (tool_data.proto's Any fields) ships with grpcio-tools.
    well_known = pathlib.Path(grpc_tools.__file__).parent / "_proto"
    for proto in sorted(proto_dir.glob("*.proto")):
        rc = protoc.main(
            [
                "protoc",
                f"-I{proto_dir}",
                f"-I{well_known}",
                f"--python_out={proto_dir}",
                str(proto),
            ]
        )
        if rc != 0:
            return rc
        print(f"wrote {proto.with_name(proto.stem + '_pb2.py')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
