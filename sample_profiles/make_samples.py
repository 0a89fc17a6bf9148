"""Make the bundled sample profiles with the real TensorFlow profiler (tensorflow-cpu 2.21).

Run from the repository root:  python sample_profiles/make_samples.py [NAME ...]

Each sample is a TensorBoard logdir under ``sample_profiles/<name>/`` holding
``plugins/profile/<run>/<host>.xplane.pb``. Each is made in its own Python process so that
profiler state never leaks from one to the next. Existing samples are replaced only after the
new capture succeeded (written to a temporary directory first).

Samples:
  keras_fit      Keras ``Model.fit`` with the TensorBoard callback, ``profile_batch='3,6'``.
  custom_loop    A custom training loop with ``tf.profiler.experimental.Trace('train',
                 step_num=..., _r=1)`` step markers, host tracer level 3 and the Python tracer.
                 TF 2.21's ``start()`` ignores ProfilerOptions, so the capture is requested
                 through a profiler server in this process and xprof's capture client, which
                 does apply the options (see shared/reference/tf-2.21-capture-facts.md).
  input_bound    A loop whose ``tf.data`` pipeline has a deliberately slow, sequential
                 ``map`` and no prefetch (none injected either, no map+batch fusion): each
                 step waits for its batch, and the Map iterator is the bottleneck.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap

HERE = pathlib.Path(__file__).resolve().parent

COMMON = """
import os, sys, time, threading
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
tf.random.set_seed(0)
np.random.seed(0)
logdir = sys.argv[1]

def small_model():
    return tf.keras.Sequential([
        tf.keras.Input((28, 28, 1)),
        tf.keras.layers.Conv2D(8, 3, activation="relu"),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(32, activation="relu"),
        tf.keras.layers.Dense(10),
    ])

x = np.random.rand(512, 28, 28, 1).astype("float32")
y = np.random.randint(0, 10, size=(512,)).astype("int64")
"""

SCRIPTS = {
    "keras_fit": """
model = small_model()
model.compile(optimizer="adam",
              loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(32).prefetch(2)
cb = tf.keras.callbacks.TensorBoard(log_dir=logdir, profile_batch="3,6",
                                    histogram_freq=0, write_graph=False)
model.fit(ds, epochs=1, callbacks=[cb], verbose=0)
""",
    "custom_loop": """
from xprof.convert import _pywrap_profiler_plugin
port = int(sys.argv[2])
tf.profiler.experimental.server.start(port)
model = small_model()
opt = tf.keras.optimizers.Adam()
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(512, seed=0).map(
    lambda a, b: (tf.image.random_flip_left_right(a), b)).batch(32).prefetch(1)

@tf.function
def train_step(a, b):
    with tf.GradientTape() as tape:
        loss = loss_fn(b, model(a, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss

it = iter(ds.repeat())
for _ in range(3):  # trace and warm up before the capture starts
    train_step(*next(it))

opts = {"host_tracer_level": 3, "python_tracer_level": 1, "device_tracer_level": 1}
done = threading.Event()
duration_ms = int(sys.argv[3])
def capture():
    _pywrap_profiler_plugin.trace(f"127.0.0.1:{port}", logdir, "", True, duration_ms, 3, opts)
    done.set()
t = threading.Thread(target=capture)
t.start()
# Train until the capture is over, so that the capture window holds training steps only
# (no sleep or thread join of this script's own).
step = 0
while not done.is_set() and step < 4000:
    with tf.profiler.experimental.Trace("train", step_num=step, _r=1):
        a, b = next(it)
        train_step(a, b)
    step += 1
t.join(60)
assert done.is_set(), "capture did not finish"
""",
    "input_bound": """
model = small_model()
opt = tf.keras.optimizers.SGD(0.01)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

def slow_preprocess(a, b):
    # A deliberately expensive per-element map, run sequentially (no num_parallel_calls)
    # and without prefetch, so that every step waits for its batch.
    for _ in range(6):
        a = tf.signal.rfft2d(a[..., 0])
        a = tf.abs(tf.signal.irfft2d(a, fft_length=[28, 28]))[..., None]
    return a, b

ds = tf.data.Dataset.from_tensor_slices((x, y)).map(slow_preprocess).batch(32)
# Keep the map synchronous and visible: no automatically injected prefetch, no map+batch
# fusion and no automatic parallelization, so each step's GetNext runs the slow map itself
# (the input-bound case of the TF profiler guide) and the Map iterator is the bottleneck.
opts = tf.data.Options()
opts.experimental_optimization.inject_prefetch = False
opts.experimental_optimization.map_and_batch_fusion = False
opts.experimental_optimization.map_parallelization = False
ds = ds.with_options(opts)

@tf.function
def train_step(a, b):
    with tf.GradientTape() as tape:
        loss = loss_fn(b, model(a, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss

it = iter(ds.repeat())
train_step(*next(it))
tf.profiler.experimental.start(logdir)
for step in range(10):
    with tf.profiler.experimental.Trace("train", step_num=step, _r=1):
        a, b = next(it)
        train_step(a, b)
tf.profiler.experimental.stop()
""",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make(name: str, target: pathlib.Path | None = None, duration_ms: int = 150) -> pathlib.Path:
    """Make sample ``name`` into ``target`` (default: ``sample_profiles/<name>``), replacing
    it; ``duration_ms``: how long the custom_loop capture lasts (150 ms: ~100k events)."""
    code = COMMON + textwrap.dedent(SCRIPTS[name])
    with tempfile.TemporaryDirectory(prefix=f"tfprof_sample_{name}_") as tmp:
        logdir = pathlib.Path(tmp) / name
        logdir.mkdir()
        args = [sys.executable, "-c", code, str(logdir)]
        if name == "custom_loop":
            args += [str(free_port()), str(duration_ms)]
        subprocess.run(args, check=True, timeout=600, cwd=tmp)
        files = sorted(logdir.rglob("*.xplane.pb"))
        if not files:
            raise SystemExit(f"{name}: the profiler wrote no .xplane.pb under {logdir}")
        # Keep only the captures (Keras also writes event files for scalars).
        keep = pathlib.Path(tmp) / "keep"
        for f in files:
            dest = keep / f.relative_to(logdir)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, dest)
        target = target or HERE / name
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(keep, target)
    for f in sorted(target.rglob("*.xplane.pb")):
        print(f"{f}: {f.stat().st_size / 1e6:.2f} MB")
    return target


def main(names: list[str]) -> None:
    for name in names or list(SCRIPTS):
        if name not in SCRIPTS:
            raise SystemExit(f"unknown sample {name!r}; choose from {', '.join(SCRIPTS)}")
        make(name)


if __name__ == "__main__":
    os.chdir(HERE.parent)
    main(sys.argv[1:])
