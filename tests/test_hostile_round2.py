"""Hostile inputs, round two (issue 30): no crash, no hang, no file destroyed outside the
output. One test (or a few) per row of the issue; the memory peaks of the big cases are in
``benchmarks/bench_hostile.py --issue-only``, at sizes a unit test cannot afford."""

from __future__ import annotations

import json
import re

import pytest

import tfprof_widgets as tw


def chrome_file(tmp_path, events, name="c.trace.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"traceEvents": events}))
    return path


# -- row 5: JSON inside <script> ----------------------------------------------------------------
HTML_SEQUENCES = ("<!--", "-->", "<script>", "</script>", "</SCRIPT >", "<![CDATA[", "]]>",
                  "&amp;", "&#60;", "<b>", "\u2028", "\u2029", "<", ">", "&")  # fmt: skip


def test_every_html_sequence_in_every_name_stays_inside_its_script(tmp_path):
    """Op names ending in ``<!--<script>`` once put the page's parser in a state that swallowed
    the rest of the report: no script body may hold a raw ``<``, ``>`` or ``&`` of a name."""
    from tfprof_widgets import report

    names = [f"op{i}{s}" for i, s in enumerate(HTML_SEQUENCES)] + ["x" + "".join(HTML_SEQUENCES)]
    events = [
        {"ph": "X", "name": n, "ts": 10 * i, "dur": 5, "pid": 1, "tid": 1, "args": {n: n}}
        for i, n in enumerate(names * 2)
    ]
    run = tw.load(chrome_file(tmp_path, events), progress=False)
    page = report.report_html(run)
    bodies = re.findall(r"<script[^>]*>(.*?)</script>", page, flags=re.S | re.I)
    data = [b for b in bodies if "op0" in b]
    assert data, "the names are in the page's scripts"
    for body in data:
        for s in ("<!--", "<script", "</script", "-->", "]]>", "&amp;", "<b>"):
            assert s not in body.lower()
    assert len(re.findall(r"<section id=", page)) == len(report.report_views(run))
    decoded = [json.loads(b) for b in data if b.lstrip().startswith("{")]
    assert decoded and any(names[-1] in json.dumps(d, ensure_ascii=False) for d in decoded)


# -- row 18: control characters in a file name on the command line -----------------------------
def test_cli_shows_control_characters_of_a_file_name_escaped_on_one_line(tmp_path, capsys):
    from tfprof_widgets import cli

    path = tmp_path / "x\n\x1b[2J\x1b[31mFAKE OK\x1b[0m\r\u202e.xplane.pb"
    path.write_bytes(b"\x0a\x05damaged")
    assert cli.main(["summary", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("\n")
    assert not any(c in err[:-1] for c in "\x1b\r\n\u202e")
    assert "\\x1b[2J" in err and "\\r" in err and "\\n" in err
