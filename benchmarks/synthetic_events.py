"""A Run.events-shaped frame of any size, made directly with numpy (for timeline tests and
benchmarks at 10 M events, where building an XSpace first would take minutes)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def synthetic_events(n: int, n_lines: int = 8, seed: int = 0) -> pd.DataFrame:
    """``n`` events on ``n_lines`` threads: each thread runs back-to-back parent events,
    each holding a few nested children, with durations spread over four orders of magnitude."""
    rng = np.random.default_rng(seed)
    per_line = n // n_lines
    parents = per_line // 4
    frames = []
    for li in range(n_lines):
        pdur = rng.lognormal(3.0, 1.2, parents)  # µs
        pstart = np.cumsum(pdur + rng.exponential(2.0, parents)) - pdur
        # three children per parent, inside it
        cstart = np.repeat(pstart, 3) + np.tile([0.05, 0.35, 0.65], parents) * np.repeat(pdur, 3)
        cdur = np.repeat(pdur, 3) * 0.25
        start = np.concatenate([pstart, cstart])
        dur = np.concatenate([pdur, cdur])
        names = np.concatenate([rng.integers(0, 50, parents), rng.integers(50, 400, 3 * parents)])
        order = np.argsort(start, kind="stable")
        frames.append(
            pd.DataFrame(
                {
                    "line": f"tf_Compute/{li}",
                    "start_us": start[order],
                    "dur_us": dur[order],
                    "name_code": names[order],
                }
            )
        )
    df = pd.concat(frames, ignore_index=True)
    df["start_us"] -= df["start_us"].min()
    cats = [f"op_{i}/MatMul:MatMul" for i in range(400)]
    return pd.DataFrame(
        {
            "host": pd.Categorical(["bench"] * len(df)),
            "plane": pd.Categorical(["/host:CPU"] * len(df)),
            "line": pd.Categorical(df["line"]),
            "name": pd.Categorical.from_codes(df["name_code"].to_numpy(), categories=cats),
            "start_us": df["start_us"].to_numpy(),
            "dur_us": df["dur_us"].to_numpy(),
            "end_us": (df["start_us"] + df["dur_us"]).to_numpy(),
            "occurrences": np.ones(len(df), np.int32),
        }
    )


def synthetic_lines(events: pd.DataFrame) -> tuple[np.ndarray, pd.DataFrame]:
    """The line rows and lines table of :func:`synthetic_events`' frame (what a Run has as
    ``event_line_rows`` and ``lines``): one host and plane, one line per thread, in order."""
    line = events["line"]
    lines = pd.DataFrame(
        {
            "host": pd.Categorical(["bench"] * len(line.cat.categories)),
            "plane": pd.Categorical(["/host:CPU"] * len(line.cat.categories)),
            "line": pd.Categorical(line.cat.categories, categories=line.cat.categories),
        }
    )
    return line.cat.codes.to_numpy().astype(np.int32), lines
