"""%%tfprof and tw.capture() with JAX's profiler: picked when TensorFlow is not imported,
written and moved into place like a TF capture, loaded as an XLA run with its HLO protos."""

import json
import subprocess
import sys

import pytest
from conftest import ROOT

pytest.importorskip("jax")


@pytest.fixture(scope="module")
def observed(tmp_path_factory):
    work = tmp_path_factory.mktemp("jax_capture")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "support" / "isolated_jax_capture.py"), str(work)],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(ROOT), "JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_auto_picks_jax_when_tensorflow_is_not_imported(observed):
    assert not observed["tf_imported"] and not observed["magic"]["tf_imported"]
    magic = observed["magic"]
    assert magic["framework"] == "xla"
    assert "/host:metadata" in magic["planes"] and magic["hlo_proto"]
    assert magic["under_logdir"]  # the default ./tfprof_logs/<timestamp>, as for TF


def test_jax_step_annotations_are_steps(observed):
    # jax.profiler.StepTraceAnnotation('train', step_num=i): XProf's marker (step_num, _r=1).
    assert observed["magic"]["steps"] == 4


def test_the_api_takes_a_backend(observed):
    assert observed["api"] == {"route": "jax", "run_dir_under": True}


def test_a_second_jax_session_is_a_clear_error_and_the_first_is_kept(observed):
    assert observed["busy"] == "ProfilerBusyError"
    assert observed["user_session_kept"] and observed["busy_left_nothing"]


def test_choose_backend():
    from tfprof_widgets.capturing.jax_runtime import choose_backend

    assert choose_backend("jax") == "jax" and choose_backend("tf") == "tf"
    assert choose_backend("auto") in ("tf", "jax")
    with pytest.raises(ValueError, match="backend must be one of"):
        choose_backend("torch")
