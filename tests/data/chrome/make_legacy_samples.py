# ruff: noqa: UP031  (the %-formats follow the TF writers this script imitates)
"""Make faithful test files of two legacy formats no shared capture contains.

1. <host>.trace.json.gz as TensorFlow 2.3-~2.10 wrote it beside the xplane
   (tensorflow/core/profiler/convert/trace_events_to_json.cc, fed by
   xplane_to_trace_events.cc). Recipe: let xprof (2.24 here) convert a PRIVATE COPY
   of the shared GPU xplane with its `trace_viewer` tool (same event selection:
   host plane + /device:GPU:* planes, internal events and MemoryAllocation dropped,
   stats as strings, TF ops renamed to their display name), then re-emit the events
   byte-for-byte in the old writer's layout:
     {"displayTimeUnit":"ns","metadata":{"highres-ticks":true},"traceEvents":[
       {"ph":"M","pid":P,"name":"process_name","args":{"name":"/host:CPU"}},
       {"ph":"M","pid":P,"name":"process_sort_index","args":{"sort_index":P}},
       {"ph":"M","pid":P,"tid":T,"name":"thread_name","args":{"name":"..."}},
       {"ph":"M","pid":P,"tid":T,"name":"thread_sort_index","args":{"sort_index":S}},
       ... devices in ascending pid, each followed by its resources in ascending tid ...
       {"pid":P,"tid":T,"ts":%.17g,"name":"...","ph":"X","dur":%.17g,"args":{"k":"v",...}},
       ...
       {}]}
   no whitespace, no trailing newline, gzip. Differences from xprof 2.24's output:
   host pid 501 (xprof/tsl now 701), compact separators and this key order (xprof
   prints sorted keys with ", " and one event per line), %.17g numbers
   (2590162.8809999998 where xprof prints 2590162.881), `dur` at least 1 ps
   (1e-06 us), args only when non-empty with sorted keys, host resources'
   thread_sort_index = 1..n in line order. Both end traceEvents with {}.

2. local.trace as TensorFlow 2.0/2.1 wrote it (`Trace` of trace_events.proto,
   tensorflow/core/profiler/convert/run_metadata_to_trace_events.cc): a real
   RunMetadata (graph mode, FULL_TRACE, from the installed TensorFlow) converted
   with that file's rules: device_id = index in step_stats.dev_stats, resource 0
   named "0" plus one resource per thread_names entry, lanes assigned when a device
   has no thread names, event name = text after the last ':' of node_name,
   timestamp_ps = (all_start_micros - profile_start_micros) * 1e6,
   duration_ps = all_end_rel_micros * 1e6, args {"label": timeline_label (before
   "@@"), "annotation": (after "@@"), "long name": node_name when shortened};
   devices ending in "stream:all", "sync" or "memcpy" dropped. A "/host:CPU" device
   with thread names (what TF 2.1's host tracer added) is appended from the same
   RunMetadata's ops so that both resource styles occur.

Writes into /tmp/x14/samples/ (never into a repository). Needs xprof for (1) and
tensorflow for (2); each part is skipped when its tool is missing.
"""

import gzip
import importlib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = "/tmp/x14/samples"
GPU_XPLANE = "/work/shared/captures/xplane_gpu_tf/bert_8gpu_multi_worker.xplane.pb"
OLD_HOST_PID = 501
NEW_HOST_PID = 701


def _q(s):
    return json.dumps(s, ensure_ascii=False)


def _g(x):
    return f"{x:.17g}"


def old_trace_json(xprof_doc):
    ev = [e for e in xprof_doc["traceEvents"] if e]

    def remap(pid):
        return OLD_HOST_PID if pid == NEW_HOST_PID else pid

    procs, threads = {}, {}
    for e in ev:
        if e.get("ph") != "M":
            continue
        pid = remap(e["pid"])
        if e["name"] == "process_name":
            procs[pid] = e["args"]["name"]
        elif e["name"] == "thread_name":
            threads.setdefault(pid, {})[e["tid"]] = e["args"]["name"]
    parts = ['{"displayTimeUnit":"ns","metadata":{"highres-ticks":true},"traceEvents":[']
    for pid in sorted(procs):
        parts.append(
            '{"ph":"M","pid":%d,"name":"process_name","args":{"name":%s}},' % (pid, _q(procs[pid]))
        )
        parts.append(
            '{"ph":"M","pid":%d,"name":"process_sort_index","args":{"sort_index":%d}},' % (pid, pid)
        )
        for ordinal, tid in enumerate(sorted(threads.get(pid, {})), 1):
            parts.append(
                '{"ph":"M","pid":%d,"tid":%d,"name":"thread_name","args":{"name":%s}},'
                % (pid, tid, _q(threads[pid][tid]))
            )
            sort_index = ordinal if pid == OLD_HOST_PID else tid
            parts.append(
                '{"ph":"M","pid":%d,"tid":%d,"name":"thread_sort_index","args":{"sort_index":%d}},'
                % (pid, tid, sort_index)
            )
    for e in ev:
        if e.get("ph") != "X":
            continue
        dur = max(e.get("dur", 0.0), 1e-6)
        s = '{"pid":%d,"tid":%d,"ts":%s,"name":%s,"ph":"X","dur":%s' % (
            remap(e["pid"]),
            e["tid"],
            _g(e["ts"]),
            _q(e["name"]),
            _g(dur),
        )
        args = e.get("args") or {}
        if args:
            s += (
                ',"args":{'
                + ",".join(f"{_q(k)}:{_q(str(v))}" for k, v in sorted(args.items()))
                + "}"
            )
        parts.append(s + "},")
    parts.append("{}]}")
    return "".join(parts)


def make_trace_json_gz():
    snippet = r"""
import os, shutil, sys, tempfile
from xprof.convert import raw_to_tool_data as r
d = os.path.join(tempfile.mkdtemp(), "plugins", "profile", "run1"); os.makedirs(d)
dst = os.path.join(d, "34.83.195.179_6003.xplane.pb"); shutil.copy(sys.argv[1], dst)
data, _ = r.xspace_to_tool_data([dst], "trace_viewer", {})
sys.stdout.write(data if isinstance(data, str) else data.decode())
"""
    r = subprocess.run([sys.executable, "-c", snippet, GPU_XPLANE], capture_output=True, text=True)
    if r.returncode != 0:
        print("skip trace.json.gz (xprof not usable):", r.stderr[-300:])
        return None
    doc = json.loads(r.stdout)
    text = old_trace_json(doc)
    run = os.path.join(OUT, "tf2x_logdir", "plugins", "profile", "2020_06_01_12_00_00")
    os.makedirs(run, exist_ok=True)
    path = os.path.join(run, "34.83.195.179_6003.trace.json.gz")
    with gzip.open(path, "wb") as f:
        f.write(text.encode())
    n_x = text.count('"ph":"X"')
    print(
        "wrote %s: %d bytes of JSON, %d X events, ends with %r" % (path, len(text), n_x, text[-8:])
    )
    return path


def make_local_trace():
    out = tempfile.mkdtemp(prefix="x14_te_")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            "-I",
            os.path.join(HERE, "proto"),
            "--python_out",
            out,
            "trace_events.proto",
        ],
        check=True,
    )
    snippet = r"""
import sys, numpy as np, tensorflow as tf
tf1 = tf.compat.v1
g = tf.Graph()
with g.as_default():
    a = tf1.placeholder(tf.float32, [256, 256]); b = tf.matmul(a, a)
    c = tf.reduce_sum(tf.nn.relu(b) * 2.0)
    with tf1.Session() as s:
        md = tf1.RunMetadata()
        s.run(c, {a: np.ones((256, 256), np.float32)},
              options=tf1.RunOptions(trace_level=tf1.RunOptions.FULL_TRACE), run_metadata=md)
import json
devs = [{"device": d.device, "threads": {int(k): v for k, v in d.thread_names.items()},
         "nodes": [{"name": n.node_name, "start": n.all_start_micros, "dur": n.all_end_rel_micros,
                    "label": n.timeline_label, "tid": n.thread_id} for n in d.node_stats]}
        for d in md.step_stats.dev_stats]
open(sys.argv[1], "w").write(json.dumps(devs))
"""
    md_path = os.path.join(out, "dev_stats.json")
    r = subprocess.run([sys.executable, "-c", snippet, md_path], capture_output=True, text=True)
    if r.returncode != 0:
        print("skip local.trace (tensorflow not usable):", r.stderr[-300:])
        return None
    sys.path.insert(0, out)
    te = importlib.import_module("trace_events_pb2")
    devs = json.load(open(md_path))  # step_stats.dev_stats, read with TF's own classes
    # A host-tracer device as TF 2.1 recorded it: thread names, ops on real thread ids.
    cpu = devs[0]
    devs.append(
        {
            "device": "/host:CPU",
            "threads": {4242: "tf_Compute", 4343: "python"},
            "nodes": [dict(n, tid=4242 if i % 2 else 4343) for i, n in enumerate(cpu["nodes"])],
        }
    )
    start = min(n["start"] for d in devs for n in d["nodes"]) - 5
    end = max(n["start"] + n["dur"] for d in devs for n in d["nodes"]) + 5
    tr = te.Trace()
    for device_id, d in enumerate(devs):
        if d["device"].endswith(("stream:all", "sync", "memcpy")):
            continue
        if not d["threads"] and d["nodes"]:  # AssignLanes
            lanes = []
            for n in reversed(d["nodes"]):
                e = n["start"] + n["dur"]
                for li, lt in enumerate(lanes):
                    if e <= lt:
                        n["tid"] = li
                        lanes[li] = n["start"]
                        break
                else:
                    n["tid"] = len(lanes)
                    lanes.append(n["start"])
        dv = tr.devices[device_id]
        dv.name = d["device"]
        dv.device_id = device_id
        dv.resources[0].name = "0"
        dv.resources[0].resource_id = 0
        for tid, tname in ((int(k), v) for k, v in d["threads"].items()):
            dv.resources[tid].name = tname
            dv.resources[tid].resource_id = tid
        for n in d["nodes"]:
            if n["start"] < start or n["start"] + n["dur"] > end:
                continue
            ev = tr.trace_events.add()
            ev.device_id = device_id
            ev.resource_id = n["tid"]
            parts = n["name"].split("@@")
            ev.name = (
                parts[0].split("::")[-1].split("#")[0].split(":")[-1]
                if len(parts) > 1
                else n["name"].split(":")[-1]
            )
            ev.timestamp_ps = (n["start"] - start) * 1000000
            ev.duration_ps = n["dur"] * 1000000
            if n["label"]:
                lp = n["label"].split("@@")
                ev.args["label"] = lp[0]
                if len(lp) == 2:
                    ev.args["annotation"] = lp[1]
            if ev.name != n["name"]:
                ev.args["long name"] = n["name"]
    run = os.path.join(OUT, "tf21_logdir", "plugins", "profile", "2020-01-15_10-00-00")
    os.makedirs(run, exist_ok=True)
    path = os.path.join(run, "local.trace")
    open(path, "wb").write(tr.SerializeToString())
    print(
        "wrote %s: %d devices %s, %d events"
        % (
            path,
            len(tr.devices),
            [tr.devices[k].name for k in sorted(tr.devices)],
            len(tr.trace_events),
        )
    )
    return path


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    make_trace_json_gz()
    make_local_trace()
