"""Regenerate tfprof_widgets/proto/xplane_pb2.py from xplane.proto.

Needs grpcio-tools (``pip install grpcio-tools``), which bundles protoc. The generated module
is committed so that users never need protoc.
"""

from __future__ import annotations

import pathlib
import sys


def main() -> int:
    from grpc_tools import protoc  # imported here: only this script needs grpcio-tools

    root = pathlib.Path(__file__).resolve().parents[1]
    proto_dir = root / "tfprof_widgets" / "proto"
    rc = protoc.main(
        ["protoc", f"-I{proto_dir}", f"--python_out={proto_dir}", str(proto_dir / "xplane.proto")]
    )
    if rc == 0:
        print(f"wrote {proto_dir / 'xplane_pb2.py'}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
