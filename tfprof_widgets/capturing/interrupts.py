"""Holding Ctrl-C back while a capture is being saved.

Stopping a capture is a short sequence (TensorFlow's ``stop()``, then moving its files into
place) that must not be cut in the middle: an interrupt between the steps would leave TF's
profiler on, or the capture in a hidden staging directory. :func:`sigint_deferred` makes a
SIGINT that arrives during such a section wait until the section is done, then delivers it.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

__all__ = ["FORCE_AFTER", "sigint_deferred"]

# Pressing Ctrl-C this many times within one section interrupts it anyway: a hung save
# (a dead network disk) must not make the kernel impossible to interrupt. What is left
# half-done is finished by the next capture (see Capture.start).
FORCE_AFTER = 3


class _Deferred:
    def __init__(self) -> None:
        self.received = 0
        self.frame = None

    def __call__(self, signum, frame) -> None:
        self.received += 1
        self.frame = frame
        if self.received >= FORCE_AFTER:
            raise KeyboardInterrupt


@contextlib.contextmanager
def sigint_deferred() -> Iterator[_Deferred]:
    """Within this block, Ctrl-C waits: the previous SIGINT handler gets it when the block
    ends (normally, a ``KeyboardInterrupt`` raised there).

    Only the main thread receives signals and may change handlers; elsewhere, and where the
    handler was set outside Python, this does nothing (the callers' steps are also safe to
    run again, so an interrupt that does get through is finished later).
    """
    state = _Deferred()
    if threading.current_thread() is not threading.main_thread():
        yield state
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is None:  # installed from C: we could not put it back
        yield state
        return
    signal.signal(signal.SIGINT, state)
    try:
        yield state
    finally:
        signal.signal(signal.SIGINT, previous)
    if state.received and state.received < FORCE_AFTER:
        if callable(previous):
            previous(signal.SIGINT, state.frame)
        elif previous == signal.SIG_DFL:
            signal.raise_signal(signal.SIGINT)
