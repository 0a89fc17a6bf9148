"""Capturing profiles: in this process (:func:`capture`, the ``%%tfprof`` magic), from Keras
(:func:`keras_callback`), or from running programs' profiler servers (:func:`remote_capture`).

Nothing here is imported by the readers, the analyses or the views; TensorFlow is imported
only when a capture starts.
"""

from .keras import keras_callback
from .options import CaptureOptions
from .remote import remote_capture
from .session import Capture, active_capture, capture, stop_capture

__all__ = [
    "Capture",
    "CaptureOptions",
    "active_capture",
    "capture",
    "keras_callback",
    "remote_capture",
    "stop_capture",
]
