"""Make the TensorFlow-with-XLA capture the tests read, with TensorFlow's own profiler (CPU).

Run from the repository root (needs the ``capture`` extra: tensorflow-cpu):

    python scripts/make_tf_xla_capture.py

``tests/data/tf_xla_cpu/`` gets one capture of a small Keras model trained with
``model.fit(..., jit_compile=True)`` for six steps: Keras marks each step (``train`` with
``step_num`` and ``_r=1``), and XLA compiles the train function, so the ``/host:metadata``
plane holds its HLO programs while the ops run as TensorFlow ops named by their function
(``__inference_one_step_on_data_…``). That is what TF with XLA looks like where no GPU runs
it. Runs in its own process through ``tfprof_widgets.capture(backend="tf")``; the old capture
is replaced only after the new one succeeded.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
TARGET = ROOT / "tests" / "data" / "tf_xla_cpu"

PROGRAM = """
import os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import numpy as np
import tensorflow as tf
import tfprof_widgets as tw

tf.keras.utils.set_random_seed(0)
model = tf.keras.Sequential([
    tf.keras.Input((32, 32, 3)),
    tf.keras.layers.Conv2D(16, 3, activation="relu"),
    tf.keras.layers.GlobalAveragePooling2D(),
    tf.keras.layers.Dense(10),
])
model.compile("sgd", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              jit_compile=True)
x = np.random.default_rng(0).normal(size=(192, 32, 32, 3)).astype("float32")
y = np.random.default_rng(1).integers(0, 10, 192)
model.fit(x, y, batch_size=32, epochs=1, verbose=0)  # compiled before the capture
with tw.capture(sys.argv[1], backend="tf", load=False) as cap:
    model.fit(x, y, batch_size=32, epochs=1, verbose=0)
print(cap.run_dir)
"""


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="tf_xla_") as tmp:
        done = subprocess.run(
            [sys.executable, "-c", PROGRAM, str(pathlib.Path(tmp) / "logs")],
            check=True,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        run_dir = pathlib.Path(done.stdout.strip().splitlines()[-1])
        (xplane,) = run_dir.glob("*.xplane.pb")
        shutil.rmtree(TARGET, ignore_errors=True)
        TARGET.mkdir(parents=True)
        shutil.copy(xplane, TARGET / "keras_fit_jit.xplane.pb")
    print(f"wrote {TARGET}")


if __name__ == "__main__":
    main()
