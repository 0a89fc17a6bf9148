"""What TensorFlow logs while a capture starts and stops, kept instead of shown.

Starting and stopping the profiler makes TensorFlow's C++ code write INFO/WARNING lines
(``I0000 ... profiler_session.cc:117] Profiler session initializing.``) straight to file
descriptor 2, which Jupyter shows as red stderr boxes under the cell, and its Python code
log through the ``tensorflow`` logger. :class:`TFLog` takes both while a capture starts or
stops (never while the profiled code runs, so the user's own output and errors are shown as
always) and keeps the text, which the capture saves as ``capture.log`` in its run directory
(``run.capture_log`` when loaded).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import re
import sys
import tempfile
from collections.abc import Iterator

from ..loading import CAPTURE_LOG

__all__ = ["TFLog"]
# The loggers TensorFlow's Python code writes to.
_LOGGERS = ("tensorflow", "absl")
# An absl/TF C++ log line: severity, MMDD, time, thread, file:line].
# (Before absl::InitializeLog() the time is "00:00:<epoch seconds>".)
_ABSL_LINE = re.compile(r"([IWEF])\d{4} \d\d:\d\d:\d+\.\d+\s+\d+ [^\]\s]+:\d+\] ")
_PY_LINE = re.compile(r"(WARNING|ERROR|CRITICAL):[\w.]+:")


def _libc_fflush() -> None:
    """Flush C stdio buffers, so that what C code wrote goes where fd 2 pointed then."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None).fflush(None)


class _Records(logging.Handler):
    def __init__(self, sink: list[str]) -> None:
        super().__init__(logging.DEBUG)
        self.sink = sink
        self.setFormatter(logging.Formatter("%(levelname)s:%(name)s:%(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):
            self.sink.append(self.format(record) + "\n")


class TFLog:
    """The text TensorFlow logged during the sections run under :meth:`collect`."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    @property
    def text(self) -> str:
        return "".join(self.parts)

    @property
    def warnings(self) -> list[str]:
        """The WARNING, ERROR and FATAL lines (of TF's C++ code and its Python loggers)."""
        return [
            line
            for line in self.text.splitlines()
            if _PY_LINE.match(line) or (m := _ABSL_LINE.match(line)) and m.group(1) != "I"
        ]

    @contextlib.contextmanager
    def collect(self) -> Iterator[None]:
        """Take fd 2 and TF's Python loggers for the block, keeping what they receive.

        Other threads' writes to stderr during the block land in the log too (none of the
        profiled code runs then); nothing is lost.
        """
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()  # what was printed before is not TensorFlow's
        _libc_fflush()
        records: list[str] = []
        handler = _Records(records)
        saved_loggers = []
        for name in _LOGGERS:
            logger = logging.getLogger(name)
            saved_loggers.append((logger, logger.handlers[:], logger.propagate))
            logger.handlers = [handler]
            logger.propagate = False
        sink = None
        saved_fd = None
        try:
            sink = tempfile.TemporaryFile()
            saved_fd = os.dup(2)
            os.dup2(sink.fileno(), 2)
        except OSError:  # no fd 2 (or no temp dir): Python's loggers are still taken
            if saved_fd is not None:
                os.close(saved_fd)
            saved_fd = None
        try:
            yield
        finally:
            if saved_fd is not None:
                _libc_fflush()
                os.dup2(saved_fd, 2)
                os.close(saved_fd)
            for logger, handlers, propagate in saved_loggers:
                logger.handlers = handlers
                logger.propagate = propagate
            text = ""
            if sink is not None:
                with contextlib.suppress(OSError):
                    sink.seek(0)
                    text = sink.read().decode("utf-8", "replace")
                sink.close()
            self.parts.append(text + "".join(records))

    def show(self) -> None:
        """Write the text to stderr after all (when the capture failed, it may say why)."""
        if self.text.strip():
            with contextlib.suppress(Exception):
                sys.stderr.write(self.text)
                sys.stderr.flush()
            self.parts.clear()

    def save(self, run_dir: str) -> str | None:
        """Write the text as ``<run_dir>/capture.log`` (nothing when there is none)."""
        if not self.text.strip():
            return None
        path = os.path.join(run_dir, CAPTURE_LOG)
        with open(path, "x", encoding="utf-8", errors="replace") as f:
            f.write(self.text)
        return path
