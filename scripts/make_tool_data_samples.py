"""Make the tool-data and TF 2.0/2.1 trace test files in tests/data/tooldata/ that no public
capture provides, from public captures, the way TensorFlow wrote them.

1. ``bert_tf2x/``: what TF 2.3-2.10 wrote beside the xplane of the BERT capture
   (tests/data/bert_8gpu_multi_worker.xplane.pb, tensorflow/profiler, Apache-2.0): the
   ``kernel_stats.pb`` (KernelStatsDb) and ``memory_profile.json.gz`` (MemoryProfile JSON)
   that xprof's converters (the same code TF 2.3-2.10 ran) make from it, and the
   ``trace.json.gz`` re-emitted in the TF 2.3-2.10 trace-viewer writer's byte layout
   (compact, ``%.17g`` numbers, host pid 501, ending ``{}``). Needs xprof.
2. ``xprof_datatables/``: xprof 2.24's overview-page, input-pipeline and pod-viewer outputs
   of the same capture: the current DataTable / PodViewerDatabase JSON layouts. Needs xprof.
3. ``tf20_gpu_timeline/local.trace``: a TF 2.0 ``Trace`` (trace_events.proto) made with TF
   2.0's rules (run_metadata_to_trace_events.cc inside profiler_session.cc: device_id = the
   dev_stats index, resource 0 named "0", lanes for devices without thread names, name =
   text after the last ':' of the node name, args 'label' = the timeline label,
   picoseconds from the first event, stream:all / memcpy devices kept) from the step stats
   of a real TF 1.0 GPU run, read back from its timeline
   (tf1_timeline/GPU_timeline_01.json, ikhlestov/tensorflow_profiling, MIT). No tools needed.
4. ``tf21_cpu/local.trace``: copied from /tmp/x14/samples when present (the lead's
   researchers made it with TF 2.1's rules from a TensorFlow 2.21 FULL_TRACE RunMetadata).

Every converter runs on a private copy in a temporary directory (xprof writes caches beside
its input). Usage: python scripts/make_tool_data_samples.py [SHARED_CAPTURES_DIR]
"""

from __future__ import annotations

import gzip
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "tooldata"
BERT = ROOT / "tests" / "data" / "bert_8gpu_multi_worker.xplane.pb"
HOST = "34.83.195.179_6003"
sys.path.insert(0, str(ROOT))

_XPROF = r"""
import gzip, json, os, shutil, sys, tempfile
from xprof.convert import raw_to_tool_data as r
from xprof.protobuf import op_stats_pb2
src, out, host = sys.argv[1:4]
d = os.path.join(tempfile.mkdtemp(), "plugins", "profile", "run1")
os.makedirs(d)
x = os.path.join(d, host + ".xplane.pb")
shutil.copy(src, x)
opts = {"use_saved_result": False}
outs = {}
for tool in ("memory_profile", "overview_page", "input_pipeline_analyzer", "pod_viewer",
             "trace_viewer", "kernel_stats"):
    data, _ = r.xspace_to_tool_data([x], tool, opts)
    outs[tool] = data.decode() if isinstance(data, bytes) else data
    # The kernel stats tool caches the OpStats it was computed from; its kernel_stats_db is
    # the KernelStatsDb that TF 2.3-2.10 wrote as <host>.kernel_stats.pb.
cache = [f for f in os.listdir(d) if "op_stats" in f]
stats = op_stats_pb2.OpStats()
stats.ParseFromString(open(os.path.join(d, cache[0]), "rb").read())
open(os.path.join(out, "kernel_stats.pb"), "wb").write(stats.kernel_stats_db.SerializeToString())
json.dump(outs, open(os.path.join(out, "tools.json"), "w"))
"""


def _old_trace_json(doc: dict) -> str:
    """xprof's trace-viewer JSON re-emitted as TF 2.3-2.10's trace_events_to_json.cc wrote it."""
    ev = [e for e in doc["traceEvents"] if e]
    remap = {701: 501}  # xprof's host pid; TF 2.3-2.10 used 501

    def q(s):
        return json.dumps(s, ensure_ascii=False)

    procs, threads = {}, {}
    for e in ev:
        if e.get("ph") == "M":
            pid = remap.get(e["pid"], e["pid"])
            if e["name"] == "process_name":
                procs[pid] = e["args"]["name"]
            elif e["name"] == "thread_name":
                threads.setdefault(pid, {})[e["tid"]] = e["args"]["name"]
    parts = ['{"displayTimeUnit":"ns","metadata":{"highres-ticks":true},"traceEvents":[']
    for pid in sorted(procs):
        parts.append(
            f'{{"ph":"M","pid":{pid},"name":"process_name","args":{{"name":{q(procs[pid])}}}}},'
        )
        parts.append(
            f'{{"ph":"M","pid":{pid},"name":"process_sort_index","args":{{"sort_index":{pid}}}}},'
        )
        for ordinal, tid in enumerate(sorted(threads.get(pid, {})), 1):
            name = q(threads[pid][tid])
            order = ordinal if pid == 501 else tid
            parts.append(
                f'{{"ph":"M","pid":{pid},"tid":{tid},"name":"thread_name","args":{{"name":{name}}}}},'
            )
            parts.append(
                f'{{"ph":"M","pid":{pid},"tid":{tid},"name":"thread_sort_index",'
                f'"args":{{"sort_index":{order}}}}},'
            )
    for e in ev:
        if e.get("ph") != "X":
            continue
        pid, tid = remap.get(e["pid"], e["pid"]), e["tid"]
        ts, dur = format(e["ts"], ".17g"), format(max(e.get("dur", 0.0), 1e-6), ".17g")
        s = f'{{"pid":{pid},"tid":{tid},"ts":{ts},"name":{q(e["name"])},"ph":"X","dur":{dur}'
        args = e.get("args") or {}
        if args:
            s += (
                ',"args":{' + ",".join(f"{q(k)}:{q(str(v))}" for k, v in sorted(args.items())) + "}"
            )
        parts.append(s + "},")
    parts.append("{}]}")
    return "".join(parts)


def bert_files() -> None:
    """1 and 2: xprof's outputs of the BERT capture."""
    tmp = tempfile.mkdtemp()
    r = subprocess.run(
        [sys.executable, "-c", _XPROF, str(BERT), tmp, HOST], capture_output=True, text=True
    )
    if r.returncode:
        print("skipped the BERT tool files (xprof not usable):", r.stderr[-400:])
        return
    outs = json.load(open(os.path.join(tmp, "tools.json")))
    tf2x = OUT / "bert_tf2x"
    tf2x.mkdir(parents=True, exist_ok=True)
    shutil.copy(os.path.join(tmp, "kernel_stats.pb"), tf2x / f"{HOST}.kernel_stats.pb")
    with gzip.GzipFile(tf2x / f"{HOST}.memory_profile.json.gz", "wb", mtime=0) as f:
        f.write(outs["memory_profile"].encode())
    with gzip.GzipFile(tf2x / f"{HOST}.trace.json.gz", "wb", mtime=0) as f:
        f.write(_old_trace_json(json.loads(outs["trace_viewer"])).encode())
    tables = OUT / "xprof_datatables"
    tables.mkdir(parents=True, exist_ok=True)
    for tool, suffix in (
        ("overview_page", "overview_page.json"),
        ("input_pipeline_analyzer", "input_pipeline.json"),
        ("pod_viewer", "pod_viewer.json"),
    ):
        (tables / f"{HOST}.{suffix}").write_text(outs[tool])
    print("wrote", tf2x, tables)


def _assign_lanes(nodes: list[dict]) -> None:
    """TF 2.0/2.1's AssignLanes: walking backwards, the first lane free at the node's end."""
    lanes: list[int] = []
    for n in reversed(nodes):
        end = n["start"] + n["dur"]
        for i, free_from in enumerate(lanes):
            if end <= free_from:
                n["tid"], lanes[i] = i, n["start"]
                break
        else:
            n["tid"] = len(lanes)
            lanes.append(n["start"])


def tf20_trace_from_timeline(timeline: pathlib.Path, out: pathlib.Path) -> None:
    """3: a TF 2.0 Trace from the step stats a TF1 timeline was made of."""
    from tfprof_widgets.proto import trace_events_pb2 as te

    doc = json.loads(timeline.read_text())
    devices, by_pid = [], {}
    for e in doc["traceEvents"]:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            name = e["args"]["name"]
            if name.endswith(" Compute"):
                by_pid[e["pid"]] = len(devices)
                devices.append({"device": name[: -len(" Compute")], "nodes": []})
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e["pid"] in by_pid:
            a = e.get("args", {})
            inputs = ", ".join(a[k] for k in sorted(a) if k.startswith("input"))
            devices[by_pid[e["pid"]]]["nodes"].append(
                {
                    "name": a.get("name", e["name"]),
                    "label": f"{a.get('name', e['name'])} = {a.get('op', e['name'])}({inputs})",
                    "start": e["ts"],
                    "dur": e["dur"],
                }
            )
    t0 = min(n["start"] for d in devices for n in d["nodes"])
    trace = te.Trace()
    for device_id, d in enumerate(devices):
        dv = trace.devices[device_id]
        dv.name, dv.device_id = d["device"], device_id
        dv.resources[0].name, dv.resources[0].resource_id = "0", 0
        d["nodes"].sort(key=lambda n: n["start"])
        _assign_lanes(d["nodes"])  # TF1 RunMetadata of a GPU run has no thread names
        for n in d["nodes"]:
            ev = trace.trace_events.add()
            ev.device_id, ev.resource_id = device_id, n["tid"]
            ev.name = n["name"].split(":")[-1]
            ev.timestamp_ps = (n["start"] - t0) * 1_000_000
            ev.duration_ps = n["dur"] * 1_000_000
            ev.args["label"] = n["label"]
            if ev.name != n["name"]:
                ev.args["long name"] = n["name"]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(trace.SerializeToString())
    print("wrote", out, len(trace.devices), "devices,", len(trace.trace_events), "events")


def main() -> int:
    shared = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "/work/shared/captures")
    bert_files()
    tf20_trace_from_timeline(
        shared / "tf1_timeline" / "GPU_timeline_01.json", OUT / "tf20_gpu_timeline" / "local.trace"
    )
    cpu = pathlib.Path("/tmp/x14/samples/tf21_logdir/plugins/profile/2020-01-15_10-00-00")
    if (cpu / "local.trace").exists():
        (OUT / "tf21_cpu").mkdir(parents=True, exist_ok=True)
        shutil.copy(cpu / "local.trace", OUT / "tf21_cpu" / "local.trace")
    return 0


if __name__ == "__main__":
    sys.exit(main())
