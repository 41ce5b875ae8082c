"""straggler.sql judges a run against noise measured without the fault itself (issue 16).

1. A straggler inside the sample its noise is measured from widens that noise by itself (masking): the
   det_gpu_buckets of detection_eval's packet_drops+straggler 8 x 10 s / 3 min, development seed 115
   (`forensics simulate --scenario 'packet_drops+straggler' --nodes 8 --interval 10s --duration 180s --seed 115
   --clock-skew-ms 2000`, this repository's simulator; rounded), where node01 straggles for two buckets (+20.5%
   power, +42.6% memory busy) before the drops on node02 stall the job: its +20.5% stood 2.80 times the 8 hosts'
   scatter of 2-bucket run means (0.073) and 2.71 standard errors of its own bucket SD over the capture (0.107,
   which holds the two buckets); without the judged host and the run, 3.15 (0.065) and 4.3 (0.068).
2. Branch (c) (a host against its own baseline, 1 s sampling) takes that baseline from the host's computing
   buckets, never from an all-ranks spin-wait behind another fault: there every rank reads ~230 W and ~3%
   memory busy, so the host's usual offset is diluted toward 0 and its half-unit memory readings (+-16%)
   swamp the scatter the run is judged by.
"""
from __future__ import annotations

import datetime as dt

import numpy as np

from test_detect_straggler_resolution import _stragglers

T0 = dt.datetime(2026, 12, 3, 10, 0, tzinfo=dt.timezone.utc)

#: per host: (first 10 s bucket from 10:00:00, median sampling instant in the bucket s, rows of (util %, power W, SM clock MHz, memory busy % or None, samples)) 
S115 = {
    "node01": (0, 1.52, [(99.88, 533.6, 1956, 32.75, 24), (99.62, 599.1, 1956, 39.00, 8), (99.50, 611.4, 1956, 39.12, 8), (98.94, 532.4, 1956, 32.50, 16), (98.75, 526.0, 1956, 31.75, 8), (99.38, 542.0, 1956, 33.25, 8), (99.62, 448.4, 1956, 24.75, 16), (0.00, 106.6, 345, 0.00, 8), (99.75, 236.4, 1956, 3.50, 8), (0.00, 71.7, 345, 0.00, 16), (0.00, 74.6, 345, 0.00, 8), (0.00, 70.2, 345, 0.00, 8), (0.00, 72.8, 345, 0.00, 16), (0.00, 74.0, 345, 0.00, 8), (0.00, 71.6, 345, 0.00, 8), (0.00, 70.6, 345, 0.00, 16), (0.00, 72.8, 345, 0.00, 8), (0.00, 71.2, 345, 0.00, 8), (0.00, 72.2, 345, 0.00, 8)]),
    "node02": (-1, 1.18, [(99.75, 647.2, 1963, 42.00, 8), (99.62, 535.1, 1963, 32.50, 16), (99.38, 524.6, 1963, 31.88, 8), (99.75, 591.0, 1963, 38.00, 8), (99.75, 632.2, 1963, 40.94, 16), (99.88, 544.6, 1963, 33.12, 8), (100.00, 471.1, 1963, 25.62, 8), (99.69, 371.4, 1963, 16.62, 16), (0.00, 111.2, 345, 0.00, 8), (99.88, 287.3, 1963, 8.50, 8), (0.00, 72.8, 345, 0.00, 16), (0.00, 71.2, 345, 0.00, 8), (0.00, 70.8, 345, 0.00, 8), (0.00, 68.6, 345, 0.00, 16), (0.00, 71.1, 345, 0.00, 8), (0.00, 71.5, 345, 0.00, 8), (0.00, 70.6, 345, 0.00, 16), (0.00, 70.2, 345, 0.00, 8), (0.00, 68.8, 345, 0.00, 8), (0.00, 73.7, 345, 0.00, 8)]),
    "node03": (0, 1.37, [(99.75, 551.7, 1959, 34.33, 24), (98.88, 533.2, 1959, 33.00, 8), (99.62, 634.2, 1959, 42.00, 8), (99.94, 549.1, 1959, 33.81, 16), (100.00, 529.0, 1959, 32.62, 8), (99.62, 441.9, 1959, 24.00, 8), (99.00, 354.5, 1959, 15.38, 16), (0.00, 105.7, 345, 0.00, 8), (99.75, 229.8, 1959, 3.00, 8), (99.94, 227.8, 1959, 3.00, 16), (99.88, 231.2, 1959, 3.00, 8), (100.00, 230.6, 1959, 3.00, 8), (99.81, 232.3, 1959, 3.00, 16), (100.00, 228.8, 1959, 3.00, 8), (99.62, 227.9, 1959, 3.00, 8), (0.00, 70.6, 345, 0.00, 16), (0.00, 70.9, 345, 0.00, 8), (0.00, 72.2, 345, 0.00, 8), (0.00, 74.0, 345, 0.00, 8)]),
    "node04": (0, 1.48, [(99.67, 535.0, 1958, 32.71, 24), (99.38, 579.3, 1958, 37.00, 8), (99.88, 626.2, 1958, 40.75, 8), (99.44, 534.1, 1958, 32.88, 16), (99.50, 530.4, 1958, 32.50, 8), (99.62, 450.9, 1958, 24.25, 8), (99.69, 362.9, 1958, 16.19, 16), (0.00, 109.0, 345, 0.00, 8), (99.50, 236.4, 1958, 3.00, 8), (99.81, 230.8, 1958, 3.00, 16), (99.75, 230.9, 1958, 3.00, 8), (99.75, 229.7, 1958, 3.00, 8), (99.75, 228.3, 1958, 3.00, 16), (99.88, 231.1, 1958, 3.00, 8), (98.62, 209.2, 1759, 3.00, 8), (0.00, 74.5, 345, 0.00, 16), (0.00, 72.4, 345, 0.00, 8), (0.00, 68.1, 345, 0.00, 8), (0.00, 70.7, 345, 0.00, 8)]),
    "node05": (0, 1.10, [(99.54, 565.4, 1961, 35.17, 24), (100.00, 528.9, 1961, 32.50, 8), (99.88, 555.2, 1961, 35.00, 8), (99.62, 642.9, 1961, 42.00, 16), (99.75, 539.8, 1961, 33.00, 8), (100.00, 499.2, 1961, 28.62, 8), (99.88, 386.9, 1961, 18.00, 16), (0.00, 108.5, 345, 0.00, 8), (99.62, 313.6, 1961, 10.88, 8), (99.88, 229.4, 1961, 3.00, 16), (99.75, 227.6, 1961, 3.00, 8), (99.88, 231.9, 1961, 3.00, 8), (99.75, 230.6, 1961, 3.00, 16), (99.88, 235.8, 1961, 3.00, 8), (99.88, 231.8, 1961, 3.00, 8), (0.00, 73.3, 345, 0.00, 16), (0.00, 68.8, 345, 0.00, 8), (0.00, 69.9, 345, 0.00, 8), (0.00, 73.7, 345, 0.00, 8)]),
    "node06": (0, 1.55, [(99.83, 531.3, 1956, 32.62, 24), (99.88, 608.3, 1956, 40.00, 8), (99.88, 589.3, 1956, 37.75, 8), (99.75, 529.6, 1956, 32.62, 16), (99.38, 528.7, 1956, 32.62, 8), (99.38, 447.4, 1956, 24.38, 8), (99.88, 384.6, 1956, 18.50, 16), (0.00, 110.0, 345, 0.00, 8), (99.88, 232.1, 1956, 3.00, 8), (99.81, 232.4, 1956, 3.00, 16), (99.50, 230.1, 1956, 3.00, 8), (99.88, 230.2, 1956, 3.00, 8), (99.75, 229.6, 1956, 3.00, 16), (99.75, 230.0, 1956, 3.00, 8), (94.75, 172.8, 1348, 2.88, 8), (0.00, 72.2, 345, 0.00, 16), (0.00, 71.6, 345, 0.00, 8), (0.00, 71.6, 345, 0.00, 8), (0.00, 66.9, 345, 0.00, 8)]),
    "node07": (-1, 0.66, [(99.62, 635.1, 1959, 42.00, 8), (99.44, 530.7, 1959, 32.38, 16), (99.75, 534.5, 1959, 32.75, 8), (99.62, 570.9, 1959, 36.00, 8), (99.75, 638.4, 1959, 41.81, 16), (99.50, 532.1, 1959, 32.62, 8), (99.75, 485.5, 1959, 27.25, 8), (99.62, 373.1, 1959, 16.69, 16), (0.00, 109.3, 345, 0.00, 8), (99.88, 294.7, 1959, 9.12, 8), (99.69, 231.8, 1959, 3.00, 16), (100.00, 231.0, 1959, 3.00, 8), (99.62, 230.2, 1959, 3.00, 8), (99.81, 231.1, 1959, 3.00, 16), (99.75, 226.6, 1959, 3.00, 8), (99.88, 228.2, 1959, 3.00, 8), (0.00, 70.3, 345, 0.00, 16), (0.00, 71.0, 345, 0.00, 8), (0.00, 73.3, 345, 0.00, 8), (0.00, 69.5, 345, 0.00, 8)]),
    "node08": (-1, 1.29, [(100.00, 623.2, 1952, 40.88, 8), (99.50, 532.6, 1952, 32.12, 16), (99.88, 526.1, 1952, 32.25, 8), (99.62, 631.0, 1952, 41.00, 8), (99.81, 581.9, 1952, 36.50, 16), (99.62, 529.7, 1952, 32.38, 8), (99.50, 447.7, 1952, 23.88, 8), (99.81, 353.7, 1952, 15.38, 16), (0.00, 107.2, 345, 0.00, 8), (99.62, 234.6, 1952, 3.25, 8), (99.88, 227.8, 1952, 3.00, 16), (99.88, 230.2, 1952, 3.00, 8), (99.75, 230.9, 1952, 3.00, 8), (99.75, 228.9, 1952, 3.00, 16), (100.00, 226.7, 1952, 3.00, 8), (100.00, 225.7, 1952, 3.00, 8), (0.00, 70.7, 345, 0.00, 16), (0.00, 72.9, 345, 0.00, 8), (0.00, 71.0, 345, 0.00, 8), (0.00, 69.1, 345, 0.00, 8)]),
}


def _seed115_rows() -> list[tuple]:
    rows = []
    for host, (k0, phase, buckets) in S115.items():
        for i, (u, p, c, mu, samples) in enumerate(buckets):
            rows.append((host, T0 + dt.timedelta(seconds=10 * (k0 + i)), True, u, p, float(c), mu, samples, 8, phase))
    return rows


def test_a_straggler_does_not_widen_the_noise_it_is_judged_by():
    assert _stragglers(_seed115_rows()) == ["node01"]


def _spin_rows(spin_buckets: int) -> list[tuple]:
    """8 hosts at 1 s sampling (80 samples of 8 GPUs per 10 s bucket): 8 computing buckets where node05 runs
    4% under its peers' power and 5% under their memory busy (its usual offset: a slower pipeline stage, the
    board lottery), 3 buckets where it straggles (+3% power, +9% memory against its peers: +7% and +14% against
    its own usual), then `spin_buckets` buckets where every rank spin-waits (another fault stalls the job:
    ~230 W, memory busy ~3%, the mean of 8 integer readings)."""
    rng = np.random.default_rng(11)
    rows = []
    for h in range(8):
        name = f"node{h + 1:02d}"
        for k in range(11 + spin_buckets):
            if k < 11:
                e, em = float(rng.normal(0, 0.005)), float(rng.normal(0, 0.005))
                dp, dm = (-0.04, -0.05) if name == "node05" and k < 8 else (0.03, 0.09) if name == "node05" else (0.0, 0.0)
                u, p, m = 99.6, 560 * (1 + dp + e), 35.0 * (1 + dm + em)
            else:
                u, p, m = 99.8, 230 * (1 + float(rng.normal(0, 0.002))), float(rng.integers(2, 5, 8).mean())
            rows.append((name, T0 + dt.timedelta(seconds=10 * k), True, u, p, 1950.0, m, 80, 8, 0.5))
    return rows


def test_branch_c_baseline_is_the_hosts_computing_time_not_its_spin_wait():
    # without the spin-wait the straggler stands against its own usual offset ...
    assert _stragglers(_spin_rows(0)) == ["node05"]
    # ... and ten minutes of all-ranks spin-wait after it change nothing
    assert _stragglers(_spin_rows(60)) == ["node05"]
