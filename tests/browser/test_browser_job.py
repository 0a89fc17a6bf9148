"""The job view in a real browser, network off: the report of two ranks of one NCCL job (HTA's
sampled traces, real) holds the job section, drawn with its plots (step time per rank,
overlap per rank, idle per rank) and its table, and a click on a rank's bar filters the table
to that rank; the page raises no error.

Needs Debian's Chromium (/usr/bin/chromium) and playwright (the dev extra); skipped where they
are missing (except in CI).
"""

from __future__ import annotations

from conftest import ROOT
from test_browser import draw_everything, offline_page, pytestmark  # noqa: F401
from test_browser_pytorch import SECTIONS

CHROME = ROOT / "tests" / "data" / "chrome"

ROWS = """() => [...document.querySelectorAll('#job [data-table="ranks"] .tft-body .tft-row')]
  .filter(r => r.offsetParent !== null).length"""


def test_report_of_two_ranks_draws_the_job_view(tmp_path, chromium):
    from tfprof_widgets import cli

    ranks = tmp_path / "ranks"
    ranks.mkdir()
    for r in (0, 1):
        (ranks / f"rank{r}.pt.trace.json.gz").write_bytes(
            (CHROME / f"hta_sampled_rank{r}.json.gz").read_bytes()
        )
    out = tmp_path / "report.html"
    assert cli.main(["report", str(ranks), "-o", str(out)]) == 0
    errors: list[str] = []
    browser, page = offline_page(chromium)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(out.as_uri())
    draw_everything(page)
    by_id = {s["id"]: s for s in page.evaluate(SECTIONS)}
    job = by_id["job"]
    assert job["views"] == 1 and job["undrawn"] == 0
    assert job["plots"] == 3 and job["empty_plots"] == 0
    # The ranks' table and the run's collectives (each rank's NCCL kernels).
    assert job["tables"] == 2 and job["empty_tables"] == 0
    assert "No straggler" in job["text"] and "rank 0" in job["text"] and "rank 1" in job["text"]
    assert page.evaluate(ROWS) == 4  # two ranks, two steps
    # A click on rank 1's bar filters the table to rank 1's steps.
    bar = page.locator("#job .js-plotly-plot").first.locator("g.point path").first
    bar.click(force=True)
    page.wait_for_function(f"() => ({ROWS})() === 2", timeout=10_000)
    browser.close()
    assert errors == []
