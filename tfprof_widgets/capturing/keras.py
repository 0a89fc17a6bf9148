"""Profiling ``model.fit`` with Keras's TensorBoard callback, and getting the Run back."""

from __future__ import annotations

import os

from .rundir import default_logdir, prepare_logdir
from .tf_runtime import import_tf

__all__ = ["keras_callback"]


def keras_callback(
    logdir: str | os.PathLike[str] | None = None,
    profile_batch: int | str | tuple[int, int] = (2, 4),
    **kwargs,
):
    """A ``tf.keras.callbacks.TensorBoard`` that profiles ``profile_batch`` and loads it.

    After ``fit`` returns, the callback's ``run`` attribute holds the
    :class:`~tfprof_widgets.Run` of the profiled batches (each batch is a step, from Keras's
    ``Profiled batch`` markers) and ``logdir`` the directory written::

        cb = tfprof_widgets.keras_callback()
        model.fit(ds, epochs=1, callbacks=[cb])
        cb.run.steps

    ``logdir`` defaults to a fresh ``./tfprof_logs/<timestamp>``. Other keyword arguments go
    to ``TensorBoard`` (e.g. ``histogram_freq``). Needs the ``tensorboard`` package, as
    Keras's callback does.
    """
    tf = import_tf(os.fspath(logdir) if logdir else "(new logdir)")
    target = prepare_logdir(os.fspath(logdir)) if logdir else default_logdir()

    class ProfilingTensorBoard(tf.keras.callbacks.TensorBoard):
        """TensorBoard callback that loads its own profile when training ends."""

        run = None

        def on_train_end(self, logs=None):
            super().on_train_end(logs)
            from ..loading import load

            self.run = load(target)

    cb = ProfilingTensorBoard(log_dir=target, profile_batch=profile_batch, **kwargs)
    cb.logdir = target
    return cb
