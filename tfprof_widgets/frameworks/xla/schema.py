"""The columns of the tables only XLA captures have, documented once (the conventions are
:mod:`tfprof_widgets.schema`'s, which re-exports every table here: look them up there).

The compiled programs' instructions (``Run.hlo_instructions``, from the HLO protos):
HLO_INSTRUCTIONS. XProf's HLO Stats (``run.hlo_stats``): HLO_STATS. Its Roofline Model
(``run.roofline_peaks``, ``run.roofline``): ROOFLINE_PEAKS, ROOFLINE. Its Op Profile
(``run.op_profile``): OP_PROFILE. Its memory viewer (``run.hlo_memory``,
``run.hlo_memory_peak``, ``run.hlo_heap_timeline``): HLO_MEMORY, HLO_MEMORY_PEAK,
HLO_HEAP_TIMELINE.
"""

from __future__ import annotations

__all__ = [
    "HLO_INSTRUCTIONS",
    "HLO_STATS",
    "ROOFLINE_PEAKS",
    "ROOFLINE",
    "OP_PROFILE",
    "HLO_MEMORY",
    "HLO_MEMORY_PEAK",
    "HLO_HEAP_TIMELINE",
]

HLO_INSTRUCTIONS: dict[str, tuple[str, str]] = {
    "host": ("category", "Host."),
    "program_id": ("int64", "XLA program id (the 'program_id' stat kernels and TPU ops carry)."),
    "module": ("category", "HLO module name ('jit_step')."),
    "computation": ("category", "HLO computation the instruction is in."),
    "is_entry": ("bool", "The computation is the module's entry computation."),
    "is_fusion_computation": ("bool", "The computation is the body of a fusion."),
    "instruction": ("str", "HLO instruction name (what a kernel's 'hlo_op' stat names)."),
    "instruction_id": ("int64", "HLO instruction id within its module."),
    "opcode": ("category", "HLO opcode ('fusion', 'custom-call', 'convolution', ...)."),
    "category": (
        "category",
        "XProf's HLO category: '<kind> fusion' for fusions, 'data formatting' for copies and "
        "transposes, 'non-fusion elementwise', else the opcode.",
    ),
    "fusion_kind": ("category", "Fusion kind ('kLoop', 'kInput', 'kOutput', 'kCustom'), or ''."),
    "custom_call_target": ("category", "Custom call target ('__cudnn$convForward'), or ''."),
    "called_computations": ("str", "Names of the computations it calls, ', '-joined."),
    "op_name": ("str", "Framework op it came from (metadata.op_name), or ''."),
    "op_type": ("category", "That op's type: the last component of op_name, or ''."),
    "source_file": ("category", "Python file of the op (metadata, else its stack frame), or ''."),
    "source_line": ("int64", "Line in source_file, 0 where unknown."),
    "shape": ("str", "Result shape as XLA prints it ('bf16[8,32,32,64]', tuples in parens)."),
    "dtype": ("category", "Element type of the result ('bf16'; the first element of a tuple)."),
    "result_bytes": ("int64", "Bytes of the result (every element of a tuple)."),
    "schedule_index": ("int64", "Position in its computation's schedule, -1 where unscheduled."),
}

HLO_STATS: dict[str, tuple[str, str]] = {
    "host": ("category", "Host."),
    "program_id": ("uint64", "XLA program id (a uint64 fingerprint on TPU, as XProf shows it)."),
    "module": ("category", "HLO module name."),
    "category": ("category", "XProf's HLO category ('loop fusion', 'custom-call', ...)."),
    "hlo_op_name": ("category", "HLO instruction name."),
    "tf_op_name": ("category", "Framework op as XProf writes it ('<op_name>:<op_type>'), or ''."),
    "occurrences": ("int64", "Device events of the instruction (kernels, memsets, copies)."),
    "total_time_us": ("float64", "Their total duration, µs."),
    "avg_time_us": ("float64", "total_time_us / occurrences."),
    "total_self_time_us": ("float64", "Self time (GPU: the same as total_time_us), µs."),
    "avg_self_time_us": ("float64", "total_self_time_us / occurrences."),
    "self_time_percent": ("float64", "Share of the device time (ops and IDLE), %."),
    "cumulative_self_time_percent": ("float64", "Running sum of self_time_percent."),
    "source_info": ("category", "'file:line' of the op in the user's program, or ''."),
    "shape": ("str", "Result shape."),
    "beyond_xprof": ("bool", "Includes kernels XProf leaves out (inside CUDA graphs)."),
    "model_gflops_per_s": (
        "float64",
        "Model FLOPs (GPU: XLA's cost model × occurrences; TPU: the ops' model_flops) / time "
        "(total time: a TPU op's costs include its nested ops'), GFLOP/s.",
    ),
    "normalized_gflops_per_s": (
        "float64",
        "The same with 8-bit (4-bit) work counted as 1/2 (1/4) of its FLOPs (XProf's normalized).",
    ),
    "memory_bw_gibps": ("float64", "Bytes read and written / total time, GiB/s."),
    "hbm_bw_gibps": ("float64", "HBM bytes / total time, GiB/s."),
    "operational_intensity": ("float64", "FLOPs / bytes accessed, FLOP/B."),
    "bound_by": (
        "category",
        "The resource used closest to its peak: 'Compute', 'HBM' (TPU also 'CMEM Read/Write', "
        "'VMEM Read/Write'); 'Unknown' where none is used.",
    ),
    "cmem_read_bw_gibps": ("float64", "TPU: CMEM bytes read / time, GiB/s (0 elsewhere)."),
    "cmem_write_bw_gibps": ("float64", "TPU: CMEM bytes written / time, GiB/s (0 elsewhere)."),
    # XProf's HLO stats show the rates as they come; an op whose rate is above its roof
    # says so here as on the roofline, so no table shows an impossible rate unmarked.
    "above_roof": (
        "bool",
        "A rate above its roof (the roofline's above_roof): the modelled FLOPs or bytes "
        "cannot have run in the measured time; roof_note says why.",
    ),
    "roof_note": ("category", "Why the op is above a roof (the roofline's roof_note); ''."),
}

ROOFLINE_PEAKS: dict[str, tuple[str, str]] = {
    "host": ("category", "Host."),
    "device": ("category", "Device plane ('/device:GPU:0')."),
    "device_type": (
        "category",
        "XProf's device type text ('Nvidia GPU (Hopper)', 'AMD GPU - gfx942').",
    ),
    "peak_gflops": (
        "float64",
        "Peak FLOP rate, GFLOP/s (GPU: FLOPs per SM per cycle × clock × SMs).",
    ),
    "peak_hbm_gibps": ("float64", "Peak HBM bandwidth, GiB/s."),
    "peak_shm_gibps": (
        "float64",
        "Peak shared memory / L1 (AMD: LDS; TPU: VMEM write) bandwidth, GiB/s.",
    ),
    "hbm_ridge_point": (
        "float64",
        "Peak FLOP/s over peak HBM bytes/s: FLOP/B where the roofs meet.",
    ),
    "shm_ridge_point": ("float64", "The same for shared memory / L1, FLOP/B (0 where unknown)."),
}

ROOFLINE: dict[str, tuple[str, str]] = {
    "host": ("category", "Host."),
    "program_id": ("uint64", "XLA program id (a uint64 fingerprint on TPU, as XProf shows it)."),
    "category": ("category", "XProf's HLO category."),
    "hlo_op_name": ("category", "HLO instruction name."),
    "tf_op_name": ("category", "Framework op as XProf writes it ('<op_name>:<op_type>'), or ''."),
    "occurrences": ("int64", "Device events of the instruction."),
    "total_self_time_us": ("float64", "Their self time, µs."),
    "flops": (
        "float64",
        "FLOPs of all occurrences (XLA's cost model × occurrences, as XProf adds them).",
    ),
    "bytes_accessed": ("float64", "Bytes read and written by all occurrences."),
    "hbm_bytes": ("float64", "Of those, the bytes XLA counts as HBM traffic."),
    "model_gflops_per_s": ("float64", "flops / self time, GFLOP/s (XProf's model FLOP rate)."),
    "normalized_gflops_per_s": (
        "float64",
        "8-bit (4-bit) FLOPs counted 1/2 (1/4): XProf's normalized rate.",
    ),
    "memory_bw_gibps": ("float64", "bytes_accessed / self time, GiB/s."),
    "hbm_bw_gibps": ("float64", "hbm_bytes / self time, GiB/s."),
    "operational_intensity": ("float64", "flops / bytes_accessed, FLOP/B."),
    "hbm_operational_intensity": ("float64", "flops / hbm_bytes, FLOP/B."),
    "bottleneck_operational_intensity": (
        "float64",
        "The intensity that bounds the op: HBM's below the HBM ridge point, else the overall one.",
    ),
    "bound_by": (
        "category",
        "The resource used closest to its peak: 'Compute', 'HBM' (TPU also 'CMEM Read/Write', "
        "'VMEM Read/Write'), or 'Unknown' (none used).",
    ),
    "optimal_gflops_per_s": ("float64", "The roof above the bottleneck intensity, GFLOP/s."),
    "roofline_efficiency": (
        "float64",
        "FLOP rate over that roof (HBM-bound: HBM bandwidth over its peak), at most 1 "
        "(above_roof says where the measured rate was above).",
    ),
    "compute_efficiency": (
        "float64",
        "model_gflops_per_s / peak FLOP rate (a fraction), at most 1 as XProf caps it.",
    ),
    "max_mem_bw_utilization": (
        "float64",
        "hbm_bw_gibps / peak HBM bandwidth (a fraction), at most 1 (above_roof: it was above).",
    ),
    "xprof_roofline_efficiency": (
        "float64",
        "XProf's roofline efficiency, not capped (above 1 where the op is above a roof).",
    ),
    "above_roof": (
        "bool",
        "A rate above its roof (FLOP rate over the peak, or bandwidth over a memory's peak): "
        "the modelled FLOPs or bytes cannot have run in the measured time.",
    ),
    "roof_note": (
        "category",
        "Why the op is above a roof, or why its bound is unknown (a custom call no cost model "
        "covers); '' otherwise.",
    ),
    "flops_modeled": (
        "bool",
        "Our FLOPs and bytes are XProf's (False: a cuBLAS GEMM call, which xprof 2.24 shows as 0).",
    ),
    "beyond_xprof": (
        "bool",
        "Includes kernels XProf leaves out (inside CUDA graphs), as in hlo_stats.",
    ),
    "source_info": ("category", "'file:line' of the op, or ''."),
    "cmem_read_bw_gibps": ("float64", "TPU: CMEM bytes read / time, GiB/s (0 elsewhere)."),
    "cmem_write_bw_gibps": ("float64", "TPU: CMEM bytes written / time, GiB/s (0 elsewhere)."),
    "vmem_read_bw_gibps": ("float64", "TPU: VMEM bytes read / time, GiB/s (0 elsewhere)."),
    "vmem_write_bw_gibps": ("float64", "TPU: VMEM bytes written / time, GiB/s (0 elsewhere)."),
}

OP_PROFILE: dict[str, tuple[str, str]] = {
    "path": (
        "str",
        "The node's place in the tree: 'program', 'program/category', 'program/category/op'.",
    ),
    "parent": ("str", "The parent node's path ('' for a program)."),
    "level": ("category", "'program', 'category' or 'op'."),
    "name": ("str", "Program ('jit_step(9941)'), HLO category, or HLO instruction name."),
    "host": ("category", "Host."),
    "program_id": ("uint64", "XLA program id (a uint64 fingerprint on TPU, as XProf shows it)."),
    "time_us": ("float64", "Self time of the node's ops, µs (XProf's rawTime)."),
    "time_percent": ("float64", "Share of the whole tree's time (IDLE excluded), %."),
    "occurrences": ("int64", "Device events (programs: 0, as XProf shows)."),
    "flops": ("float64", "FLOPs of the node's ops (XProf's rawFlops)."),
    "hbm_bytes": ("float64", "HBM bytes of the node's ops (rawBytesAccessedArray[0])."),
    "flop_utilization": (
        "float64",
        "flops / (the node's time × peak FLOP rate), at most 1: an op's equals the roofline's "
        "compute_efficiency.",
    ),
    "xprof_flop_utilization": (
        "float64",
        "flops / (the whole tree's time × peak FLOP rate): XProf's 'flops' utilisation, a "
        "share of the whole tree (children add up to their parent).",
    ),
    "hbm_bw_utilization": (
        "float64",
        "hbm_bytes / (the node's time × peak HBM bandwidth), at most 1.",
    ),
    "tf_op_name": ("category", "An op's framework op, '' for programs and categories."),
}


HLO_MEMORY: dict[str, tuple[str, str]] = {
    "host": ("category", "Host."),
    "program_id": ("int64", "XLA program id."),
    "module": ("category", "HLO module name ('jit_step')."),
    "buffer_id": ("int64", "Logical buffer id in the program's buffer assignment."),
    "instruction": ("str", "HLO instruction that defines the buffer."),
    "shape_index": ("str", "Element of the instruction's tuple result ('{1}'), '' for an array."),
    "opcode": ("category", "That instruction's opcode."),
    "op_name": ("str", "Framework op of the instruction (metadata.op_name), or ''."),
    "shape": ("str", "The buffer's shape as XLA prints it, without layout ('bf16[64,64]')."),
    "dtype": ("category", "Element type of the buffer ('bf16'; 'tuple' for a tuple's pointers)."),
    "size_bytes": ("int64", "Bytes XLA reserves for the buffer (padded to its layout)."),
    "unpadded_bytes": (
        "int64",
        "The shape's bytes in the default layout (a tuple: 8 per element).",
    ),
    "memory_space": ("int64", "The buffer's memory space (XLA colour; 0 is HBM / device memory)."),
    "allocation": ("int64", "Index of the buffer allocation holding it, -1 if none does."),
    "offset": ("int64", "Byte offset of the buffer in that allocation (0 if none)."),
    "allocation_kind": (
        "category",
        "xprof's group: 'Parameter', 'Output', 'Thread-local', 'Constant' (those live the "
        "whole program) or 'Temporary'; '' without an allocation.",
    ),
    "start_position": (
        "int64",
        "Heap simulator position (program order) of its ALLOC, -1 where the trace has none.",
    ),
    "end_position": (
        "int64",
        "Position of the FREE that released its memory (the last position if never), -1 "
        "where the trace has no ALLOC of it.",
    ),
    "live_at_peak": ("bool", "xprof lists it among the buffers live at the program's peak."),
}


HLO_MEMORY_PEAK: dict[str, tuple[str, str]] = {
    "host": ("category", "Host."),
    "program_id": ("int64", "XLA program id."),
    "module": ("category", "HLO module name."),
    "peak_heap_bytes": (
        "int64",
        "Most bytes live at once in memory space 0: the simulated heap's peak plus every "
        "allocation live the whole program (xprof's peakHeapMib, in bytes).",
    ),
    "peak_unpadded_heap_bytes": ("int64", "The same at that position, of unpadded sizes."),
    "peak_position": (
        "int64",
        "Heap simulator position (program order) where the heap first reached its peak.",
    ),
    "peak_instruction": ("str", "The instruction being simulated at that position."),
    "positions": ("int64", "Events of the heap simulator trace replayed (0 without one)."),
    "buffers_at_peak": (
        "int64",
        "Logical buffers xprof lists at the peak (hlo_memory.live_at_peak).",
    ),
    "small_bytes_at_peak": ("int64", "Bytes of those under 16 KiB (xprof's 'small' block)."),
    "indefinite_bytes": (
        "int64",
        "Allocations live the whole program (parameters, outputs, constants, thread-local).",
    ),
    "entry_parameters_bytes": ("int64", "Allocations of the entry computation's parameters."),
    "maybe_live_out_bytes": ("int64", "Allocations that may be the program's outputs."),
    "total_allocation_bytes": ("int64", "All buffer allocations of memory space 0."),
    "note": ("str", "Why the numbers are missing or partial ('' when complete)."),
}


HLO_HEAP_TIMELINE: dict[str, tuple[str, str]] = {
    "host": ("category", "Host."),
    "program_id": ("int64", "XLA program id."),
    "position": ("int64", "Heap simulator position: before trace event N; the last: after all."),
    "instruction": ("str", "The instruction the event belongs to ('' after the last)."),
    "heap_bytes": ("int64", "Bytes live then in memory space 0 (xprof's heapSizes, in bytes)."),
    "unpadded_heap_bytes": ("int64", "The same of unpadded sizes (xprof's unpaddedHeapSizes)."),
}
