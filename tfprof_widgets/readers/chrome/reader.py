"""Read Chrome trace-event JSON (``*.trace.json`` / ``*.trace.json.gz``, any ``.json``).

Every writer a TensorFlow (or PyTorch) user meets, each mapped to planes and lines the way an
XSpace capture of the same hardware would be:

* TensorFlow's trace viewer JSON (``<host>.trace.json.gz``, TF 2.2-2.10, and xprof's
  ``trace_viewer`` tool): one process per XPlane, named by it (``/host:CPU``,
  ``/device:GPU:0``), threads are its lines; its last element is an empty ``{}`` (exactly
  one trailing ``{}`` is accepted, one anywhere else is an error);
* TF1 ``timeline.Timeline`` traces: TF1 names devices in lowercase
  (``/job:localhost/replica:0/task:0/gpu:0 Compute``, ``/gpu:0/stream:12 Compute``): CPU
  devices go to ``/host:CPU``, GPU devices to ``/device:GPU:N``, ``/gpu:N/stream:K`` to the
  line ``Stream #K``; op events are named ``node:OpType`` as the RunMetadata reader names
  them. TF1's ``/gpu:N/stream:all`` and ``/gpu:N/memcpy`` pseudo-devices repeat events of the
  numbered streams (same op, time and duration); they are kept, on lines ``stream:all`` and
  ``memcpy`` whose ids are in XProf's derived-line range, so analyses (which skip derived
  lines, as XProf does) count each kernel once;
* PyTorch Kineto traces: see :mod:`.kineto`;
* anything else (catapult's test traces, browsers, other exporters): one plane per process
  (named by ``process_name``, made unique), one line per thread.

Phases are resolved by :mod:`.chrome_pairs`; flows become producer/consumer links stored as
XSpace stores them (``_p``/``_pt`` on the producer, ``_c``/``_ct`` on the consumer, see
:data:`tfprof_widgets.schema.EVENT_STATS`). ``args`` become stats, all of them, decoded in
bulk (:mod:`.chrome_decode`); each event's ``cat`` is the stat ``cat``, and a phase other
than complete/begin-end its stat ``ph``.

Times are microseconds. A ``ts`` outside ±292 years of 1970 (what int64 nanoseconds hold),
or a trace spanning more than 106 days (what int64 picoseconds hold), is a
:class:`CorruptProfileError` naming the events, never a silent wrap-around. One exception:
when every ``ts`` is at least 1e17 (as microseconds: after the year 5000) the exporter wrote
epoch nanoseconds (a common mistake); ``ts`` and ``dur`` are then read as nanoseconds, with a
warning.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ...errors import CorruptProfileError, NoEventsError
from ..columnar import HostTables, LineInfo, PlaneInfo, StatRows, categorical_from_codes
from ..formats import host_of
from ..limits import MEMORY_PER_FILE_BYTE, available_memory_bytes, inflate_bounded
from . import kineto
from .decode import PH_CODE, ArgRows, Codes, Decoded, decode
from .pairs import (
    SLOT_NAMES,
    THREAD,
    Links,
    bind_to_slices,
    flow_links,
    id_codes,
    timed_events,
)

__all__ = ["read_chrome_trace", "decode_json"]

_GZIP_MAGIC = b"\x1f\x8b"
_INT64 = 2**63
# ts beyond this many µs from 1970 do not fit int64 ns (±292 years).
_MAX_ABS_TS_US = 9.2e15
# One trace may span at most this many µs: its events' offsets are int64 ps.
_MAX_SPAN_US = 9.2e12
# Every ts at least this (µs: after the year 5138) means the exporter wrote nanoseconds.
_NS_TS_THRESHOLD = 1e17
_DEVICE_ORDINAL = re.compile(r"device:[A-Za-z_]+:(\d+)")
_TF1_DEVICE = re.compile(
    r"^(?P<dev>.*?(?:device:)?(?P<kind>gpu|cpu):(?P<n>\d+)\S*) (Compute|Tensors)$", re.IGNORECASE
)
_TF1_STREAM = re.compile(r"/stream:(\d+)$")
_TF1_JOB = re.compile(r"^/job:[^/]*/replica:\d+/task:\d+")
# Line ids of TF1's aggregate pseudo-devices: XProf's derived-line range (0xdeadbeef + 41/42).
_TF1_DERIVED_IDS = {
    "stream:all": 0xDEADBEEF + 41 - (1 << 32),
    "memcpy": 0xDEADBEEF + 42 - (1 << 32),
}
_MAX_DEVICE_ORDINAL = 2**31 - 1
# TF's derived line ids (kThreadIdDerivedMin .. Max) as unsigned 32-bit thread ids.
_DERIVED_TIDS = (0xDEADBEEF, 0xDEADBEEF + 289)
_KIND = {"int": 0, "uint": 1, "double": 2, "str": 3}


def _gunzip_bounded(data: bytes, path: str, limit: int | None = None) -> bytes:
    """Inflate a gzip stream up to ``limit`` bytes of JSON (default: the JSON whose decode
    fits in the memory available now)."""
    if limit is None:
        avail = available_memory_bytes()
        limit = int(avail / MEMORY_PER_FILE_BYTE["chrome"]) if avail else 1 << 62
    return inflate_bounded(data, path, limit, "the gzip stream")


def decode_json(data: bytes, path: str) -> Decoded:
    """Gunzip when needed and decode the trace; every failure becomes a typed error."""
    if not data:
        raise CorruptProfileError(path, "the file is empty (0 bytes)")
    if data[:2] == _GZIP_MAGIC:
        data = _gunzip_bounded(data, path)
    return decode(data, path)


def read_chrome_trace(path: str, data: bytes | None = None, host: str | None = None) -> HostTables:
    """Read one Chrome trace file into a :class:`HostTables`. Times are µs in the file."""
    if data is None:
        with open(path, "rb") as f:
            data = f.read()
    dec = decode_json(data, path)
    return _Reader(dec, path).tables(host or host_of(path))


class _Reader:
    """One decoded trace → planes, lines, events and stats (columns, no per-event loop)."""

    def __init__(self, dec: Decoded, path: str) -> None:
        self.dec, self.path, self.n = dec, path, len(dec)
        self.warnings: list[str] = []
        self.ts_scale = 1.0  # 1000 when the file's ts are nanoseconds
        self.kineto = kineto.is_kineto(dec.top)
        self.args = dec.args
        self.pid_code, self.pids = self._ids(dec.pid, "pid")
        self.tid_code, self.tids = self._ids(dec.tid, "tid")
        if self.kineto:  # "25738" and 25738 are one thread there
            norm = [kineto.normalise_tid(t) for t in self.tids]
            remap, self.tids = pd.factorize(
                np.array(norm + [None], dtype=object)[:-1], use_na_sentinel=False
            )
            self.tids = list(self.tids)
            self.tid_code = remap.astype(np.int64)[self.tid_code]
        self.cat_code = dec.cat.codes.astype(np.int64)  # -1: no category
        self.cats = dec.cat.values
        self._metadata()

    # -- ids and metadata ---------------------------------------------------------------------
    def _ids(self, values: Codes, field: str) -> tuple[np.ndarray, list]:
        """Codes of an id column, "no id" one of them; ids keep their JSON type ("1" and 1
        are different ids)."""
        codes, uniques = values.with_none()
        for k, u in enumerate(uniques):
            if isinstance(u, int) and not -_INT64 <= u < _INT64:
                j = int(np.argmax(codes == k))
                raise CorruptProfileError(
                    self.path, f"traceEvents[{j}].{field} is {u}, which does not fit in 64 bits"
                )
        return codes, uniques

    def _metadata(self) -> None:
        """process_name / thread_name / process_labels from the M events (the last one of a
        process or thread wins)."""
        dec, strs = self.dec, self.args.str_values
        meta = dec.ph == PH_CODE["M"]
        name = self.args.text_codes("name", self.n)
        labels = self.args.text_codes("labels", self.n)

        def last_per(what: str, text: np.ndarray, key: np.ndarray):
            """(key, event) of the last such M event per key, keys by first appearance."""
            sel = np.flatnonzero(meta & dec.name.isin([what]) & (text >= 0))
            return _last_of_each(key[sel], sel)

        pcs, js = last_per("process_name", name, self.pid_code)
        self.process_names = {pc: (strs[name[j]], j) for pc, j in zip(pcs.tolist(), js.tolist())}
        n_tids = len(self.tids) + 1
        keys, js = last_per("thread_name", name, self.pid_code * n_tids + self.tid_code)
        threads = zip((keys // n_tids).tolist(), (keys % n_tids).tolist())
        self.thread_names = dict(zip(threads, [strs[c] for c in name[js]]))
        pcs, js = last_per("process_labels", labels, self.pid_code)
        self.process_labels = dict(zip(pcs.tolist(), [strs[c] for c in labels[js]]))

    # -- layout -------------------------------------------------------------------------------
    def tables(self, host: str) -> HostTables:
        dec = self.dec
        n_tids = len(self.tids) + 1
        thread_key = self.pid_code * n_tids + self.tid_code
        timed = timed_events(dec, thread_key, self.pid_code)
        if not len(timed.src) and timed.unopened:
            raise CorruptProfileError(
                self.path,
                f"none of its {timed.unclosed + timed.unopened} begin/end events pair up: "
                f"{timed.unopened} end(s) (ph E/e/F) come before any begin in time (an end "
                "earlier than its begin?)",
            )
        if not len(timed.src):
            raise NoEventsError(
                self.path, "the trace has no timed events (only metadata or nothing)"
            )
        self.timed = timed
        src = timed.src
        pl, lk, plane_names, plane_stats, plane_ids = self._placement(src)
        line_of, lines = self._lines(src, pl, lk, plane_names)
        names, name_idx = self._names(src)
        ts_us, dur_us, base_ns, offset_ps = self._times(src, line_of, len(lines))
        for li, ln in enumerate(lines):
            ln.base_ns = ln.timestamp_ns = int(base_ns[li])
        links = self._links(src, line_of, ts_us, dur_us)
        stats = self._stats(src, name_idx, links)
        self._warn(timed, links)
        # Processes with nothing but metadata (TF1's "Tensors", Kineto's idle GPUs) make no
        # plane, except devices, which are planes even when idle, as in an XSpace.
        used = {ln.plane for ln in lines}
        kept = [i for i, nm in enumerate(plane_names) if i in used or nm.startswith("/device:")]
        new_index = {old: new for new, old in enumerate(kept)}
        for ln in lines:
            ln.plane = new_index[ln.plane]
        planes = [
            PlaneInfo(plane_names[i], plane_ids[i], plane_stats.get(i, StatRows.empty()))
            for i in kept
        ]
        return HostTables(
            host=host,
            path=self.path,
            planes=planes,
            lines=lines,
            ev_line=line_of.astype(np.int32),
            ev_name=name_idx.astype(np.int32),
            ev_offset_ps=offset_ps,
            ev_dur_ps=np.round(dur_us * 1e6).astype(np.int64),
            ev_occ=np.ones(len(src), np.int32),
            names=names,
            event_stats=stats,
            warnings=self.warnings,
        )

    def _placement(self, src: np.ndarray):
        """Each output event's plane and a line key within it (int64), the plane names,
        the planes' stats (device properties) and ids."""
        pc = self.pid_code[src]
        n_tids = len(self.tids) + 1
        slot = self.timed.slot
        tc = np.where(slot == THREAD, self.tid_code[src], n_tids - 1)
        lk = (pc * n_tids + tc) * 4 + slot
        self.plane_of_pid, plane_names, plane_ids = self._process_planes()
        pl = self.plane_of_pid[pc] if len(pc) else np.zeros(0, np.int64)
        plane_stats: dict[int, StatRows] = {}
        self.gpu_lines: dict[int, tuple[str, int]] = {}
        self.on_stream = np.zeros(len(src), bool)
        if self.kineto:
            on_stream, annot, device, stream = kineto.gpu_placement(
                self.dec, self.args, src, self.path
            )
            self.on_stream = on_stream
            gpu = np.flatnonzero(on_stream | annot)
            for d in np.unique(device[gpu]).tolist():
                plane_stats[len(plane_names)] = _plane_stat_rows(
                    kineto.device_properties(self.dec.top, d)
                )
                plane_ids.append(d)
                sel = gpu[device[gpu] == d]
                pl[sel] = len(plane_names)
                plane_names.append(f"/device:GPU:{d}")
            # GPU lines: negative keys, apart from the host's (pid, tid) keys.
            lk[gpu] = -1 - (stream[gpu] * 2 + annot[gpu])
            # distributedInfo (rank, world size, backend) as the host plane's stats.
            info = kineto.distributed_info(self.dec.top)
            if info and "/host:CPU" in plane_names:
                plane_stats[plane_names.index("/host:CPU")] = _plane_stat_rows(info)
        return pl, lk, plane_names, plane_stats, plane_ids

    def _process_planes(self) -> tuple[np.ndarray, list[str], list[int]]:
        """The plane of each process (pid code): by writer."""
        names: list[str] = []
        ids: list[int] = []
        plane_of = np.zeros(len(self.pids), np.int64)
        self.tf1 = {}
        for pc, pid in enumerate(self.pids):
            pname, j = self.process_names.get(pc, (None, -1))
            name = self._plane_name(pid, pname, j)
            if name in names and not self._shared_plane(name):
                name = f"{name} (pid {pid})"
            if name not in names:
                names.append(name)
                ids.append(pid if isinstance(pid, int) and pid >= 0 else 0)
            plane_of[pc] = names.index(name)
        return plane_of, names, ids

    def _shared_plane(self, name: str) -> bool:
        """Planes that several processes feed (Kineto's host, TF1's devices)."""
        return name == "/host:CPU" and self.kineto or name in self.tf1.values()

    def _plane_name(self, pid, pname: str | None, j: int) -> str:
        if self.kineto and isinstance(pid, int) and pid >= 0:
            return "/host:CPU"
        if pname is None:
            return pid if isinstance(pid, str) and pid else _unnamed("pid", pid)
        m = _TF1_DEVICE.match(pname)
        if m:
            plane = (
                f"/device:GPU:{self._ordinal(m.group('n'), j)}"
                if m.group("kind").lower() == "gpu"
                else "/host:CPU"
            )
            self.tf1[m.group("dev")] = plane
            return plane
        d = _DEVICE_ORDINAL.search(pname)
        if d:
            self._ordinal(d.group(1), j)
        return pname

    def _ordinal(self, digits: str, j: int) -> int:
        v = int(digits)
        if v > _MAX_DEVICE_ORDINAL:
            raise CorruptProfileError(
                self.path,
                f"traceEvents[{j}].args.name names device {v}, a device number beyond "
                f"{_MAX_DEVICE_ORDINAL}",
            )
        return v

    def _lines(self, src, pl, lk, plane_names):
        """Line index of each output event and the lines; keeps :meth:`_line_index`'s
        lookup (plane, key) -> line."""
        lo = int(lk.min()) if len(lk) else 0  # once: per line it made a 1M-thread file quadratic
        span = int(lk.max()) - lo + 1 if len(lk) else 1
        if (int(pl.max()) + 1) * span < 2**62:
            combined = pl * span + (lk - lo)
            line_of, uniq = pd.factorize(combined)
            uniq = np.asarray(uniq, np.int64)
            keys = list(zip((uniq // span).tolist(), (uniq % span + lo).tolist()))
            self._line_keys = (pd.Index(uniq), span, lo)
        else:  # absurdly many processes and threads (a hostile file): slower, still exact
            line_of, uniq = pd.MultiIndex.from_arrays([pl, lk]).factorize()
            keys = [(int(a), int(b)) for a, b in uniq]
            self._line_keys = (uniq, None, None)
        first = np.zeros(len(keys), np.int64)
        first[line_of[::-1]] = np.arange(len(line_of))[::-1]
        names, ids = self._thread_line_names(first, keys)
        for li in [li for li, name in enumerate(names) if name is None]:
            p, k = keys[li]
            names[li], ids[li] = self._line_name(int(first[li]), k, plane_names[p])
        lines = [LineInfo(p, nm, i, nm, 0, 0, 0) for (p, _), nm, i in zip(keys, names, ids)]
        return line_of.astype(np.int64), lines

    def _line_index(self, planes: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """The line of each (plane, line key), -1 where no event made that line."""
        index, span, lo = self._line_keys
        if span is None:
            return np.asarray(index.get_indexer(pd.MultiIndex.from_arrays([planes, keys])))
        ok = (keys >= lo) & (keys - lo < span)
        out = np.full(len(keys), -1, np.int64)
        out[ok] = index.get_indexer(planes[ok] * span + (keys[ok] - lo))
        return out

    def _thread_line_names(self, first: np.ndarray, keys: list) -> tuple[list, list]:
        """Names and ids of the lines that are plain threads (not Kineto streams, async or
        counter slots, nor TF1 devices), in bulk: what :meth:`_line_name` gives them, with
        None where a line needs it (a hostile trace can have a million threads)."""
        n = len(keys)
        names: list = [None] * n
        ids: list = [0] * n
        key = np.fromiter((k for _, k in keys), np.int64, n)
        slot = self.timed.slot[first]
        src = self.timed.src[first]
        pc = self.pid_code[src].astype(np.int64)
        tc = self.tid_code[src].astype(np.int64)
        tf1 = np.fromiter((self._tf1_device(int(c)) is not None for c in np.unique(pc)), bool)
        plain = (key >= 0) & (slot == THREAD) & ~np.isin(pc, np.unique(pc)[tf1])
        rows = np.flatnonzero(plain)
        if not len(rows):
            return names, ids
        tids = np.array(list(self.tids) + [None], dtype=object)[tc[rows]]
        is_int = np.fromiter((type(t) is int for t in tids), bool, len(rows))
        line_id = np.zeros(len(rows), np.int64)
        line_id[is_int] = tids[is_int].astype(np.int64)
        derived = (line_id >= _DERIVED_TIDS[0]) & (line_id <= _DERIVED_TIDS[1])
        line_id[derived] -= 1 << 32
        default = np.where(
            is_int,
            [("thread " if self.kineto else "tid ") + str(t) for t in tids],
            [t if isinstance(t, str) and t else _unnamed("tid", t) for t in tids],
        )
        given = self.thread_names
        got = [given.get(pt) for pt in zip(pc[rows].tolist(), tc[rows].tolist())]
        for r, name, fallback, i in zip(rows.tolist(), got, default.tolist(), line_id.tolist()):
            names[r] = name if name is not None else fallback
            ids[r] = i
        return names, ids

    def _tf1_device(self, pc: int) -> str | None:
        """The TF1 device a process stands for (its name's device part), else None; kept
        per process, as every line of it asks (a million for a hostile trace)."""
        cache = self.__dict__.setdefault("_tf1_devices", {})
        if pc not in cache:
            pname = self.process_names.get(pc, (None, -1))[0]
            m = _TF1_DEVICE.match(pname) if pname else None
            cache[pc] = m.group("dev") if m and m.group("dev") in self.tf1 else None
        return cache[pc]

    def _line_name(self, i: int, key: int, plane: str) -> tuple[str, int]:
        """Name and id of the line of output event ``i`` (its key ``key``)."""
        if key < 0:  # Kineto GPU line
            stream, annot = divmod(-1 - key, 2)
            if annot:
                return kineto.ANNOTATION_LINE, kineto.ANNOTATION_LINE_ID
            return f"Stream #{stream}", stream
        slot = int(self.timed.slot[i])
        if slot != THREAD:
            return SLOT_NAMES[slot], 0
        s = int(self.timed.src[i])
        pc, tc = int(self.pid_code[s]), int(self.tid_code[s])
        tid = self.tids[tc]
        line_id = tid if isinstance(tid, int) else 0
        if _DERIVED_TIDS[0] <= line_id <= _DERIVED_TIDS[1]:
            # TF's trace viewer writes its derived lines' int32 ids unsigned (0xdeadbeef for
            # 'Steps'); XSpace stores them signed, and XProf's rules compare that value.
            line_id -= 1 << 32
        dev = self._tf1_device(pc)
        if dev is not None:
            stream = _TF1_STREAM.search(dev)
            lane = f" lane {tid}" if tid != 0 else ""
            if stream:
                return f"Stream #{stream.group(1)}{lane}", int(stream.group(1))
            for suffix, derived in _TF1_DERIVED_IDS.items():
                if dev.lower().endswith(suffix):
                    return f"{suffix}{lane}", derived
            return f"{_TF1_JOB.sub('', dev)} lane {tid}", line_id
        name = self.thread_names.get((pc, tc))
        if name is None:
            if isinstance(tid, int):
                name = f"thread {tid}" if self.kineto else f"tid {tid}"
            else:
                name = tid if isinstance(tid, str) and tid else _unnamed("tid", tid)
        return name, line_id

    def _names(self, src):
        """Event names (index into a list); TF1 op events become ``node:OpType``."""
        codes, uniq = self.dec.name.with_none()
        self._name_list = uniq
        names = ["" if u is None else str(u) for u in uniq]
        name_idx = codes[src]
        if self.tf1:
            node = self.args.text_codes("name", self.n)[src]
            op = self.args.text_codes("op", self.n)[src]
            ok = np.flatnonzero((node >= 0) & (op >= 0) & (self.dec.ph[src] == PH_CODE["X"]))
            if len(ok):
                # Named per distinct (node, op); two pairs may spell one name ("a:b" + "c").
                strs, width = self.args.str_values, len(self.args.str_values)
                pair, pairs = pd.factorize(node[ok] * width + op[ok])
                full = [f"{strs[p // width]}:{strs[p % width]}" for p in pairs.tolist()]
                c, u = pd.factorize(np.array(full, dtype=object))
                name_idx[ok] = c[pair] + len(names)
                names += list(u)
        return names, name_idx

    # -- time ---------------------------------------------------------------------------------
    def _times(self, src, line_of, n_lines):
        """Each event's ts/dur (µs), each line's base (ns) and the events' offsets (ps)."""
        ts, dur = self.timed.ts.copy(), self.timed.dur.copy()
        ends = self.timed.ends[self.timed.ends >= 0]
        missing = np.flatnonzero(np.isnan(ts))
        missing_end = ends[np.isnan(self.dec.ts[ends])]
        if len(missing) or len(missing_end):
            j = int(src[missing[0]]) if len(missing) else int(missing_end[0])
            raise CorruptProfileError(
                self.path, f"traceEvents[{j}] (ph {self.dec.ph_text.value(j)!r}) has no 'ts'"
            )
        neg = np.flatnonzero(dur < 0)
        if len(neg):
            j = int(src[neg[0]])
            raise CorruptProfileError(
                self.path, f"traceEvents[{j}].dur is negative ({dur[neg[0]]})"
            )
        if ts.min() >= _NS_TS_THRESHOLD and ts.max() <= _MAX_ABS_TS_US * 1000:
            self.warnings.append(
                f"every ts is at least {ts.min():.3g}, which as microseconds (the Chrome trace "
                f"unit) is after the year 5000: read ts and dur as epoch nanoseconds"
            )
            self.ts_scale = 1000.0
            ts, dur = ts / 1000.0, dur / 1000.0
        self._check_range(src, ts, dur)
        base_us = np.full(n_lines, np.inf)
        np.minimum.at(base_us, line_of, np.floor(ts))
        base_ns = base_us.astype(np.int64) * 1000 + kineto.base_time_ns(
            self.dec.top if self.kineto else None, self.path
        )
        offset_ps = np.round((ts - base_us[line_of]) * 1e6).astype(np.int64)
        return ts, dur, base_ns, offset_ps

    def _check_range(self, src, ts, dur) -> None:
        far = np.flatnonzero(np.abs(ts) > _MAX_ABS_TS_US)
        if len(far):
            k = far[np.argmax(np.abs(ts[far]))]
            raise CorruptProfileError(
                self.path,
                f"traceEvents[{src[k]}].ts is {ts[k]:.6g} µs, more than 292 years from 1970 "
                f"(beyond int64 nanoseconds)",
            )
        long = np.flatnonzero(dur > _MAX_SPAN_US)
        if len(long):
            k = long[0]
            raise CorruptProfileError(
                self.path,
                f"traceEvents[{src[k]}].dur is {dur[k]:.6g} µs, longer than the 106 days a "
                f"trace can span",
            )
        lo, hi = int(np.argmin(ts)), int(np.argmax(ts + dur))
        if ts[hi] + dur[hi] - ts[lo] > _MAX_SPAN_US:
            raise CorruptProfileError(
                self.path,
                f"the events span {(ts[hi] + dur[hi] - ts[lo]) / 8.64e10:,.0f} days, from "
                f"traceEvents[{src[lo]}].ts = {ts[lo]:.6g} to traceEvents[{src[hi]}] ending at "
                f"{ts[hi] + dur[hi]:.6g} µs: more than the 106 days one trace can hold, so "
                f"some ts are wrong",
            )

    # -- flows --------------------------------------------------------------------------------
    def _links(self, src, line_of, ts_us, dur_us) -> Links:
        dec = self.dec
        parts = []
        self.correlated = (np.zeros(0, np.int64), np.zeros(0, np.int64))
        if self.kineto:
            runtime = dec.cat.isin(kineto.RUNTIME_CATS, src)
            links, owners, ids = kineto.correlation_links(
                self.args, src, runtime, self.on_stream, self.n
            )
            parts.append(links)
            self.correlated = (owners, ids)
        ph = dec.ph
        pts = np.flatnonzero(np.isin(ph, [PH_CODE["s"], PH_CODE["t"], PH_CODE["f"]]))
        if self.kineto and len(pts):
            pts = pts[~kineto.launch_flows(dec, pts)]
        if len(pts):
            parts.append(self._flow_links(pts, src, line_of, ts_us, dur_us))
        return Links.concat(parts) if parts else Links.empty()

    def _flow_links(self, pts, src, line_of, ts_us, dur_us) -> Links:
        dec = self.dec
        n_tids = len(self.tids) + 1
        pc, tc = self.pid_code[pts], self.tid_code[pts]
        keys = (pc * n_tids + tc) * 4 + THREAD
        lines = self._line_index(self.plane_of_pid[pc], keys)
        slices = np.flatnonzero(
            (self.timed.slot == THREAD) & ((dec.ph[src] == PH_CODE["X"]) | self.timed.pairs)
        )
        pt_ts = dec.ts[pts] / self.ts_scale
        next_slice = (dec.ph[pts] == PH_CODE["f"]) & ~dec.bp.isin(["e"], pts)
        has_line = lines >= 0
        bound = np.full(len(pts), -1, np.int64)
        b = bind_to_slices(
            lines[has_line],
            pt_ts[has_line],
            next_slice[has_line],
            line_of[slices],
            ts_us[slices],
            ts_us[slices] + dur_us[slices],
        )
        bound[has_line] = np.where(b >= 0, slices[np.maximum(b, 0)], -1)
        key = id_codes(dec.cat.codes[pts], dec.id.codes[pts])
        return flow_links(key, dec.ph[pts], pt_ts, bound, first_id=1)

    # -- stats --------------------------------------------------------------------------------
    def _stats(self, src, name_idx, links: Links) -> StatRows:
        """Args (re-owned to the output events), cat, ph, links, kernels and step markers."""
        args, n_out = self.args, len(src)
        out_of = np.full(self.n, -1, np.int64)
        out_of[src] = np.arange(n_out)
        pair = np.flatnonzero(self.timed.ends >= 0)
        out_of[self.timed.ends[pair]] = pair
        self._check_group_ids(args)
        owner = out_of[args.src] if len(args) else np.zeros(0, np.int64)
        keep = np.flatnonzero(owner >= 0)
        parts = [
            StatRows(
                owner[keep],
                categorical_from_codes(args.key_code[keep], args.keys),
                args.kind[keep],
                args.int_value[keep],
                args.float_value[keep],
                categorical_from_codes(args.str_code[keep], args.str_values),
            )
        ]
        has_cat = np.flatnonzero(self.cat_code[src] >= 0)
        parts.append(_str_stat("cat", has_cat, self.cat_code[src][has_cat], list(self.cats)))
        ph = self.dec.ph[src]
        odd = np.flatnonzero((ph != PH_CODE["X"]) & ~self.timed.pairs)
        if len(odd):
            c, u = pd.factorize(self.dec.ph_text.codes[src[odd]])
            parts.append(_str_stat("ph", odd, c, [self.dec.ph_text.values[k] for k in u]))
        if len(links.producer):
            parts.append(_int_stat("_p", links.producer, links.flow_id))
            parts.append(_int_stat("_pt", links.producer, links.flow_type))
            parts.append(_int_stat("_c", links.consumer, links.flow_id))
            parts.append(_int_stat("_ct", links.consumer, links.flow_type))
        owners, ids = self.correlated
        if len(owners):
            parts.append(_int_stat("correlation_id", owners, ids))
        if self.kineto:
            parts += self._kineto_stats(src, name_idx)
        return StatRows.concat(parts, [0] * len(parts))

    def _kineto_stats(self, src, name_idx) -> list[StatRows]:
        parts = []
        cat = self.dec.cat
        kernels = np.flatnonzero(cat.isin(kineto.KERNEL_CATS, src))
        if len(kernels):
            codes, strings = kineto.kernel_details(self.args, src, kernels, self.n, self.warnings)
            parts.append(_str_stat("kernel_details", kernels, codes, strings))
        steps = kineto.step_numbers(self._name_list)
        if steps:
            lut = np.full(len(self._name_list), -1, np.int64)
            lut[list(steps)] = list(steps.values())
            num = lut[name_idx]
            rows = np.flatnonzero(
                (num >= 0) & ~self.on_stream & ~cat.isin(kineto.ANNOTATION_CATS, src)
            )
            parts.append(_int_stat("step_num", rows, num[rows]))
            parts.append(_int_stat("_r", rows, np.ones(len(rows), np.int64)))
        return parts

    def _check_group_ids(self, args: ArgRows) -> None:
        """XProf's step groups are int32; a larger ``group_id`` would silently wrap."""
        rows = args.rows_of("group_id")
        vals = np.where(
            args.kind[rows] == _KIND["double"],
            args.float_value[rows],
            args.int_value[rows].astype(float),
        )
        strs = args.str_code[rows]
        if (strs >= 0).any():
            text = pd.to_numeric(
                pd.Series(np.array(args.str_values + [None], dtype=object)[strs]),
                errors="coerce",
            ).to_numpy(float)
            vals = np.where(strs >= 0, np.nan_to_num(text), vals)
        bad = np.flatnonzero((vals < -(2**31)) | (vals >= 2**31) | (args.kind[rows] == 1))
        if len(bad):
            r = rows[bad[0]]
            raise CorruptProfileError(
                self.path,
                f"traceEvents[{args.src[r]}].args.group_id is {vals[bad[0]]:.0f}, beyond the "
                f"int32 step-group ids TensorFlow writes",
            )

    def _warn(self, timed, links: Links) -> None:
        w = self.warnings
        if timed.unclosed:
            w.append(
                f"{timed.unclosed} begin events (ph B/b/S) had no matching end and were not loaded"
            )
        if timed.unopened:
            w.append(
                f"{timed.unopened} end events (ph E/e/F) had no begin open before them in time "
                "(an end earlier than its begin?) and were ignored"
            )
        if links.unlinked:
            w.append(
                f"{links.unlinked} flow events (ph s/t/f) bound to no slice or had no partner, "
                f"so they link nothing"
            )
        for ph, count in timed.skipped.items():
            w.append(f"{count} events of phase {ph!r} were not loaded (not timeline events)")
        top = self.dec.top
        for key in top.unloaded if top is not None else ():
            w.append(
                f"the trace's top-level {key!r} (sampling profiles, stack frames "
                f"or ftrace text) is not loaded"
            )


def _last_of_each(keys: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per distinct key, in order of first appearance: the last of ``idx`` that has it."""
    uniq, first = np.unique(keys, return_index=True)
    _, from_end = np.unique(keys[::-1], return_index=True)
    order = np.argsort(first)
    return uniq[order], idx[len(keys) - 1 - from_end][order]


def _str_stat(name: str, owner: np.ndarray, codes: np.ndarray, values: list) -> StatRows:
    n = len(owner)
    return StatRows(
        np.asarray(owner, np.int64),
        categorical_from_codes(np.zeros(n, np.int64), [name]),
        np.full(n, _KIND["str"], np.int8),
        np.zeros(n, np.int64),
        np.full(n, np.nan),
        categorical_from_codes(np.asarray(codes, np.int64), values),
    )


def _int_stat(name: str, owner: np.ndarray, values: np.ndarray) -> StatRows:
    n = len(owner)
    return StatRows(
        np.asarray(owner, np.int64),
        categorical_from_codes(np.zeros(n, np.int64), [name]),
        np.full(n, _KIND["int"], np.int8),
        np.asarray(values, np.int64),
        np.full(n, np.nan),
        categorical_from_codes(np.full(n, -1, np.int64), []),
    )


def _plane_stat_rows(pairs: list[tuple[str, object]]) -> StatRows:
    """A plane's stats (owner 0) from (name, value) pairs."""
    if not pairs:
        return StatRows.empty()
    rows = []
    for k, v in pairs:
        if isinstance(v, int) and -_INT64 <= v < _INT64:
            rows.append((0, k, "int64_value", v))
        elif isinstance(v, float):
            rows.append((0, k, "double_value", v))
        else:
            rows.append((0, k, "str_value", str(v)))
    return StatRows.from_tuples(rows, None, "")


def _unnamed(field: str, value) -> str:
    """A process or thread that has no name: its id, or, where the id is empty (Kineto's
    "Record Window End" mark has ``"pid": ""``), that it has none ("pid ''" said nothing)."""
    if value == "":
        return "(no process id)" if field == "pid" else "(no thread id)"
    return f"{field} {value!r}"
