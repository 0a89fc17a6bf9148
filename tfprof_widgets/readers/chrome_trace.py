"""Read Chrome trace-event JSON (``*.trace.json`` / ``*.trace.json.gz``).

That is the legacy TF profiler's output, what TensorBoard's trace viewer and many other
tools export. Processes (``pid``) become planes, threads (``tid``) lines, and ``args`` stats.
Complete events (``ph: X``), begin/end pairs (``B``/``E``), async pairs (``b``/``e``),
instants (``i``/``I``/``n``) and counters (``C``) are kept; metadata (``M``) names planes and
lines. Flow events (``s``/``t``/``f``) carry no duration and are counted in the warnings.
"""

from __future__ import annotations

import json
import math
import zlib

import numpy as np

from ..errors import CorruptProfileError, NoEventsError, ProfileTooLargeError, WrongFormatError
from .columnar import HostTables, LineInfo, PlaneInfo, StatRows
from .formats import host_of
from .limits import MEMORY_PER_FILE_BYTE, available_memory_bytes, fmt_bytes
from .text import json_without_lone_surrogates

try:  # orjson is 3-5x faster on big traces; the stdlib decoder is the fallback
    import orjson as _orjson
except ImportError:  # pragma: no cover - depends on the environment
    _orjson = None

# Some orjson releases overflow the C stack (a segfault, not an error) on JSON nested 10**5
# deep; a trace is never nested more than a few levels, so deeper input goes to the stdlib.
_ORJSON_MAX_DEPTH = 512

_GZIP_MAGIC = b"\x1f\x8b"


def _gunzip_bounded(data: bytes, path: str, limit: int | None = None) -> bytes:
    """Inflate a gzip stream, refusing one that expands past what memory can decode.

    A few MB of gzip can expand to many GB (a "zip bomb", or a huge honest trace), so the
    stream is inflated in chunks and stopped as soon as it passes ``limit`` bytes (default:
    the JSON size whose decode fits in the memory available now).
    """
    if limit is None:
        avail = available_memory_bytes()
        limit = int(avail / MEMORY_PER_FILE_BYTE["chrome"]) if avail else 1 << 62
    out, total = [], 0
    try:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        pending = data
        while pending:
            chunk = inflater.decompress(pending, 1 << 24)
            total += len(chunk)
            if total > limit:
                raise ProfileTooLargeError(
                    path,
                    f"the gzip stream expands to more than {fmt_bytes(limit)} of JSON "
                    f"(from {fmt_bytes(len(data))}); decoding that would need more "
                    f"memory than is available",
                )
            out.append(chunk)
            pending = inflater.unconsumed_tail
            if inflater.eof:
                break
        if not inflater.eof:
            raise EOFError("compressed stream ended before the end-of-stream marker")
    except (EOFError, OSError, zlib.error) as exc:
        raise CorruptProfileError(
            path, f"the gzip stream is cut short or damaged ({exc})"
        ) from None
    return b"".join(out)


def _max_nesting(data: bytes, chunk: int = 1 << 24) -> int:
    """Upper bound of the JSON's nesting depth (brackets inside strings count too)."""
    arr = np.frombuffer(data, np.uint8)
    depth, deepest = 0, 0
    for i in range(0, len(arr), chunk):
        part = arr[i : i + chunk]
        step = ((part == 0x5B) | (part == 0x7B)).astype(np.int32) - (
            (part == 0x5D) | (part == 0x7D)
        ).astype(np.int32)
        if not step.any():
            continue
        run = np.cumsum(step, dtype=np.int64) + depth
        deepest = max(deepest, int(run.max()))
        depth = int(run[-1])
    return deepest


def decode_json(data: bytes, path: str):
    """Gunzip when needed and decode JSON; every failure becomes a typed error."""
    if not data:
        raise CorruptProfileError(path, "the file is empty (0 bytes)")
    if data[:2] == _GZIP_MAGIC:
        data = _gunzip_bounded(data, path)
    data = json_without_lone_surrogates(data)
    try:
        if _orjson is not None and _max_nesting(data) <= _ORJSON_MAX_DEPTH:
            return _orjson.loads(data)
        return json.loads(data)  # raises RecursionError on deep nesting, never overflows
    except RecursionError:
        raise CorruptProfileError(path, "the JSON is nested too deeply to be a trace") from None
    except (ValueError, UnicodeDecodeError) as exc:
        # orjson.JSONDecodeError and json.JSONDecodeError are both ValueErrors.
        where = f" at byte {exc.pos}" if getattr(exc, "pos", None) is not None else ""
        raise CorruptProfileError(path, f"invalid JSON{where}: {exc}") from None


def read_chrome_trace(path: str, data: bytes | None = None, host: str | None = None) -> HostTables:
    """Read one Chrome trace file into a :class:`HostTables`. Times are µs in the file."""
    if data is None:
        with open(path, "rb") as f:
            data = f.read()
    doc = decode_json(data, path)
    if isinstance(doc, dict):
        if "traceEvents" not in doc:
            raise WrongFormatError(path, "JSON object without 'traceEvents': not a Chrome trace")
        raw = doc["traceEvents"]
    elif isinstance(doc, list):
        raw = doc
    else:
        raise WrongFormatError(path, f"JSON {type(doc).__name__}, not a Chrome trace")
    if not isinstance(raw, list):
        raise WrongFormatError(path, "'traceEvents' is not a list")
    return _events_to_tables(raw, path, host or host_of(path))


def _events_to_tables(raw: list, path: str, host: str) -> HostTables:
    found = _TimedEvents(raw, path)
    if not found.timed:
        raise NoEventsError(path, "the trace has no timed events (only metadata or nothing)")
    cols = _Columns(found, path)
    # Each line's base is its first event's whole microsecond, so that offsets in ps stay
    # small even when ts are epoch microseconds.
    base_us = np.full(len(cols.lines), np.inf)
    np.minimum.at(base_us, cols.ev_line, np.floor(cols.ts_us))
    for li, ln in enumerate(cols.lines):
        ln.base_ns = int(base_us[li]) * 1000
        ln.timestamp_ns = ln.base_ns
    offset_ps = np.round((cols.ts_us - base_us[cols.ev_line]) * 1e6).astype(np.int64)
    warnings = []
    if found.n_flow:
        warnings.append(
            f"{found.n_flow} flow events (ph s/t/f) carry no duration and were not loaded"
        )
    if found.n_unclosed:
        warnings.append(
            f"{found.n_unclosed} begin events (ph B/b) had no matching end and were not loaded"
        )
    return HostTables(
        host=host,
        path=path,
        planes=cols.planes,
        lines=cols.lines,
        ev_line=cols.ev_line,
        ev_name=cols.ev_name,
        ev_offset_ps=offset_ps,
        ev_dur_ps=np.round(cols.dur_us * 1e6).astype(np.int64),
        ev_occ=np.ones(len(found.timed), np.int32),
        names=cols.names,
        event_stats=cols.stats,
        warnings=warnings,
    )


class _TimedEvents:
    """The trace's timeline events, each phase pairing resolved: complete events (X),
    begin/end pairs (B/E), async pairs (b/e), instants and counters; plus the process and
    thread names its metadata (M) gives, and how many flow or unclosed events were left."""

    def __init__(self, raw: list, path: str) -> None:
        self.process_names: dict[object, str] = {}
        self.thread_names: dict[tuple, str] = {}
        # Timed events as (pid, tid, name, ts_us, dur_us, args), planes/lines not known yet.
        self.timed: list[tuple] = []
        self.n_flow = 0
        self._open_b: dict[tuple, list] = {}
        self._open_async: dict[tuple, list] = {}
        for j, ev in enumerate(raw):
            if not isinstance(ev, dict):
                raise WrongFormatError(
                    path,
                    f"traceEvents[{j}] is a {type(ev).__name__}, not an "
                    f"event object: not a Chrome trace",
                )
            ph = ev.get("ph")
            if ph is None:
                raise CorruptProfileError(path, f"traceEvents[{j}] has no 'ph' (event phase)")
            if ph == "M":
                self._metadata(ev)
            elif ph in ("s", "t", "f"):
                self.n_flow += 1
            else:
                self._timed(ev, ph, j, path)
        self.n_unclosed = sum(len(v) for v in self._open_b.values()) + sum(
            len(v) for v in self._open_async.values()
        )

    def _metadata(self, ev: dict) -> None:
        args = ev.get("args") or {}
        if ev.get("name") == "process_name":
            self.process_names[ev.get("pid")] = str(args.get("name", ev.get("pid")))
        elif ev.get("name") == "thread_name":
            key = (ev.get("pid"), ev.get("tid"))
            self.thread_names[key] = str(args.get("name", ev.get("tid")))

    def _timed(self, ev: dict, ph: str, j: int, path: str) -> None:
        ts = _number(ev, "ts", j, path)
        pid, tid, name = ev.get("pid"), ev.get("tid"), str(ev.get("name", ""))
        args = ev.get("args")
        if ph == "X":
            dur = _number(ev, "dur", j, path) if "dur" in ev else 0.0
            if dur < 0:
                raise CorruptProfileError(path, f"traceEvents[{j}].dur is negative ({dur})")
            self.timed.append((pid, tid, name, ts, dur, args))
        elif ph == "B":
            self._open_b.setdefault((pid, tid), []).append((name, ts, args))
        elif ph == "E":
            stack = self._open_b.get((pid, tid))
            if stack:
                bname, bts, bargs = stack.pop()
                merged = {**(bargs or {}), **(args or {})} if args else bargs
                self.timed.append((pid, tid, bname, bts, max(ts - bts, 0.0), merged))
        elif ph in ("b", "e"):
            key = (pid, ev.get("cat"), ev.get("id"), name)
            if ph == "b":
                self._open_async.setdefault(key, []).append((tid, ts, args))
            elif self._open_async.get(key):
                btid, bts, bargs = self._open_async[key].pop()
                self.timed.append((pid, btid, name, bts, max(ts - bts, 0.0), bargs))
        elif ph in ("i", "I", "n", "C", "P"):
            self.timed.append((pid, tid, name, ts, 0.0, args))
        # Other phases (object snapshots, marks, ...) are not timeline events.


class _Columns:
    """Planes per pid, lines per (pid, tid), in order of first appearance; the events as
    arrays (line, name, ts, dur) and their args as stats."""

    def __init__(self, found: _TimedEvents, path: str) -> None:
        plane_of: dict[object, int] = {}
        line_of: dict[tuple, int] = {}
        self.planes: list[PlaneInfo] = []
        self.lines: list[LineInfo] = []
        self.names: list[str] = []
        name_of: dict[str, int] = {}
        n = len(found.timed)
        self.ev_line = np.empty(n, np.int32)
        self.ev_name = np.empty(n, np.int32)
        self.ts_us = np.empty(n, np.float64)
        self.dur_us = np.empty(n, np.float64)
        stat_rows: list[tuple] = []
        for i, (pid, tid, name, ts, dur, args) in enumerate(found.timed):
            li = line_of.get((pid, tid))
            if li is None:
                pi = plane_of.get(pid)
                if pi is None:
                    pi = plane_of[pid] = len(self.planes)
                    pname = found.process_names.get(pid, f"pid {pid}")
                    self.planes.append(PlaneInfo(pname, _int_or_zero(pid), StatRows.empty()))
                li = line_of[(pid, tid)] = len(self.lines)
                tname = found.thread_names.get((pid, tid), f"tid {tid}")
                self.lines.append(LineInfo(pi, tname, _int_or_zero(tid), tname, 0, 0, 0))
            ni = name_of.get(name)
            if ni is None:
                ni = name_of[name] = len(self.names)
                self.names.append(name)
            self.ev_line[i] = li
            self.ev_name[i] = ni
            self.ts_us[i] = ts
            self.dur_us[i] = dur
            if args:
                if not isinstance(args, dict):
                    args = {"args": args}
                for k, v in args.items():
                    stat_rows.append((i, str(k), *_arg_kind(v)))
        self.stats = StatRows.from_tuples(stat_rows, None, path)


def _number(ev: dict, key: str, j: int, path: str) -> float:
    if key not in ev:
        raise CorruptProfileError(path, f"traceEvents[{j}] (ph {ev.get('ph')!r}) has no {key!r}")
    v = ev[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        try:
            v = float(v)
        except (TypeError, ValueError):
            raise CorruptProfileError(
                path, f"traceEvents[{j}].{key} is not a number: {v!r}"
            ) from None
    if not math.isfinite(v):
        raise CorruptProfileError(path, f"traceEvents[{j}].{key} is {v}, not a finite number")
    return float(v)


def _int_or_zero(v) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return 0


def _arg_kind(v) -> tuple[str, object]:
    """Map a JSON arg value to an XStat wire kind so both readers share one stats table."""
    if isinstance(v, bool):
        return "int64_value", int(v)
    if isinstance(v, int):
        if -(2**63) <= v < 2**63:
            return "int64_value", v
        if 0 <= v < 2**64:
            return "uint64_value", v
        return "str_value", str(v)
    if isinstance(v, float):
        return "double_value", v
    if isinstance(v, str):
        return "str_value", v
    return "str_value", json.dumps(v, default=str)
