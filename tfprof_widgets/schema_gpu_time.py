"""The columns of the GPU-time analyses (HolisticTraceAnalysis's temporal and kernel
breakdowns), part of :mod:`tfprof_widgets.schema` (which offers every name here too; kept apart
so that the schema stays one readable module). Data only: it imports nothing of the package.
"""

from __future__ import annotations

__all__ = ["KERNEL_BREAKDOWN", "TEMPORAL_BREAKDOWN", "TEMPORAL_BREAKDOWN_STEPS"]

# -- GPU time (HolisticTraceAnalysis's breakdowns) --------------------------------------------

TEMPORAL_BREAKDOWN: dict[str, tuple[str, str]] = {
    "host": ("category", "Host (a rank of a distributed job)."),
    "device": ("category", "Device plane ('/device:GPU:0')."),
    "span_us": ("float64", "From the first device activity's start to the last one's end, µs."),
    "idle_us": ("float64", "Time in the span with no activity on the device, µs."),
    "compute_us": ("float64", "Time some computation kernel runs, µs."),
    "non_compute_us": (
        "float64",
        "Time only copies, memsets, collectives or other kernels run, µs.",
    ),
    "idle_percent": ("float64", "idle_us / span_us, %."),
    "compute_percent": ("float64", "compute_us / span_us, %."),
    "non_compute_percent": ("float64", "non_compute_us / span_us, %."),
}

# One row per (host, device, step), not columns of STEPS: STEPS is also the shape of xprof's
# tool-data steps and of XLA's TPU steps, and a host with several GPUs has one breakdown each.
TEMPORAL_BREAKDOWN_STEPS: dict[str, tuple[str, str]] = {
    "host": ("category", "Host (a rank of a distributed job)."),
    "device": ("category", "Device plane ('/device:GPU:0'); only devices with stream activity."),
    "step": ("Int64", "Step number, as in run.steps."),
    "start_us": ("float64", "Start of the step's window (run.steps' start_us), µs."),
    "window_us": ("float64", "The step's window: run.steps' step_time_us, µs."),
    "active_us": (
        "float64",
        "From the first to the last device activity inside the window (HTA's span on the "
        "trace cut to the window), µs; 0 when none.",
    ),
    "idle_us": ("float64", "Time in the window with no activity on the device, µs."),
    "compute_us": ("float64", "Time in the window some computation kernel runs, µs."),
    "non_compute_us": (
        "float64",
        "Time in the window only copies, memsets, collectives or other kernels run, µs.",
    ),
    "idle_percent": (
        "float64",
        "HTA's idle share: (active_us - compute_us - non_compute_us) / active_us, % "
        "(NaN without activity in the window).",
    ),
    "compute_percent": ("float64", "HTA's compute share: compute_us / active_us, %."),
    "non_compute_percent": ("float64", "HTA's non-compute share: non_compute_us / active_us, %."),
}

KERNEL_BREAKDOWN: dict[str, tuple[str, str]] = {
    "host": ("category", "Host (a rank of a distributed job)."),
    "device": ("category", "Device plane."),
    "kernel_type": (
        "str",
        "'COMPUTATION', 'COMMUNICATION', 'MEMORY', or the kinds running at once "
        "('COMPUTATION overlapping COMMUNICATION').",
    ),
    "time_us": ("float64", "Time exactly these kinds of kernels run, µs."),
    "percent": ("float64", "Share of the device's kernel time (all rows of the device), %."),
}
