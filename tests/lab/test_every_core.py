"""Work drawn on every core (reader_lab.every_core)."""

from __future__ import annotations

from reader_lab.every_core import map_on_every_core


def test_the_results_come_back_in_the_jobs_order_on_a_pool_and_in_this_process():
    jobs = list(range(30))
    want = [str(j) for j in jobs]
    assert map_on_every_core(str, jobs, workers=2) == want  # 30 > 8: a pool of two
    assert map_on_every_core(str, jobs, workers=1) == want
    assert map_on_every_core(str, jobs[:5], workers=2) == want[:5]  # too few for a pool
    assert map_on_every_core(str, []) == []
