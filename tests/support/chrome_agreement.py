"""What the C Chrome decoder and the msgspec path make of one JSON text, and whether they agree.

The rule (readers/chrome/_chrome.c): the C decoder either gives exactly what the msgspec path gives
(the same :class:`Decoded`: codes, values, arg rows) or gives up, and the msgspec path then
decodes. ``outcomes(data)`` runs both on one text; ``differences`` lists where they differ
(exact: dtypes, value types, float bits). Used by tests/readers/test_chrome_decoder_agrees.py and
benchmarks/fuzz_chrome.py.
"""

from __future__ import annotations

import dataclasses
import struct

import numpy as np

from tfprof_widgets.readers.chrome import decode as chrome_decode
from tfprof_widgets.readers.chrome.decode import ArgRows, Codes, Decoded, TopLevel
from tfprof_widgets.readers.chrome.reader import read_chrome_trace

PATH = "trace.json"


def c_available() -> bool:
    return chrome_decode._chrome is not None


def decoded_by(data: bytes, use_c: bool):
    """The Decoded, the reason the C decoder gave up (a str, use_c only), or the error raised
    as (type name, message)."""
    try:
        if use_c:
            return chrome_decode.decode_c(data, PATH)
        return chrome_decode.decode(data, PATH, use_c=False)
    except Exception as exc:  # noqa: BLE001 - the outcome itself is what is compared
        return (type(exc).__name__, str(exc))


def outcomes(data: bytes) -> tuple[object, object]:
    """(C decoder's outcome, msgspec path's outcome) for one JSON text."""
    return decoded_by(data, True), decoded_by(data, False)


def tables_by(data: bytes, use_c: bool):
    """read_chrome_trace's HostTables (as plain values) or its error (type name, message)."""
    saved = chrome_decode.USE_C
    chrome_decode.USE_C = use_c
    try:
        return plain(read_chrome_trace(PATH, data, host="h"))
    except Exception as exc:  # noqa: BLE001
        return (type(exc).__name__, str(exc))
    finally:
        chrome_decode.USE_C = saved


def plain(x):
    """Dataclasses (HostTables, StatRows...) and categoricals as dicts, lists and arrays."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: plain(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, (list, tuple)):
        return type(x)(plain(v) for v in x)
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if hasattr(x, "codes") and hasattr(x, "categories"):  # a pandas Categorical
        return ("categorical", np.asarray(x.codes), list(x.categories))
    return x


def _same_scalar(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return struct.pack("<d", a) == struct.pack("<d", b)  # -0.0 and NaN too
    return a == b


def differences(a, b, path: str = "") -> list[str]:
    """Where two values differ, exactly (dtypes, types, float bits); [] when identical."""
    if isinstance(a, (Decoded, Codes, ArgRows, TopLevel)) or isinstance(b, (Decoded, Codes)):
        a, b = plain(a), plain(b)
    if type(a) is not type(b):
        return [f"{path}: {type(a).__name__} vs {type(b).__name__} ({a!r:.80} vs {b!r:.80})"]
    if isinstance(a, np.ndarray):
        if a.dtype != b.dtype or a.shape != b.shape:
            return [f"{path}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"]
        if a.dtype == object:
            same = all(map(_same_scalar, a.tolist(), b.tolist()))
        elif a.dtype.kind == "f":
            same = a.tobytes() == b.tobytes()
        else:
            same = np.array_equal(a, b)
        return [] if same else [f"{path}: arrays differ"]
    if isinstance(a, dict):
        if list(a) != list(b):
            return [f"{path}: keys {list(a)} vs {list(b)}"]
        return [d for k in a for d in differences(a[k], b[k], f"{path}.{k}")]
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return [f"{path}: length {len(a)} vs {len(b)}"]
        return [d for i, (p, q) in enumerate(zip(a, b)) for d in differences(p, q, f"{path}[{i}]")]
    return [] if _same_scalar(a, b) else [f"{path}: {a!r:.80} vs {b!r:.80}"]


def check(data: bytes) -> str:
    """'c' (the C decoder decoded it, identically, and it loads), 'error' (the C decoder
    decoded it, and loading raises the same error both ways) or 'gave up' (the msgspec path
    decoded it). AssertionError on any difference: in the Decoded, or in read_chrome_trace's
    tables or error with the C decoder on and off."""
    c, ref = outcomes(data)
    if not isinstance(c, str):
        diff = differences(c, ref)
        assert not diff, f"C decoder differs from the msgspec path on {data[:300]!r}: {diff[:5]}"
    tables = tables_by(data, True)
    diff = differences(tables, tables_by(data, False))
    assert not diff, f"read_chrome_trace differs with the C decoder on {data[:300]!r}: {diff[:5]}"
    if isinstance(c, str):
        return "gave up"
    return "error" if isinstance(tables, tuple) else "c"


# -- inputs that probe the two decoders' edges ------------------------------------------------

NUMBERS = (
    "0", "-0", "1", "-1", "7", "25738", "1623142624338553", "9007199254740993",
    "9223372036854775807", "9223372036854775808", "-9223372036854775808",
    "-9223372036854775809", "18446744073709551615", "18446744073709551616",
    "123456789012345678901234567890", "-123456789012345678901234567890", "1" + "0" * 400,
    "0.0", "-0.0", "1.5", "-2.25", "0.1", "0.30000000000000004", "1623142624338553.5",
    "1e5", "1E+2", "2.5e-3", "1.5E-7", "5e-324", "2.5e-324", "2e-324", "1e-400", "-1e-400",
    "1e308", "1.7976931348623157e308", "1.7976931348623159e308", "1e400", "-1e400",
    "0e999999", "0.000000000000000000000000000001", "123456789012345678901234567890.5",
    "9007199254740993.0", "4.35679392e-06", "1.0000000000000002", "3.14159265358979323846",
    "12345678901234567.8", "1e22", "1e23", "1e-22", "1e-23", "8.98846567431158e307",
)  # fmt: skip
BAD_NUMBERS = ("01", "1.", ".5", "+1", "-", "1e", "1e+", "--1", "NaN", "Infinity", "-Infinity",
               "0x10", "1_000", "1.5.5", "1e5.5")  # fmt: skip
STRING_PARTS = (
    "a", "name", "X", "B", "M", "s", "process_name", "thread_name", "stream 7", "1", "e",
    "kernel", "ac2g", "gpu_user_annotation", "cuda_runtime", "[1,1,1]", "null", " ", "é", "日本",
    "😀", "\x7f", "\uffff", r"\"", r"\\", r"\/", r"\b", r"\f", r"\n", r"\r", r"\t", r"\u0000",
    r"\u00e9", r"\u0041", r"\uD83D\uDE00", r"\ud83d\ude00", r"\uDBFF\uDFFF", r"\u20AC",
)  # fmt: skip
# Each makes a string invalid, or holds a lone surrogate (text.py's job, then the C decoder's).
BAD_STRING_PARTS = (
    rb"\ud800", rb"\udc00", rb"\ud800\u0041", rb"\ud800\ud800\udc00", rb"\x", rb"\u12",
    rb"\u12g4", rb"\U0041", b"\x01", b"\x1f", b"\xff", b"\xc0\x80", b"\xed\xa0\x80",
    b"\xf4\x90\x80\x80", b"\xe6\x97", b"\\",
)  # fmt: skip
WORDS = ("a", "b", "process_name", "thread_name", "kernel", "e", "ac2g", "async", "launch",
         "cuda_runtime", "gpu_user_annotation", "Kernel", "Runtime", "ProfilerStep#3")  # fmt: skip
ARG_NAMES = ("name", "labels", "device", "stream", "correlation", "grid", "block", "group_id",
             "op", "a", "b", r"p\u0069d")  # fmt: skip
IDS = (
    b"1",
    b"2",
    b"0",
    b"-1",
    b"25738",
    b"-0",
    b"9223372036854775807",
    b"9223372036854775808",
    b"18446744073709551615",
    b"3",
    b"3",
)
FIELDS = ("ph", "name", "cat", "pid", "tid", "ts", "dur", "id", "id2", "bp", "s", "args")
TOP_KEYS = (
    "deviceProperties",
    "baseTimeNanoseconds",
    "schemaVersion",
    "distributedInfo",
    "samples",
    "stackFrames",
    "systemTraceEvents",
    "displayTimeUnit",
    "otherData",
)
PHASES = ("X", "B", "E", "b", "e", "S", "T", "F", "i", "I", "C", "M", "s", "t", "f", "N", "q")
WHITESPACE = ("", "", "", " ", "\n", "\t", "\r\n  ", "    ")
BAD_WHITESPACE = ("\f", "\v", "\x00", "\u00a0", "\ufeff")


class Edges:
    """Random JSON texts built from the tricky parts above: mostly valid traces with odd
    spellings; in some, now and then a wrong type, a duplicate key or invalid JSON."""

    def __init__(self, rng) -> None:
        self.rng = rng
        # How often a part is made wrong: never in most traces, so most are valid.
        self.bad = rng.choice((0.0, 0.0, 0.0, 0.002, 0.01, 0.05))

    def odd(self) -> bool:
        return self.rng.random() < self.bad

    def ws(self) -> bytes:
        return self.rng.choice(BAD_WHITESPACE if self.odd() else WHITESPACE).encode()

    def number(self) -> bytes:
        r = self.rng
        pick = r.random()
        if pick < 0.5:
            return r.choice(BAD_NUMBERS if self.odd() else NUMBERS).encode()
        if pick < 0.7:
            return repr(r.uniform(-1e6, 1e16) if r.random() < 0.5 else r.random()).encode()
        if pick < 0.85:  # a random decimal literal: any digits, point and exponent
            digits = "".join(r.choice("0123456789") for _ in range(r.randint(1, 25)))
            digits = digits.lstrip("0") or "0"
            frac = "." + "".join(r.choice("0123456789") for _ in range(r.randint(1, 20)))
            exp = f"e{r.randint(-330, 330)}" if r.random() < 0.4 else ""
            sign = "-" if r.random() < 0.3 else ""
            return (sign + digits + frac * (r.random() < 0.7) + exp).encode()
        return str(r.randint(-(2**70), 2**70)).encode()

    def string(self, words=None) -> bytes:
        r = self.rng
        if words and r.random() < 0.6:
            return b'"' + r.choice(words).encode() + b'"'
        parts = []
        for _ in range(r.randint(0, 4)):
            if self.odd():
                parts.append(r.choice(BAD_STRING_PARTS))
            else:
                parts.append(r.choice(STRING_PARTS).encode())
        return b'"' + b"".join(parts) + b'"'

    def value(self, depth: int = 0) -> bytes:
        r = self.rng
        pick = r.random()
        if pick < 0.3:
            return self.string()
        if pick < 0.6:
            return self.number()
        if pick < 0.7:
            return r.choice((b"nul", b"True") if self.odd() else (b"true", b"false", b"null"))
        if depth > 3 or pick < 0.85:
            items = [self.value(depth + 1) for _ in range(r.randint(0, 3))]
            return self.container(b"[", b"]", items)
        return self.obj([(self.string(), self.value(depth + 1)) for _ in range(r.randint(0, 3))])

    def container(self, open_: bytes, close: bytes, items: list[bytes]) -> bytes:
        body = (b"," + self.ws()).join(items)
        if items and self.odd():
            body += b","  # a trailing comma
        return open_ + self.ws() + body + self.ws() + close

    def obj(self, members: list[tuple[bytes, bytes]]) -> bytes:
        return self.container(
            b"{", b"}", [k + self.ws() + b":" + self.ws() + v for k, v in members]
        )

    def field_value(self, field: str) -> bytes:
        r = self.rng
        if self.odd() or r.random() < 0.002:
            return self.value()  # any type: often a wrong one
        if r.random() < 0.02:
            return b"null"
        if field == "ph":
            return self.string(("X",) * len(PHASES) + PHASES)
        if field in ("name", "cat", "bp", "s"):
            return self.string(WORDS)
        if field in ("pid", "tid", "id"):
            if r.random() < 0.3:
                return self.string(("1", "2", "stream 7", "0x1", "a", ""))
            if self.odd():
                return r.choice((b"1.5", b"1e2", b"18446744073709551616", b"-9223372036854775809"))
            return r.choice(IDS) if r.random() < 0.1 else b"%d" % r.randint(0, 3)
        if field in ("ts", "dur"):
            if r.random() < 0.15:
                return self.number()  # often out of the range a trace can span
            spellings = ("%d", "%.1f", "%.3f", "%.17g", "%.6e", "%.2E")
            return (r.choice(spellings) % r.uniform(0, 1000)).encode()
        if field == "id2":
            value = self.string(("0x1", "2")) if r.random() < 0.5 else b"%d" % r.randint(0, 3)
            members = [(self.string(("local", "global")), value)]
            if self.odd():
                members.append((b'"a"', self.value()))
            return self.obj(members)
        names = r.sample(ARG_NAMES, r.randint(0, 5)) + [r.choice(ARG_NAMES)] * self.odd()
        return self.obj([(self.string((name,)), self.value()) for name in names])

    def event(self) -> bytes:
        r = self.rng
        fields = r.sample(FIELDS, r.randint(2, 8))
        fields += [f for f in ("ph", "ts", "pid", "tid") if f not in fields and r.random() < 0.97]
        members = []
        for f in fields:
            key = f.encode()
            if len(key) > 1 and r.random() < 0.02:  # the same key spelled with an escape
                key = key[:1] + rb"\u00" + format(key[1], "02x").encode() + key[2:]
            members.append((b'"' + key + b'"', self.field_value(f)))
        if r.random() < 0.05:
            members.append((self.string(("foo", "zz")), self.value()))
        if members and self.odd():
            members.append(r.choice(members))  # a duplicate key
        r.shuffle(members)
        return self.obj(members)

    def trace(self) -> bytes:
        r = self.rng
        events = [self.event() for _ in range(r.randint(0 if self.odd() else 1, 12))]
        if r.random() < 0.1:
            events.append(b"{}")
        if self.odd():
            events.append(self.value())
        body = self.container(b"[", b"]", events)
        if r.random() < 0.2:
            doc = body
        else:
            members = [(b'"traceEvents"', body)]
            for k in r.sample(TOP_KEYS, r.randint(0, 4)):
                members.append((b'"' + k.encode() + b'"', self.value()))
            if self.odd():
                members.append(r.choice(members))
            r.shuffle(members)
            doc = self.obj(members)
        prefix = b"\xef\xbb\xbf" if self.odd() else b""
        suffix = r.choice((b"x", b"}", b"]", b" 1")) if self.odd() else b""
        return prefix + self.ws() + doc + self.ws() + suffix


def mutate(rng, data: bytes) -> bytes:
    """A few byte-level edits of a JSON text: a byte replaced, a span cut or repeated, a
    token inserted (most make it invalid; some keep it valid with other content)."""
    data = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        if not data:
            break
        i = rng.randrange(len(data))
        pick = rng.random()
        if pick < 0.35:
            data[i] = rng.choice(b'"\\{}[],:0123456789.-eE tfnu \n\x00\xff')
        elif pick < 0.55:
            del data[i : i + rng.randint(1, 8)]
        elif pick < 0.7:
            j = min(len(data), i + rng.randint(1, 40))
            data[i:i] = data[i:j]
        else:
            data[i:i] = rng.choice(MUTATION_TOKENS)
    return bytes(data)


MUTATION_TOKENS = (b"null", b"1e400", b"-0", rb"\u0000", rb"\ud800", b'"x"', b"[]", b"{}", b",",
                   b'"args":{}', b'"ph":"X",', b"18446744073709551616")  # fmt: skip
