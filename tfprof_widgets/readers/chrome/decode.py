"""Chrome trace JSON bytes → typed per-event columns, with no Python loop over events.

Two decoders give the same :class:`Decoded`, column for column:

* the C decoder (``_chrome.c``, when built): one pass over the bytes straight into columns,
  strings interned in C, Python strings built once per distinct value (its speed on the real
  Kineto traces: docs/speed.md). It accepts only what it is sure the msgspec path reads the
  same way, and gives up on anything else (invalid JSON, a wrong field type, a lone surrogate,
  a number beyond double range...), and then
* the msgspec path runs: the JSON is decoded into typed structs (``_Event``): every field is
  checked for its JSON type while decoding (a ``pid`` that is a list, a ``ts`` that is a
  string, ``args`` that are not an object...), and a wrong one is a
  :class:`CorruptProfileError` naming the event and the field. msgspec bounds the nesting
  depth itself (a ``RecursionError``, never a C stack overflow). Each event's ``args`` stay
  undecoded (``msgspec.Raw`` slices of the input) until :func:`flatten_args` turns all of
  them into long stat columns in bulk: one decode of all string values, one of all numbers.

So every malformed trace gets the msgspec path's error, whichever decoder is built.
``USE_C = False`` (or ``decode(..., use_c=False)``) forces the msgspec path (the tests compare
both).

On the real Kineto traces the C decoder is about ten times faster than the msgspec path,
which spends most of its time flattening the args and factorising the columns, not decoding.
For the msgspec path, typed structs with raw args were the fastest Python-level choice:
orjson and the stdlib build every arg value as a Python object (the figures of both paths and
of the alternatives: docs/speed.md, "Figures behind the code").
"""

from __future__ import annotations

import dataclasses
import itertools
import operator
import re
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from ...errors import CorruptProfileError, ProfileTooLargeError, WrongFormatError
from ...stat_columns import KIND_CODE
from ..text import json_without_lone_surrogates

try:
    from . import _chrome
except ImportError:  # no C compiler where this was installed: the msgspec path only
    _chrome = None

# Whether decode() tries the C decoder first (tests set it False to force the msgspec path).
USE_C = True

_Id = int | str | None

# Phases, as int8 codes (PH_CODE); PH_OTHER for phases we do not load, PH_NONE for no "ph".
PHASES = "X B E b e n S T p F i I C P N O D M s t f".split()
PH_CODE = {p: i for i, p in enumerate(PHASES)}
PH_OTHER = len(PHASES)
PH_NONE = PH_OTHER + 1

# Kinds of an arg value, told by its first byte.
_QUOTE, _BRACKET, _BRACE, _TRUE, _FALSE, _NULL = b'"[{tfn'


@dataclasses.dataclass
class Codes:
    """One field of every event, factorised: ``codes[i]`` is event i's index into ``values``
    (its distinct values in order of first appearance), -1 where the event has none (the
    field absent or null)."""

    codes: np.ndarray  # int32
    values: list

    def __len__(self) -> int:
        return len(self.codes)

    def code_of(self, value) -> int:
        """The code of a value (-1 when no event has it)."""
        lookup = self.__dict__.get("_lookup")
        if lookup is None:
            lookup = self.__dict__["_lookup"] = {v: i for i, v in enumerate(self.values)}
        return lookup.get(value, -1)

    def isin(self, values, idx: np.ndarray | None = None) -> np.ndarray:
        """Which events (of ``idx``, default all) have one of ``values``."""
        codes = self.codes if idx is None else self.codes[idx]
        wanted = [c for c in map(self.code_of, values) if c >= 0]
        return np.isin(codes, wanted) if wanted else np.zeros(len(codes), bool)

    def value(self, i: int):
        """Event i's value (None when it has none)."""
        c = int(self.codes[i])
        return self.values[c] if c >= 0 else None

    def with_none(self) -> tuple[np.ndarray, list]:
        """Codes (int64) where "none" is a value of its own, in order of first appearance:
        what ``pandas.factorize(values, use_na_sentinel=False)`` gives."""
        codes = self.codes.astype(np.int64)
        missing = np.flatnonzero(codes < 0)
        values = list(self.values)
        if len(missing):
            first = int(missing[0])
            # Codes number values by first appearance: those seen before it are 0..r-1.
            r = int(codes[:first].max()) + 1 if first else 0
            codes[codes >= r] += 1
            codes[missing] = r
            values.insert(r, None)
        return codes, values


@dataclasses.dataclass
class TopLevel:
    """What the JSON Object Format holds beside ``traceEvents`` that the reader uses: Kineto's
    keys as decoded (None where absent), and which of the keys it does not load are there."""

    deviceProperties: Any = None
    baseTimeNanoseconds: Any = None
    schemaVersion: Any = None
    distributedInfo: Any = None
    unloaded: tuple[str, ...] = ()  # of "samples", "stackFrames", "systemTraceEvents"


_TOP_KEYS = ("deviceProperties", "baseTimeNanoseconds", "schemaVersion", "distributedInfo")
_UNLOADED_KEYS = ("samples", "stackFrames", "systemTraceEvents")


@dataclasses.dataclass
class Decoded:
    """The trace's events as columns (one entry per element of ``traceEvents``)."""

    ph: np.ndarray  # int8 PH_CODE
    ph_text: Codes  # the "ph" strings as written
    name: Codes
    cat: Codes
    pid: Codes  # int or str values, as in the file ("1" and 1 are different ids)
    tid: Codes
    id: Codes  # "id" (int or str), or where there is none, "id2" as one text ("local:0x1")
    bp: Codes
    ts: np.ndarray  # float64 µs, NaN where absent
    dur: np.ndarray
    args: ArgRows  # every arg of every event, one typed row each
    top: TopLevel | None  # None for the JSON Array Format

    def __len__(self) -> int:
        return len(self.ph)

    def without_last(self) -> Decoded:
        """The events but the last (which has no args)."""
        cut = {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if f.name not in ("args", "top")
        }
        for k, v in cut.items():
            cut[k] = Codes(v.codes[:-1], v.values) if isinstance(v, Codes) else v[:-1]
        return Decoded(**cut, args=self.args, top=self.top)


def decode(data: bytes, path: str, use_c: bool | None = None) -> Decoded:
    """Decode a whole trace (the JSON text, gunzipped); every problem becomes a typed error
    naming the field. The C decoder first (``use_c``, default :data:`USE_C`), the msgspec
    path where it is not built or gives up."""
    if (USE_C if use_c is None else use_c) and _chrome is not None:
        got = decode_c(data, path)
        if isinstance(got, Decoded):
            return got
    # A lone surrogate (a name cut mid-character by a writer) would fail the decode.
    return _decode_msgspec(json_without_lone_surrogates(data), path)


def decode_c(data: bytes, path: str) -> Decoded | str:
    """The C decoder's :class:`Decoded`, or why it gave up (the msgspec path must decode).

    Lone surrogate escapes are replaced (as for the msgspec path) only when the decoder meets
    one: looking for them costs a scan of the whole text."""
    got = _decode_c(data, path)
    if isinstance(got, str) and got.startswith(getattr(_chrome, "LONG_STRING", "\0")):
        # Its decode would need several times its size (docs/speed.md), and no name or arg
        # of a real trace comes near it.
        raise ProfileTooLargeError(
            path,
            f"the JSON holds {got} (one name or arg); such a string is not loaded: is the "
            "file a trace?",
        )
    if isinstance(got, str) and got.startswith(_chrome.LONE_SURROGATE):
        fixed = json_without_lone_surrogates(data)
        if fixed is not data:
            got = _decode_c(fixed, path)
    return got


def _decode_c(data: bytes, path: str) -> Decoded | str:
    out = _chrome.decode(bytes(data))
    if isinstance(out, str):
        return out
    top = None
    if not out["array"]:
        try:  # small: decoded as msgspec decodes them inside _Trace (Any)
            top = TopLevel(
                **{k: msgspec.json.decode(v) for k, v in out["top"].items()},
                unloaded=tuple(out["unloaded"]),
            )
        except (msgspec.DecodeError, RecursionError, ValueError):
            return "a top-level value msgspec does not decode"
    ids = _c_event_ids(out)
    if ids is None:
        return "an id2 that is not an object of integers and strings"

    def codes(field: str) -> Codes:
        return Codes(np.frombuffer(out[field], np.int32), out[f"{field}_values"])

    ph_text = codes("ph")
    dec = Decoded(
        ph=_ph_codes(ph_text),
        ph_text=ph_text,
        name=codes("name"),
        cat=codes("cat"),
        pid=codes("pid"),
        tid=codes("tid"),
        id=ids,
        bp=codes("bp"),
        ts=np.frombuffer(out["ts"], np.float64),
        dur=np.frombuffer(out["dur"], np.float64),
        args=ArgRows(
            np.frombuffer(out["arg_src"], np.int64),
            np.frombuffer(out["arg_key"], np.int64),
            out["keys"],
            np.frombuffer(out["arg_kind"], np.int8),
            np.frombuffer(out["arg_int"], np.int64),
            np.frombuffer(out["arg_float"], np.float64),
            np.frombuffer(out["arg_str"], np.int64),
            out["texts"],
        ),
        top=top,
    )
    return _without_trailing_empty(dec, out["last_empty"], data, path)


_ID2 = msgspec.json.Decoder(dict[str, int | str])


def _id2_text(id2: dict) -> str:
    """An id2 object as one id: ``{"local": "0x1"}`` → ``local:0x1``."""
    return ";".join(f"{k}:{v}" for k, v in sorted(id2.items()))


def _c_event_ids(out: dict) -> Codes | None:
    """Each event's id, else its id2 as text (None: an id2 msgspec would refuse)."""
    ids = Codes(np.frombuffer(out["id"], np.int32), out["id_values"])
    texts = []
    for raw in out["id2_texts"]:  # one per distinct id2 object: rare
        try:
            texts.append(_id2_text(_ID2.decode(raw)))
        except (msgspec.DecodeError, RecursionError, ValueError):
            return None
    id2 = np.frombuffer(out["id2"], np.int32)
    use2 = (ids.codes < 0) & (id2 >= 0)
    if not use2.any():
        return ids
    # ids and id2 texts are one space of values ("local:1" may be both): renumbered together.
    values = ids.values + texts
    first: dict = {}
    canon = np.array([first.setdefault(v, i) for i, v in enumerate(values)], np.int64)
    raw = np.where(use2, len(ids.values) + id2, ids.codes).astype(np.int64)
    has = raw >= 0
    codes = np.full(len(raw), -1, np.int32)
    k, uniq = pd.factorize(canon[raw[has]])
    codes[has] = k
    return Codes(codes, [values[i] for i in uniq])


def _ph_codes(ph_text: Codes) -> np.ndarray:
    lut = np.array([PH_CODE.get(p, PH_OTHER) for p in ph_text.values] + [PH_NONE], np.int8)
    return lut[ph_text.codes]


def _without_trailing_empty(dec: Decoded, last_empty: bool, data: bytes, path: str) -> Decoded:
    """TF's trailing ``{}`` dropped; any other event without "ph" is an error."""
    missing = np.flatnonzero(dec.ph == PH_NONE)
    n = len(dec)
    if len(missing) and missing[-1] == n - 1 and last_empty and _ends_with_empty_object(data):
        # TF's trace-viewer writer (TF 2.2-2.10, and xprof's trace_viewer tool) ends
        # traceEvents with one empty object "to avoid dealing with no-trailing-comma".
        dec = dec.without_last()
        missing = missing[:-1]
    if len(missing):
        raise CorruptProfileError(path, f"traceEvents[{missing[0]}] has no 'ph' (event phase)")
    return dec


def _ends_with_empty_object(data: bytes) -> bool:
    tail = re.sub(rb"\s+", b"", data[-256:])
    return tail.endswith((b",{}]}", b",{}]", b"[{}]}", b"[{}]"))


# -- the msgspec path -------------------------------------------------------------------------


class _Event(msgspec.Struct, gc=False):
    """One trace event; the fields we read, each with the JSON types real writers use."""

    ph: str | None = None
    name: str | None = None
    cat: str | None = None
    pid: _Id = None
    tid: _Id = None
    ts: float | None = None
    dur: float | None = None
    id: _Id = None
    id2: dict[str, int | str] | None = None
    bp: str | None = None
    s: str | None = None
    args: dict[str, msgspec.Raw] | None = None


class _Trace(msgspec.Struct, gc=False):
    """The JSON Object Format: ``traceEvents`` plus what Kineto and catapult put beside it."""

    traceEvents: list[_Event] | None = None
    deviceProperties: Any = None
    baseTimeNanoseconds: Any = None
    schemaVersion: Any = None
    distributedInfo: Any = None
    samples: msgspec.Raw = msgspec.Raw(b"")
    stackFrames: msgspec.Raw = msgspec.Raw(b"")
    systemTraceEvents: msgspec.Raw = msgspec.Raw(b"")


_DECODER = msgspec.json.Decoder(_Trace | list[_Event])
_PATH = re.compile(r"^\$(?:\.traceEvents)?\[(\d+)\](.*)$")
_JSON_TYPES = {
    "str": "a string",
    "int": "an integer",
    "float": "a number with a fraction",
    "bool": "a boolean",
    "null": "null",
    "array": "an array",
    "object": "an object",
}
_PY_TYPES = {"array": "list", "object": "dict", "null": "NoneType"}


def _decode_msgspec(data: bytes, path: str) -> Decoded:
    """The msgspec path: typed structs, then the same columns as the C decoder's."""
    try:
        doc = _DECODER.decode(data)
    except RecursionError:
        raise CorruptProfileError(path, "the JSON is nested too deeply to be a trace") from None
    except msgspec.ValidationError as exc:
        # A wrong type can be met before a depth that no trace has: say the deeper problem.
        try:
            msgspec.json.decode(data)
        except RecursionError:
            raise CorruptProfileError(path, "the JSON is nested too deeply to be a trace") from None
        except (msgspec.DecodeError, UnicodeDecodeError):
            pass
        raise _validation_error(path, str(exc)) from None
    except msgspec.DecodeError as exc:
        msg = str(exc)
        m = re.search(r"\(byte (\d+)\)", msg)
        where = int(m.group(1)) if m else len(data)
        if msg == "Input data was truncated":
            msg = "the input ends before the JSON does (or an escape is cut)"
        raise CorruptProfileError(path, f"invalid JSON at byte {where}: {msg}") from None
    except UnicodeDecodeError as exc:
        raise CorruptProfileError(
            path, f"invalid JSON at byte {exc.start}: not UTF-8 text"
        ) from None
    if isinstance(doc, list):
        events, top = doc, None
    else:
        if doc.traceEvents is None:
            raise WrongFormatError(path, "JSON object without 'traceEvents': not a Chrome trace")
        events = doc.traceEvents
        top = TopLevel(
            *(getattr(doc, k) for k in _TOP_KEYS),
            unloaded=tuple(k for k in _UNLOADED_KEYS if len(getattr(doc, k))),
        )
    return _columns(events, top, data, path)


def _validation_error(path: str, msg: str) -> Exception:
    """msgspec's "Expected `int | str | null`, got `array` - at `$.traceEvents[3].pid`" as
    our error: which event, which field, what it is and what it should be."""
    text, _, at = msg.partition(" - at `")
    at = at.rstrip("`") or "$"
    m = re.match(r"Expected `([^`]*)`, got `([^`]*)`", text)
    if at == "$":
        got = m.group(2) if m else "value"
        return WrongFormatError(path, f"JSON {_PY_TYPES.get(got, got)}, not a Chrome trace")
    if at == "$.traceEvents":
        return WrongFormatError(path, "'traceEvents' is not a list")
    pm = _PATH.match(at)
    if not pm:
        return WrongFormatError(path, f"{at.lstrip('$.')}: {text}")
    j, field = pm.group(1), pm.group(2).lstrip(".")
    if not field and m:
        got = _PY_TYPES.get(m.group(2), m.group(2))
        return WrongFormatError(
            path, f"traceEvents[{j}] is a {got}, not an event object: not a Chrome trace"
        )
    if m:
        expected = " or ".join(
            _JSON_TYPES.get(t, t) for t in m.group(1).split(" | ") if t != "null"
        )
        text = f"is {_JSON_TYPES.get(m.group(2), m.group(2))}; expected {expected}"
    elif text == "Number out of range":
        text = "is a number out of range (beyond ±1.8e308)"
    return CorruptProfileError(path, f"traceEvents[{j}].{field} {text}")


def _codes(values: list) -> Codes:
    """A column of Python values (None for none) factorised by first appearance."""
    codes, uniques = pd.factorize(np.array(values + [None], dtype=object)[:-1])
    return Codes(codes.astype(np.int32), list(uniques))


def _columns(events: list[_Event], top: TopLevel | None, data: bytes, path: str) -> Decoded:
    """The msgspec structs as the C decoder's columns (a loop per field, in C via map)."""

    def column(field: str) -> list:
        return list(map(operator.attrgetter(field), events))

    ids = [
        _id2_text(e.id2) if e.id is None and e.id2 is not None else e.id
        for e in events  # rare fields: a plain loop is fine on the slow path
    ]
    ph_text = _codes(column("ph"))
    dec = Decoded(
        ph=_ph_codes(ph_text),
        ph_text=ph_text,
        name=_codes(column("name")),
        cat=_codes(column("cat")),
        pid=_codes(column("pid")),
        tid=_codes(column("tid")),
        id=_codes(ids),
        bp=_codes(column("bp")),
        ts=np.array(column("ts"), dtype=np.float64),
        dur=np.array(column("dur"), dtype=np.float64),
        args=None,
        top=top,
    )
    last_empty = bool(events) and all(
        getattr(events[-1], f) is None for f in _Event.__struct_fields__
    )
    dec = _without_trailing_empty(dec, last_empty, data, path)
    # After the check above, as before: a trace with both problems names the missing "ph".
    dec.args = flatten_args(column("args")[: len(dec)], path)
    return dec


# -- args -------------------------------------------------------------------------------------

_STRINGS = msgspec.json.Decoder(list[str])
_NUMBERS = msgspec.json.Decoder(list[int | float])
_BOOLS = msgspec.json.Decoder(list[bool])


@dataclasses.dataclass
class ArgRows:
    """Every arg of every event, one row each, typed (the long stats table's columns).

    ``src`` is the event's position in ``traceEvents``; ``kind`` an int8 code of
    :data:`tfprof_widgets.stat_columns.KINDS`. Strings, nested values (kept as their JSON
    text) and nulls (the text ``null``) share ``str_code`` into ``str_values``.
    """

    src: np.ndarray  # int64
    key_code: np.ndarray  # int64 into keys
    keys: list[str]
    kind: np.ndarray  # int8
    int_value: np.ndarray  # int64 (uint64 two's complement)
    float_value: np.ndarray  # float64
    str_code: np.ndarray  # int64 into str_values, -1 where not a string
    str_values: list

    def __len__(self) -> int:
        return len(self.src)

    def rows_of(self, key: str) -> np.ndarray:
        """Row positions of one arg name."""
        try:
            k = self.keys.index(key)
        except ValueError:
            return np.zeros(0, np.int64)
        return np.flatnonzero(self.key_code == k)

    def ints(self, key: str, n: int) -> tuple[np.ndarray, np.ndarray]:
        """An integer arg per event (``n`` events): values and where present (last wins)."""
        rows = self.rows_of(key)
        rows = rows[self.kind[rows] == KIND_CODE["int"]]
        values = np.zeros(n, np.int64)
        present = np.zeros(n, bool)
        values[self.src[rows]] = self.int_value[rows]
        present[self.src[rows]] = True
        return values, present

    def floats(self, key: str, n: int) -> tuple[np.ndarray, np.ndarray]:
        """A floating-point arg per event (``n`` events): values and where present."""
        rows = self.rows_of(key)
        rows = rows[self.kind[rows] == KIND_CODE["double"]]
        values = np.zeros(n, np.float64)
        present = np.zeros(n, bool)
        values[self.src[rows]] = self.float_value[rows]
        present[self.src[rows]] = True
        return values, present

    def text_codes(self, key: str, n: int) -> np.ndarray:
        """A string (or nested, as JSON text) arg per event (``n`` events): its code into
        ``str_values``, -1 where the event has none."""
        rows = self.rows_of(key)
        rows = rows[self.str_code[rows] >= 0]
        out = np.full(n, -1, np.int64)
        out[self.src[rows]] = self.str_code[rows]
        return out


def flatten_args(args: list, path: str) -> ArgRows:
    """All events' args as typed rows, in bulk: the per-value work is C-level iteration
    (itertools, ``map``, ``bytes.join``) and one typed msgspec decode per arg name.

    An arg name nearly always holds one kind of value in a trace (``Call stack`` strings,
    ``grid`` arrays...), so the values of each name are decoded together as that kind; a
    name whose values are mixed falls back to telling each value's kind by its first byte.
    """
    n = len(args)
    has = np.fromiter(map(bool, args), bool, n)
    dicts = list(itertools.compress(args, has))
    counts = np.fromiter(map(len, dicts), np.int64, len(dicts))
    src = np.repeat(np.flatnonzero(has), counts)
    m = len(src)
    out = _Flat(m)
    if not m:
        return ArgRows(
            src, np.zeros(0, np.int64), [], out.kind, out.ints, out.floats, out.str_code, []
        )
    keys = list(itertools.chain.from_iterable(dicts))
    vals = list(itertools.chain.from_iterable(map(dict.values, dicts)))
    key_code, key_uniques = pd.factorize(np.array(keys, dtype=object))
    order = np.argsort(key_code, kind="stable")
    vals = operator.itemgetter(*order.tolist())(vals) if m > 1 else tuple(vals)
    src, key_code = src[order], key_code[order]
    bounds = np.searchsorted(key_code, np.arange(len(key_uniques) + 1))
    for k in range(len(key_uniques)):
        a, b = int(bounds[k]), int(bounds[k + 1])
        if not _by_first_kind(vals[a:b], a, out):
            _mixed(vals[a:b], a, out, src, key_uniques[k], path)
    str_values = out.factorize_texts()
    return ArgRows(
        src,
        np.asarray(key_code, np.int64),
        list(key_uniques),
        out.kind,
        out.ints,
        out.floats,
        out.str_code,
        str_values,
    )


class _Flat:
    """The typed value columns being filled, and the text values found so far."""

    def __init__(self, m: int) -> None:
        self.kind = np.full(m, KIND_CODE["str"], np.int8)
        self.ints = np.zeros(m, np.int64)
        self.floats = np.full(m, np.nan)
        self.str_code = np.full(m, -1, np.int64)
        self.texts: list = []
        self.text_rows: list[np.ndarray] = []

    def add_texts(self, rows: np.ndarray, texts: list) -> None:
        self.text_rows.append(rows)
        self.texts += texts

    def add_numbers(self, rows: np.ndarray, nums: list) -> None:
        """Python numbers: floats as double, ints as int (uint or text past 64 bits)."""
        is_float = np.fromiter(map(isinstance, nums, itertools.repeat(float)), bool, len(nums))
        if is_float.any():
            fr = rows[is_float]
            self.kind[fr] = KIND_CODE["double"]
            self.floats[fr] = np.fromiter(itertools.compress(nums, is_float), np.float64, len(fr))
        ir = rows[~is_float]
        if not len(ir):
            return
        int_list = list(itertools.compress(nums, ~is_float))
        try:
            self.ints[ir] = np.fromiter(int_list, np.int64, len(ir))
            self.kind[ir] = KIND_CODE["int"]
        except OverflowError:  # rare: values beyond int64, each placed by hand
            big_rows, big_texts = [], []
            for r, v in zip(ir.tolist(), int_list):
                if -(2**63) <= v < 2**63:
                    self.ints[r], self.kind[r] = v, KIND_CODE["int"]
                elif 0 <= v < 2**64:
                    self.ints[r], self.kind[r] = np.uint64(v).view(np.int64), KIND_CODE["uint"]
                else:  # past 64 bits: kept as the text written
                    big_rows.append(r)
                    big_texts.append(str(v))
            if big_rows:
                self.add_texts(np.array(big_rows, np.int64), big_texts)

    def factorize_texts(self) -> list:
        if not self.texts:
            return []
        rows = np.concatenate(self.text_rows)
        codes, uniques = pd.factorize(np.array(self.texts, dtype=object))
        self.str_code[rows] = codes
        return list(uniques)


def _by_first_kind(seg: tuple, a: int, out: _Flat) -> bool:
    """Decode one arg name's values as the kind of its first value; False if they are not
    all of that kind."""
    rows = np.arange(a, a + len(seg))
    first = bytes(seg[0])[:1]
    try:
        if first == b'"':
            out.add_texts(rows, _STRINGS.decode(_array_of(seg)))
        elif first in b"-0123456789":
            out.add_numbers(rows, _NUMBERS.decode(_array_of(seg)))
        elif first in (b"[", b"{"):
            joined = b"\x00".join(seg)  # raw JSON never holds a NUL byte
            raw = np.frombuffer(joined, np.uint8)
            starts = np.concatenate([[0], np.flatnonzero(raw == 0) + 1])
            if not np.isin(raw[starts], (_BRACKET, _BRACE)).all():
                return False
            out.add_texts(rows, joined.decode().split("\x00"))
        elif first in (b"t", b"f"):
            bools = _BOOLS.decode(_array_of(seg))
            out.kind[rows] = KIND_CODE["int"]
            out.ints[rows] = np.fromiter(bools, bool, len(bools))
        else:
            return False
    except msgspec.ValidationError:
        return False
    return True


def _mixed(seg: tuple, a: int, out: _Flat, src, key: str, path: str) -> None:
    """Values of one arg name of several kinds: each kind told by its first byte."""
    m = len(seg)
    lens = np.fromiter(map(len, seg), np.int64, m)
    blob = np.frombuffer(b"".join(seg), np.uint8)
    first = blob[np.cumsum(lens) - lens]
    is_str = first == _QUOTE
    is_nested = (first == _BRACKET) | (first == _BRACE)
    is_bool = (first == _TRUE) | (first == _FALSE)
    is_null = first == _NULL
    is_num = ~(is_str | is_nested | is_bool | is_null)
    rows = np.arange(a, a + m)
    if is_str.any():
        out.add_texts(rows[is_str], _STRINGS.decode(_array_of(seg, is_str)))
    if is_nested.any():
        texts = b"\x00".join(itertools.compress(seg, is_nested)).decode().split("\x00")
        out.add_texts(rows[is_nested], texts)
    if is_null.any():
        out.add_texts(rows[is_null], ["null"] * int(is_null.sum()))
    if is_bool.any():
        out.kind[rows[is_bool]] = KIND_CODE["int"]
        out.ints[rows[is_bool]] = first[is_bool] == _TRUE
    if is_num.any():
        try:
            nums = _NUMBERS.decode(_array_of(seg, is_num))
        except msgspec.ValidationError as exc:  # a float beyond ±1.8e308
            r = rows[is_num][int(re.search(r"\[(\d+)\]", str(exc)).group(1))]
            raise CorruptProfileError(
                path,
                f"traceEvents[{src[r]}].args.{key} is a number out of range (beyond ±1.8e308)",
            ) from None
        out.add_numbers(rows[is_num], nums)


def _array_of(vals, mask: np.ndarray | None = None) -> bytes:
    """The JSON array of some raw values."""
    return b"[" + b",".join(vals if mask is None else itertools.compress(vals, mask)) + b"]"
