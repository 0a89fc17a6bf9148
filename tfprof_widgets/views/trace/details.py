"""One event at a time, for the trace viewer's details panel: its stats, the kernel's launch
arguments, the events enclosing it and its flow links (launches, producer/consumer), looked up
in a :class:`TraceIndex` of the run's per-event stats."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...analysis.kernels import parse_kernel_details
from ...frameworks.xla import event_hlo
from ...schema import DEVICE_KINDS
from .model import TraceModel

_KINETO_LAUNCH = (
    "grid",
    "block",
    "registers per thread",
    "shared memory",
    "blocks per SM",
    "warps per SM",
    "est. achieved occupancy %",
)


def _typed_stats(stats: pd.DataFrame) -> list[tuple[str, object]]:
    out = []
    for s, k, iv, fv, sv in zip(
        stats["stat"], stats["kind"], stats["int_value"], stats["float_value"], stats["str_value"]
    ):
        k = str(k)
        if k in ("str", "bytes"):
            v = sv
        elif k == "double":
            v = float(fv)
        elif k == "uint":
            v = int(np.int64(iv).view(np.uint64))
        else:
            v = int(iv)
        out.append((str(s), v))
    return out


def launch_arguments(kernel_details: str) -> list[tuple[str, str]]:
    """A kernel's launch arguments from its ``kernel_details`` stat (either format TF
    writes, parsed by the kernel stats analysis), named, in the order given."""
    p = parse_kernel_details(str(kernel_details))
    shown = {
        "regs": ("registers per thread", str(p["registers_per_thread"])),
        "shm": ("shared memory (bytes)", str(p["static_shmem"])),
        "static_shared": ("static shared memory (bytes)", str(p["static_shmem"])),
        "dynamic_shared": ("dynamic shared memory (bytes)", str(p["dynamic_shmem"])),
        "grid": ("grid", " × ".join(p["grid_dim"].split(","))),
        "block": ("block", " × ".join(p["block_dim"].split(","))),
        "occ_pct": ("occupancy (%)", f"{p['occupancy_percent']:g}"),
    }
    keys = [t.partition(":")[0] for t in str(kernel_details).split()]
    return [shown[k] for k in dict.fromkeys(keys) if k in shown]


class TraceIndex:
    """Per-event stats and flow links of a run, looked up one event at a time.

    Flows: ``correlation_id`` (XPlane) or ``correlation`` (Kineto) joins a host launch to
    the device kernel or copy it started (same host, another plane); ``_p``/``_c`` join a
    producer to its consumers (XProf's producer/consumer ids). Only integer-valued stats
    take part."""

    FLOW_STATS = ("correlation_id", "correlation", "_p", "_c")

    def __init__(self, run) -> None:
        self.run = run
        stats = getattr(run, "event_stats", None)
        if stats is None:
            stats = pd.DataFrame(
                {
                    "event": np.zeros(0, np.int64),
                    "stat": pd.Categorical([]),
                    "kind": pd.Categorical([]),
                    "int_value": np.zeros(0, np.int64),
                    "float_value": np.zeros(0),
                    "str_value": pd.Categorical([]),
                }
            )
        self.stats = stats
        ev = stats["event"].to_numpy()
        self._sorted = bool(len(ev) < 2 or (np.diff(ev) >= 0).all())
        self._ev = ev
        self._flows = {}
        cats = stats["stat"].cat.categories if len(stats) else pd.Index([])
        codes = stats["stat"].cat.codes.to_numpy() if len(stats) else np.zeros(0, np.int8)
        kind = stats["kind"].astype("category")
        integer = np.isin(
            kind.cat.codes.to_numpy(), np.flatnonzero(kind.cat.categories.isin(["int", "uint"]))
        )
        for name in self.FLOW_STATS:
            if name in cats:
                sel = np.flatnonzero((codes == cats.get_loc(name)) & integer)
                vals = stats["int_value"].to_numpy()[sel]
                o = np.argsort(vals, kind="stable")
                self._flows[name] = (vals[o], ev[sel][o])
        events = run.events
        planes = getattr(run, "planes", None)
        pcats = events["plane"].cat.categories
        kinds = {}
        if planes is not None and "device_kind" in planes:
            kinds = {str(p): str(k) for p, k in zip(planes["plane"], planes["device_kind"])}
        device = np.array(
            [
                kinds.get(str(p), "GPU" if str(p).startswith("/device:") else "") in DEVICE_KINDS
                for p in pcats
            ],
            bool,
        )
        self._plane_is_device = device

    def stats_of(self, row: int) -> pd.DataFrame:
        if self._sorted:
            a = np.searchsorted(self._ev, row, side="left")
            b = np.searchsorted(self._ev, row, side="right")
            return self.stats.iloc[a:b]
        return self.stats[self._ev == row]

    def _on_device(self, row: int) -> bool:
        if row >= len(self.run.events):  # a derived event (build_trace_model)
            return False
        code = self.run.events["plane"].cat.codes.iat[row]
        return bool(self._plane_is_device[code]) if code >= 0 else False

    def _partners(self, stat: str, value: int, row: int) -> list[int]:
        if stat not in self._flows:
            return []
        vals, evs = self._flows[stat]
        a = np.searchsorted(vals, value, side="left")
        b = np.searchsorted(vals, value, side="right")
        return [int(e) for e in evs[a:b][:64] if int(e) != row]

    def flows(self, row: int) -> list[dict]:
        """Flow links of one event, one per other event: kind ('launch' or
        'producer/consumer'), direction ('in': the other end comes first, 'out': it follows)
        and the other end's row."""
        if row >= len(self.run.events):  # a derived event has no flows of its own
            return []
        st = dict(self._flow_values(row))
        out = []
        ev = self.run.events
        hosts = ev["host"].cat.codes.to_numpy()
        planes = ev["plane"].cat.codes.to_numpy()
        here_dev = self._on_device(row)
        for key in ("correlation_id", "correlation"):  # XPlane's, Kineto's
            if key not in st:
                continue
            for r in self._partners(key, st[key], row):
                if hosts[r] != hosts[row] or planes[r] == planes[row]:
                    continue
                there_dev = self._on_device(r)
                if there_dev != here_dev:  # the device end is the kernel (or copy)
                    first = here_dev
                else:  # planes of unknown kind (Chrome traces): the launch comes first
                    first = ev["start_us"].iat[r] <= ev["start_us"].iat[row]
                out.append({"kind": "launch", "dir": "in" if first else "out", "row": r})
        if "_c" in st:  # this event consumes: its producers come first
            for r in self._partners("_p", st["_c"], row):
                out.append({"kind": "producer/consumer", "dir": "in", "row": r})
        if "_p" in st:
            for r in self._partners("_c", st["_p"], row):
                out.append({"kind": "producer/consumer", "dir": "out", "row": r})
        # One link per pair of events: a Kineto launch is recorded three times (its
        # ``correlation``, the ``correlation_id`` the reader adds to both ends, and the ``_p``/
        # ``_c`` link made from them), an XPlane launch can be a correlation id and a flow;
        # the first (the launch, as the loops above put launches first) names the pair.
        seen: set[int] = set()
        unique = []
        for f in out:
            if f["row"] not in seen:
                seen.add(f["row"])
                unique.append(f)
        return unique[:64]

    def _flow_values(self, row: int) -> list[tuple[str, int]]:
        s = self.stats_of(row)
        if not len(s):
            return []
        keep = (s["stat"].isin(self.FLOW_STATS) & s["kind"].isin(("int", "uint"))).to_numpy()
        return [(str(k), int(v)) for k, v in zip(s["stat"][keep], s["int_value"][keep])]


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA:
        return "—"
    if isinstance(v, float):
        return f"{v:,.3f}"
    if isinstance(v, bytes):
        return v[:64].hex() + ("…" if len(v) > 64 else "")
    return str(v)


def event_details(run, model: TraceModel, index: TraceIndex, row: int) -> dict:
    """Everything about one event, for the details panel: its columns, every stat, the
    kernel launch arguments, the events enclosing it, and its flow links (with where their
    other end is drawn and, for a launch, the op that launched it)."""
    row = int(row)
    if row >= len(run.events):
        return _derived_details(run, model, row)
    ev = run.events.iloc[row]
    fields = [[str(k), _fmt(v)] for k, v in ev.items()]
    stats = _typed_stats(index.stats_of(row))
    launch = []
    for k, v in stats:
        if k == "kernel_details":
            launch = [[a, b] for a, b in launch_arguments(v)]
    if not launch:  # Kineto names each launch argument as its own stat
        launch = [[k, _fmt(v)] for k, v in stats if k in _KINETO_LAUNCH]
    here = model.locate(row)
    flows = []
    for f in index.flows(row):
        where = model.locate(f["row"])
        if where is None:
            continue
        item = {**f, **where, "lane_label": str(model.lanes["label"].iat[where["lane"]])}
        if f["kind"] == "launch" and f["dir"] == "in":
            ops = model.parents(f["row"])
            item["launched_by"] = [p["name"] for p in ops]
        flows.append(item)
    return {
        "row": row,
        "name": str(ev["name"]),
        "fields": fields,
        "stats": [[k, _fmt(v)] for k, v in stats],
        "launch": launch,
        "where": here,
        "lane_label": (str(model.lanes["label"].iat[here["lane"]]) if here else ""),
        "parents": model.parents(row),
        "flows": flows,
        "hlo": [[k, v] for k, v in _hlo_of(run, row)],
    }


def _hlo_of(run, row: int) -> list[tuple[str, str]]:
    """The HLO instruction a device event ran (XLA captures), or nothing."""
    if getattr(run, "stat_store", None) is None or getattr(run, "lines", None) is None:
        return []
    return event_hlo(run, row)


def _derived_details(run, model: TraceModel, row: int) -> dict:
    """Details of a derived event (an XLA Modules/Ops event of build_trace_model): its span,
    the first kernel it covers (a link) and, for an op, that kernel's HLO instruction."""
    d = model.derived.iloc[row - len(run.events)]
    here = model.locate(row)
    first = int(d["first_row"])
    fields = [
        ["line", str(d["line"])],
        ["name", str(d["name"])],
        ["start_us", _fmt(float(d["start_us"]))],
        ["dur_us", _fmt(float(d["dur_us"]))],
        ["derived", "from the stream's kernels, as XProf's trace viewer derives this line"],
    ]
    where = model.locate(first)
    flows = []
    if where is not None:
        lane = str(model.lanes["label"].iat[where["lane"]])
        flows.append({"kind": "derived", "dir": "out", **where, "lane_label": lane})
    ops = str(d["line"]).startswith("XLA Ops")
    return {
        "row": row,
        "name": str(d["name"]),
        "fields": fields,
        "stats": [],
        "launch": [],
        "where": here,
        "lane_label": (str(model.lanes["label"].iat[here["lane"]]) if here else ""),
        "parents": [],
        "flows": flows,
        "hlo": [[k, v] for k, v in _hlo_of(run, first)] if ops else [],
    }
