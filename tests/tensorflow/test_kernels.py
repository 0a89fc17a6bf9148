"""GPU kernel stats (run.kernels) against xprof's kernel_stats on a synthetic GPU capture."""

import numpy as np
import pytest
from conftest import SAMPLES
from golden_tables import data_table, golden, synthetic_gpu_path

import tfprof_widgets as tw
from tfprof_widgets import schema
from tfprof_widgets.analysis.kernels import parse_kernel_details


def test_kernels_match_xprof():
    ours = tw.load(synthetic_gpu_path()).kernels
    gold = data_table(golden("synthetic_gpu", "kernel_stats"))
    assert list(ours.columns) == list(schema.KERNELS)
    assert len(ours) == len(gold) == 3
    # Our column names, and xprof's where they differ (one name per role in ours).
    renamed = {
        "operation": "op_name",
        "occupancy_percent": "occupancy_pct",
        "total_time_us": "total_duration_us",
        "avg_time_us": "avg_duration_us",
        "min_time_us": "min_duration_us",
        "max_time_us": "max_duration_us",
    }
    for col in [
        "kernel_name",
        "block_dim",
        "grid_dim",
        "operation",
        "is_op_tensor_core_eligible",
        "is_kernel_using_tensor_core",
    ]:
        assert ours[col].tolist() == gold[renamed.get(col, col)].tolist(), col
    for col in [
        "registers_per_thread",
        "shmem_bytes",
        "occupancy_percent",
        "occurrences",
        "total_time_us",
        "avg_time_us",
        "min_time_us",
        "max_time_us",
    ]:
        g = gold[renamed.get(col, col)].astype(float)
        np.testing.assert_allclose(ours[col].astype(float), g, err_msg=col)


@pytest.mark.parametrize(
    "details,expected",
    [
        (
            "regs:128 static_shared:16384 dynamic_shared:256 grid:8,4,1 block:256,1,1 occ_pct:25.5",
            {
                "registers_per_thread": 128,
                "static_shmem": 16384,
                "dynamic_shmem": 256,
                "grid_dim": "8,4,1",
                "block_dim": "256,1,1",
                "occupancy_percent": 25.5,
            },
        ),
        (
            "regs:16 shm:512 grid:64,1,1 block:1024,1,1",  # the TF 2.4-era format
            {
                "registers_per_thread": 16,
                "static_shmem": 512,
                "dynamic_shmem": 0,
                "grid_dim": "64,1,1",
                "block_dim": "1024,1,1",
                "occupancy_percent": 0.0,
            },
        ),
        ("regs:x grid:1,2 block:garbage", {"registers_per_thread": 0, "grid_dim": "1,1,1"}),
    ],
)
def test_kernel_details_formats(details, expected):
    got = parse_kernel_details(details)
    for k, v in expected.items():
        assert got[k] == v


def test_cpu_runs_have_no_kernels():
    kernels = tw.load(SAMPLES / "input_bound").kernels
    assert len(kernels) == 0 and list(kernels.columns) == list(schema.KERNELS)


def test_gpu_copies_count_as_device_compute_as_in_xprof():
    """XProf's step breakdown types a device event by ParseTfOpFullname of its name, which
    knows 'MemcpyHToD' but not CUPTI's 'MemcpyH2D': real GPU copies fall through to device
    compute. We keep that rule so that the breakdown and the verdict are TensorBoard's."""
    steps = tw.load(synthetic_gpu_path()).steps
    assert (steps["device_compute_us"] == 120 + 15 + 40 + 20).all()
    assert (steps["host_to_device_us"] == 0).all()
