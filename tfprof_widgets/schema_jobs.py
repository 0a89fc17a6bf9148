"""The columns of a distributed job's tables, part of :mod:`tfprof_widgets.schema` (which
offers every name here too; kept apart so that the schema stays one readable module). Data
only: it imports nothing of the package.
"""

from __future__ import annotations

__all__ = ["STRAGGLERS"]

# The straggler test of a distributed job (``run.stragglers``, analysis/stragglers.py): one
# row per (rank, step); a rank is a host, or each GPU of a host whose GPUs mark their own steps.
STRAGGLERS: dict[str, tuple[str, str]] = {
    "host": ("category", "Host (a rank of a distributed job)."),
    "rank": ("Int64", "The host's distributed rank (Kineto's distributedInfo); <NA> where none."),
    "device": (
        "category",
        "The GPU ('/device:GPU:4') where each GPU of the host marks its own steps, else ''.",
    ),
    "unit": ("str", "What the views call the rank: 'rank 3', the host, or 'host GPU:4'."),
    "step": ("Int64", "Step number, as in run.steps."),
    "step_time_us": ("float64", "The rank's step time (run.steps', or the GPU's marker), µs."),
    "median_us": ("float64", "Median step time of every rank in this step, µs."),
    "deviation_us": ("float64", "step_time_us - median_us, µs."),
    "others_median_us": ("float64", "Median step time of the other ranks in this step, µs."),
    "threshold_us": (
        "float64",
        "others_median_us + max(3 x 1.4826 x the others' MAD, 5 % of others_median_us): "
        "a step time above it is a straggler's, µs; NaN for a rank alone in its step.",
    ),
    "is_straggler": ("bool", "step_time_us > threshold_us."),
    "why": (
        "str",
        "The step-time category ('kernel_launch', 'device_compute', 'all_others'...) in which "
        "this rank exceeds the other ranks' median of it most; '' where it exceeds none.",
    ),
    "why_excess_us": ("float64", "That category's time minus the other ranks' median, µs."),
}
