"""The command line main job and the load progress bar."""

import os
import subprocess
import sys

from conftest import ROOT, SAMPLES

import tfprof_widgets as tw
from tfprof_widgets import cli


def test_summary_prints_shape_steps_and_heavy_events(capsys):
    run = tw.load(SAMPLES / "input_bound")
    assert cli.main(["summary", str(SAMPLES / "input_bound")]) == 0
    out = capsys.readouterr().out
    assert f"events: {len(run.events):,}" in out
    assert "steps: 10 (0..9)" in out
    assert "Top 10 event names by total duration" in out
    for line in run.lines["line"].astype(str):
        assert line in out
    heaviest = run.events.groupby("name", observed=True)["dur_us"].sum().idxmax()
    assert str(heaviest) in out


def test_runs_lists_runs(capsys):
    assert cli.main(["runs", str(SAMPLES)]) == 0
    out = capsys.readouterr().out
    # header + 5 runs (3 real TF samples, gpu_shaped and the JAX sample jax_cnn_cpu)
    assert out.count("\n") == 6


def test_bad_path_is_one_line_and_exit_2(capsys, tmp_path):
    assert cli.main(["summary", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"tfprof-widgets: {tmp_path / 'missing'}: no such file or directory"


def test_python_dash_m_entry_point():
    out = subprocess.run(
        [sys.executable, "-m", "tfprof_widgets", "summary", str(SAMPLES / "keras_fit")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "steps: 4 (2..5)" in out.stdout


def test_progress_bar_when_asked(capsys):
    tw.load(SAMPLES / "input_bound", progress=True)
    err = capsys.readouterr().err
    assert "loading" in err and "B" in err


def test_no_progress_bar_for_a_quick_load(capsys):
    tw.load(SAMPLES / "input_bound")
    assert "loading" not in capsys.readouterr().err


def test_bar_shown_from_the_start_for_a_big_capture(capsys, monkeypatch):
    """A capture whose size predicts a load over a second gets a bar without waiting."""
    from tfprof_widgets import loading as run_mod

    monkeypatch.setattr(run_mod, "_BYTES_PER_SECOND", 1e3)  # pretend loading is slow
    tw.load(SAMPLES / "input_bound")
    assert "loading" in capsys.readouterr().err


def test_report_never_overwrites(tmp_path, capsys):
    out = tmp_path / "r.html"
    out.write_text("my notes")
    assert cli.main(["report", str(SAMPLES / "keras_fit"), "-o", str(out)]) == 2
    assert out.read_text() == "my notes"
    assert "exists" in capsys.readouterr().err
    assert cli.main(["report", str(SAMPLES / "keras_fit"), "-o", str(out), "--force"]) == 0
    text = out.read_text()
    assert text.startswith("<!doctype html>") and "Overview" in text


def test_report_timeline_shows_the_slowest_step():
    from tfprof_widgets.report import slowest_step_window

    run = tw.load(SAMPLES / "input_bound")
    x0, x1 = slowest_step_window(run)
    slowest = run.steps.loc[run.steps["step_time_us"].idxmax()]
    assert x0 < slowest["start_us"] < slowest["start_us"] + slowest["step_time_us"] < x1


def test_readme_main_job(tmp_path):
    """The README's first command (after the install): the report of the bundled sample,
    with the analysis printed; it runs twice in a row thanks to --force."""
    import re

    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)\n```", readme, re.S)
    assert len(blocks) == 2  # exactly two set-up commands
    install, _, job = blocks[0].partition(" && ")
    assert install == "pip install -e ." and job.startswith("tfprof-widgets report ")
    argv = job.split()[1:]
    argv[1] = str(ROOT / argv[1])  # the sample, named relative to the repository root
    for _ in range(2):
        proc = subprocess.run(
            [sys.executable, "-m", "tfprof_widgets", *argv],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ},
        )
        assert proc.returncode == 0, proc.stderr
    assert "HIGHLY input-bound" in proc.stdout and "Map" in proc.stdout
    assert (tmp_path / argv[argv.index("-o") + 1]).stat().st_size > 1e6
