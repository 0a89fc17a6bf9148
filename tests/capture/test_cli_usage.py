"""What a newcomer reads from the command line: every command named in the usage and in the
'required' error, every argument helped, a run folder listed, no TensorBoard page section."""

from __future__ import annotations

import pytest
from conftest import SAMPLES

import tfprof_widgets as tw
from tfprof_widgets import cli

COMMANDS = ("summary", "report", "runs", "convert")


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_usage_and_the_required_error_name_every_command(capsys):
    code, out, _ = run_cli(capsys, "--help")
    usage = out.splitlines()[0]
    assert code == 0 and all(c in usage for c in COMMANDS), usage
    code, _, err = run_cli(capsys)
    assert code == 2 and all(c in err for c in COMMANDS), err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("command", COMMANDS)
def test_every_argument_has_help_and_path_names_the_formats(capsys, command):
    parser = cli._parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    for action in sub._actions:
        assert action.help, f"{command} {action.dest} has no help"
    path = next((a for a in sub._actions if a.dest == "path"), None)
    if path is not None:
        for fmt in (".xplane.pb", "Kineto", "tool-data", ".trace", ".tfprof", "RunMetadata"):
            assert fmt in path.help, (command, fmt)


def test_runs_on_a_run_directory_lists_that_run(capsys):
    run_dir = next((SAMPLES / "input_bound" / "plugins" / "profile").iterdir())
    listed = tw.list_runs(run_dir)
    assert listed["run"].tolist() == [run_dir.name]  # the run load() reads there
    assert tw.load(run_dir).name == run_dir.name
    code, out, _ = run_cli(capsys, "runs", str(run_dir))
    assert code == 0 and run_dir.name in out and "Empty DataFrame" not in out


def test_runs_where_there_is_none_says_so(capsys, tmp_path):
    code, out, err = run_cli(capsys, "runs", str(tmp_path))
    assert code == 2 and not out and "no capture found" in err
    assert "Empty DataFrame" not in out + err


def test_the_summary_points_at_our_views_not_at_a_page_section(capsys):
    code, out, _ = run_cli(capsys, "summary", str(SAMPLES / "input_bound"))
    assert code == 0
    assert "Section 3" not in out
    assert "Next: See where the host's input time goes in the input-pipeline view" in out
    # The figure itself stays XProf's text, for the comparison with xprof's output.
    assert "Section 3" in tw.load(SAMPLES / "input_bound").overview_summary.summary_next_step
