"""The C Chrome decoder (readers/chrome/_chrome.c) and the msgspec path agree, or C gives up.

THE RULE: for any input, the C decoder either gives exactly the msgspec path's ``Decoded``
(codes, values, arg rows, float bits) or gives up, and then the msgspec path decodes and
raises its usual typed error. ``read_chrome_trace`` (tables, or error type and message) is
the same with the C decoder on and off. Checked on every real trace, on hand-written edge
cases of JSON and msgspec's typing, and on a seeded fuzz (tests/chrome_agreement.py).
"""

import gzip
import os
import pathlib
import random
import threading

import pytest
from chrome_agreement import (
    Edges,
    c_available,
    check,
    decoded_by,
    differences,
    mutate,
    outcomes,
    tables_by,
)
from chrome_confusion import confused_trace
from conftest import ROOT

from tfprof_widgets.readers.chrome import decode as chrome_decode

pytestmark = pytest.mark.skipif(not c_available(), reason="the C Chrome decoder is not built here")

# The real Chrome traces bundled here: every Kineto, catapult and TF1 timeline capture of the
# team's shared captures, gzipped where they were plain JSON (tests/data/NOTICE).
REAL = sorted((ROOT / "tests" / "data" / "chrome").glob("*.json*"))
CASES = int(os.environ.get("CHROME_AGREE_CASES", "500"))


def text_of(path: pathlib.Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


@pytest.mark.skipif(os.environ.get("CI") != "true", reason="only enforced in CI")
def test_c_decoder_built_in_ci():
    assert c_available(), "tfprof_widgets.readers.chrome._chrome did not build"


@pytest.mark.parametrize("path", REAL, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_real_traces_decode_in_c_identically(path):
    """Every real trace is decoded by the C decoder (it does not give up), into exactly the
    msgspec path's columns, and loads into identical tables."""
    data = text_of(path)
    c, ref = outcomes(data)
    assert not isinstance(c, str), f"the C decoder gave up: {c}"
    assert differences(c, ref) == []
    assert differences(tables_by(data, True), tables_by(data, False)) == []


def X(**fields) -> str:
    """One event's JSON with these raw field texts."""
    return "{" + ",".join(f'"{k}":{v}' for k, v in {"ph": '"X"', **fields}.items()) + "}"


def trace(*events: str, top: str = "") -> bytes:
    return ('{"traceEvents":[' + ",".join(events) + "]" + top + "}").encode(
        "utf-8", "surrogatepass"
    )


def args(text: str) -> str:
    return X(ts="1", pid="1", tid="1", args=text)


# (input, what the C decoder must do: "c" decode, "gave up", or "error": decode, both raise)
EDGE_CASES = {
    "ints for float fields": (trace(X(ts="1", dur="2", pid="1", tid="1")), "c"),
    "-0 is an int 0, -0.0 a float": (trace(X(ts="-0", dur="-0.0", pid="-0", tid="1")), "c"),
    "exponents": (trace(X(ts="1E+2", dur="2.5e-3", pid="1", tid="1")), "c"),
    "ts underflows to 0": (trace(X(ts="1e-400", pid="1", tid="1")), "c"),
    "ts 2**100, read as a float (then too far from 1970)": (
        trace(X(ts="1267650600228229401496703205376", pid=1)),
        "error",
    ),
    "ts 17 significant digits": (trace(X(ts="1623142624338553.25", pid=1, tid=1)), "c"),
    "ts beyond double": (trace(X(ts="1e400", pid="1")), "gave up"),
    "ts just beyond double": (trace(X(ts="1.7976931348623159e308")), "gave up"),
    "ts NaN literal": (trace(X(ts="NaN")), "gave up"),
    "ts Infinity literal": (trace(X(ts="-Infinity")), "gave up"),
    "leading zero": (trace(X(ts="01")), "gave up"),
    "point without digits": (trace(X(ts="1.")), "gave up"),
    "exponent without digits": (trace(X(ts="1e+")), "gave up"),
    "plus sign": (trace(X(ts="+1")), "gave up"),
    "ts a string": (trace(X(ts='"1"')), "gave up"),
    "ts a boolean": (trace(X(ts="true")), "gave up"),
    "pid 1.0": (trace(X(ts="1", pid="1.0")), "gave up"),
    "pid 1e2": (trace(X(ts="1", pid="1e2")), "gave up"),
    "pid true": (trace(X(ts="1", pid="true")), "gave up"),
    "pid 2**63: decoded, then refused": (trace(X(ts="1", pid="9223372036854775808")), "error"),
    "pid 2**64": (trace(X(ts="1", pid="18446744073709551616")), "gave up"),
    "pid -2**63": (trace(X(ts="1", pid="-9223372036854775808", tid="1")), "c"),
    "pid and tid 1 and '1' differ": (trace(X(ts="1", pid="1"), X(ts="2", pid='"1"')), "c"),
    "id 2**64-1 and id2": (
        trace(
            X(ph='"b"', ts="1", pid="1", id="18446744073709551615", cat='"c"', name='"n"'),
            X(ph='"e"', ts="2", pid="1", id2='{"local": "0x1", "global": 2}', cat='"c"'),
            X(ph='"e"', ts="3", pid="1", id='"global:2;local:0x1"', cat='"c"'),
            X(ts="4", pid="1", tid="1"),
        ),
        "c",
    ),
    "id2 with a float": (trace(X(ts="1", id2='{"local": 1.5}')), "gave up"),
    "id2 not an object": (trace(X(ts="1", id2="[1]")), "gave up"),
    "duplicate field": (trace('{"ph":"X","ts":1,"ts":2}'), "gave up"),
    "duplicate field, escaped": (trace('{"ph":"X","ts":1,"t\\u0073":2}'), "gave up"),
    "escaped field names": (trace('{"p\\u0068":"X","t\\u0073":1,"pid":1,"tid":1}'), "c"),
    "duplicate arg": (trace(args('{"a":1,"a":2}')), "gave up"),
    "duplicate top-level key": (
        b'{"traceEvents":[],"traceEvents":[{"ph":"X","ts":1}]}',
        "gave up",
    ),
    "unknown fields, any value": (
        trace(X(ts="1", pid="1", foo="1e400", bar='[1,{"a":null}]', baz='"\\ud83d\\ude00"')),
        "c",
    ),
    "invalid UTF-8 in an unknown field (msgspec skips it)": (
        trace(X(ts="1", pid="1", foo='"\xff"')).replace(b"\xc3\xbf", b"\xff"),
        "gave up",
    ),
    "trailing comma in traceEvents": (b'{"traceEvents":[{"ph":"X","ts":1},]}', "gave up"),
    "trailing comma in args": (trace(args('{"a":1,}')), "gave up"),
    "trailing characters": (trace(X(ts="1")) + b" x", "gave up"),
    "whitespace everywhere": (
        b' \r\n\t{ "traceEvents" : [ { "ph" : "X" , "ts" : 1 , "args" : { "a" : [ 1 , 2 ] } } ] }'
        b" \n",
        "c",
    ),
    "form feed is not whitespace": (b'{"traceEvents":[\x0c]}', "gave up"),
    "a BOM": (b"\xef\xbb\xbf" + trace(X(ts="1")), "gave up"),
    "escapes": (
        trace(X(ts="1", pid=1, name='"\\u0000\\/\\"\\\\\\b\\f\\n\\r\\t\\u00e9\\u20AC"')),
        "c",
    ),
    "surrogate pair": (
        trace(X(ts="1", pid=1, name='"\\ud83d\\ude00"', cat='"\\uD83D\\uDE00"')),
        "c",
    ),
    "lone surrogates, replaced first": (
        trace(X(ts="1", pid=1, name='"a\\ud800"', args='{"k\\udc00":"\\ud800\\ud800\\udc00"}')),
        "c",
    ),
    "an escaped backslash before u": (trace(X(ts="1", pid=1, name='"\\\\ud800"')), "c"),
    "a raw control character": (trace(X(ts="1", name='"a\x01"')), "gave up"),
    "a raw DEL and U+FFFF": (trace(X(ts="1", pid=1, name='"a\x7f\uffff"')), "c"),
    "overlong UTF-8": (
        trace(X(ts="1", name='"\xc0\x80"')).replace(b"\xc3\x80\xc2\x80", b"\xc0\x80"),
        "gave up",
    ),
    "invalid escape": (trace(X(ts="1", name='"\\x41"')), "gave up"),
    "short unicode escape": (trace(X(ts="1", name='"\\u12"')), "gave up"),
    "arg kinds": (
        trace(
            args(
                '{"s":"x","n":null,"t":true,"f":false,"i":-3,"d":1.5,"z":-0.0,"a":[1, 2],'
                '"o":{"k": "v"},"u":18446744073709551615,"b":18446744073709551616,'
                '"m":-9223372036854775809,"e":"\\u00e9","j":"[1, 2]","l":"null"}'
            )
        ),
        "c",
    ),  # fmt: skip
    "one arg name, values of every kind": (
        trace(
            args('{"v":"x"}'),
            args('{"v":1}'),
            args('{"v":[1]}'),
            args('{"v":null}'),
            args('{"v":true}'),
            args('{"v":2.5}'),
            args('{"v":123456789012345678901234}'),
            args('{"v":"null"}'),
            args('{"v":"[1]"}'),
            args('{"w":"x"}'),
        ),
        "c",
    ),  # fmt: skip
    "an arg beyond double": (trace(args('{"v":1e400}')), "gave up"),
    "a nested arg beyond double (kept as text)": (trace(args('{"v":[1e400]}')), "c"),
    "an int of 1001 digits": (trace(args('{"v":' + "1" * 1001 + "}")), "gave up"),
    "args not an object": (trace(X(ts="1", args="[1]")), "gave up"),
    "args null": (trace(X(ts="1", pid=1, args="null")), "c"),
    "an event that is not an object": (b'{"traceEvents":[1]}', "gave up"),
    "traceEvents null": (b'{"traceEvents":null}', "gave up"),
    "no traceEvents": (b'{"foo":[]}', "gave up"),
    "a string": (b'"x"', "gave up"),
    "empty": (b"", "gave up"),
    "the array format": (("[" + X(ts="1", pid="1", tid="1") + "]").encode(), "c"),
    "no events at all": (b'{"traceEvents":[]}', "error"),
    "TF's trailing {}": (trace(X(ts="1", pid="1"), "{}"), "c"),
    "TF's trailing { }, array format": (("[" + X(ts="1") + ", { } ]").encode(), "c"),
    "{} in the middle": (trace(X(ts="1"), "{}", X(ts="2")), "error"),
    "a last event with only nulls": (trace(X(ts="1"), '{"ph":null,"args":null}'), "error"),
    "a last event with empty args": (trace(X(ts="1"), '{"args":{}}'), "error"),
    "no ph": (trace('{"ts":1}'), "error"),
    "Kineto top level": (
        trace(
            X(ts="1", pid="1", tid='"7"', cat='"kernel"', args='{"device":0,"stream":7}'),
            top=',"schemaVersion":1,"deviceProperties":[{"id":0,"numSms":80,"x":[1e5]}],'
            '"baseTimeNanoseconds":1700000000000000000,"distributedInfo":{"rank":0},'
            '"samples":null,"systemTraceEvents":"x","otherData":{"a":[]}',
        ),
        "c",
    ),
    "top-level value beyond double": (trace(X(ts="1"), top=',"schemaVersion":1e400'), "gave up"),
    "top-level big int (then not an epoch time)": (
        trace(X(ts="1"), top=',"baseTimeNanoseconds":' + "9" * 30),
        "error",
    ),
    "nested 60 deep in args": (trace(args('{"a":' + "[" * 60 + "]" * 60 + "}")), "c"),
    "nested 70 deep in args": (trace(args('{"a":' + "[" * 70 + "]" * 70 + "}")), "gave up"),
    "deep unknown field": (trace(X(ts="1", foo="[" * 100 + "]" * 100)), "gave up"),
}


@pytest.mark.parametrize("name", list(EDGE_CASES))
def test_edge_cases(name):
    data, expected = EDGE_CASES[name]
    assert check(data) == expected


def test_edge_cases_mean_what_they_say():
    """A few values, to be sure the cases above test what their names claim."""
    dec = decoded_by(EDGE_CASES["-0 is an int 0, -0.0 a float"][0], True)
    assert str(dec.ts[0]) == "0.0" and str(dec.dur[0]) == "-0.0" and dec.pid.values == [0]
    dec = decoded_by(EDGE_CASES["arg kinds"][0], True)
    rows = dict(zip([dec.args.keys[k] for k in dec.args.key_code], range(len(dec.args))))
    text = {k: dec.args.str_values[dec.args.str_code[r]] for k, r in rows.items()}
    assert text["a"] == "[1, 2]" and text["n"] == "null" and text["b"] == "18446744073709551616"
    assert dec.args.kind[rows["u"]] == 1 and dec.args.int_value[rows["t"]] == 1
    dec = decoded_by(EDGE_CASES["id 2**64-1 and id2"][0], True)
    assert dec.id.values == [2**64 - 1, "global:2;local:0x1"]
    assert dec.id.codes.tolist() == [0, 1, 1, -1]
    dec = decoded_by(EDGE_CASES["lone surrogates, replaced first"][0], True)
    assert dec.name.values == ["a\ufffd"] and dec.args.keys == ["k\ufffd"]


def test_numbers_agree():
    """Float literals of every shape (random doubles, near-halfway decimals, long mantissas,
    extreme exponents) as ts, dur and args: the same double, bit for bit."""
    rng = random.Random(7)
    literals = []
    while len(literals) < 9000:
        pick = rng.random()
        if pick < 0.4:
            s = repr(rng.uniform(-1e16, 1e16) * 10.0 ** rng.randint(-300, 290))
        else:
            digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 40)))
            s = (
                (digits.lstrip("0") or "0")
                + "."
                + "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 30)))
            )
            s = (
                ("-" if pick < 0.6 else "")
                + s
                + (f"e{rng.randint(-340, 320)}" if pick > 0.7 else "")
            )
        if abs(float(s)) != float("inf"):
            literals.append(s)
    events = [
        f'{{"ph":"X","ts":{a},"dur":{b},"args":{{"v":{c}}}}}'
        for a, b, c in zip(literals[::3], literals[1::3], literals[2::3])
    ]
    c, ref = outcomes(("[" + ",".join(events) + "]").encode())
    assert not isinstance(c, str), c
    assert differences(c, ref) == []


def test_fuzz_agreement():
    """Seeded: generated edge-case traces, type-confused traces and byte mutations of real
    ones; every outcome agrees, and all three outcomes occur."""
    small = [text_of(ROOT / "tests" / "data" / "chrome" / "GPU_timeline_01.json.gz")]
    kinds = {"c": 0, "gave up": 0, "error": 0}
    for seed in range(CASES):
        rng = random.Random(seed)
        for data in (
            Edges(rng).trace(),
            confused_trace(rng),
            mutate(rng, rng.choice([*small, confused_trace(rng), Edges(rng).trace()])),
        ):
            kinds[check(data)] += 1
    assert min(kinds.values()) > CASES // 20, kinds


def test_every_prefix_of_a_trace():
    """A trace cut anywhere: the C decoder gives up or agrees (and reads nothing past the
    end: run under ASan/valgrind to see that)."""
    data = text_of(ROOT / "tests" / "data" / "chrome" / "GPU_timeline_01.json.gz")
    for n in range(0, len(data), 7):
        c, ref = outcomes(data[:n])
        assert isinstance(c, str) or differences(c, ref) == []


def test_the_switch_forces_the_msgspec_path(monkeypatch):
    data = trace(X(ts="1", pid="1", tid="1"))

    def refuse(_data):
        raise AssertionError("the C decoder ran")

    monkeypatch.setattr(chrome_decode._chrome, "decode", refuse)
    assert len(chrome_decode.decode(data, "p", use_c=False)) == 1
    monkeypatch.setattr(chrome_decode, "USE_C", False)
    assert len(chrome_decode.decode(data, "p")) == 1


def test_decoding_in_threads():
    """The decoder releases the GIL while scanning: decodes in threads agree."""
    data = text_of(ROOT / "tests" / "data" / "chrome" / "timesformer_h100.json.gz")
    ref = chrome_decode.decode_c(data, "p")
    got = [None] * 4

    def work(i):
        got[i] = chrome_decode.decode_c(data, "p")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for g in got:
        assert differences(g, ref) == []
