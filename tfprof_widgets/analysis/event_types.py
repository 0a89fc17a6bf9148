"""XProf's step event types and the step-time categories TensorBoard shows.

Every event that counts toward a step gets one of these types (``EventType`` in xprof's
``event_span.h``); where events overlap the higher number wins. The framework rules
(:mod:`.frameworks`) say which type an event of their own has; :mod:`.steps` does the rest.
"""

from __future__ import annotations

# XProf's EventType values: a higher number wins where events overlap.
UNKNOWN_TIME = 0
HOST_COMPUTE = 10
HOST_PREPROCESS = 20
HOST_POSTPROCESS = 30
HOST_BATCH_FORMATION = 40
HOST_RUNTIME = 50
HOST_COMPILE = 60
HOST_TO_HOST = 70
HOST_TO_DEVICE = 80
HOST_PREPARE = 90
DEVICE_COLLECTIVES = 100
HOST_WAIT_INPUT = 110
DEVICE_TO_DEVICE = 120
DEVICE_TO_HOST = 130
DEVICE_COMPUTE_32 = 140
DEVICE_COMPUTE_16 = 150
DEVICE_WAIT_DEVICE = 160
DEVICE_WAIT_HOST = 170
EVENT_TYPES = {
    UNKNOWN_TIME: "unknown",
    HOST_COMPUTE: "host_compute",
    HOST_PREPROCESS: "host_preprocess",
    HOST_POSTPROCESS: "host_postprocess",
    HOST_BATCH_FORMATION: "host_batch_formation",
    HOST_RUNTIME: "host_runtime",
    HOST_COMPILE: "host_compile",
    HOST_TO_HOST: "host_to_host",
    HOST_TO_DEVICE: "host_to_device",
    HOST_PREPARE: "host_prepare",
    DEVICE_COLLECTIVES: "device_collectives",
    HOST_WAIT_INPUT: "host_wait_input",
    DEVICE_TO_DEVICE: "device_to_device",
    DEVICE_TO_HOST: "device_to_host",
    DEVICE_COMPUTE_32: "device_compute_32",
    DEVICE_COMPUTE_16: "device_compute_16",
    DEVICE_WAIT_DEVICE: "device_wait_device",
    DEVICE_WAIT_HOST: "device_wait_host",
}

# The categories TensorBoard shows (step-time graph and overview), from the event types.
CATEGORIES = {
    "device_compute_us": (DEVICE_COMPUTE_16, DEVICE_COMPUTE_32),
    "device_to_device_us": (DEVICE_TO_DEVICE, DEVICE_WAIT_DEVICE),
    "device_collectives_us": (DEVICE_COLLECTIVES,),
    "host_compute_us": (HOST_COMPUTE,),
    "kernel_launch_us": (HOST_PREPARE,),
    "input_us": (HOST_WAIT_INPUT, HOST_TO_DEVICE, DEVICE_WAIT_HOST),
    "output_us": (DEVICE_TO_HOST,),
    "compile_us": (HOST_COMPILE,),
    "all_others_us": (UNKNOWN_TIME,),
}

# What TensorBoard calls each category.
CATEGORY_LABELS = {
    "device_compute_us": "Device compute",
    "device_to_device_us": "Device to device",
    "device_collectives_us": "Device collectives",
    "host_compute_us": "Host compute",
    "kernel_launch_us": "Kernel launch",
    "input_us": "Input (waiting for data)",
    "output_us": "Output",
    "compile_us": "Compilation",
    "all_others_us": "All others",
}
