"""sar's wrap pre-scan (_may_be_wrapped) says what the whole-input pattern (_WRAPPED) says on any mix of lines: the
lines its vectorised look passes over (timed lines, blank and marker lines, Average: lines, lines after a line no
timed line starts like) are never a tail after a timed line (issue 21: a collected series' hundreds of blank and
Average: lines sent every input to the whole-input pattern, half the parse of a host-hour's sar -P ALL)."""
from __future__ import annotations

import random

import pytest

from forensics.sources.sar import _FEW_UNTIMED, _WRAPPED, _may_be_wrapped

LINES = [
    "10:00:00 AM     CPU     %user     %nice   %system", "10:00:01        all      1.00      0.00      2.00",
    "   10:00:02 all 1 2", "\t10:00:03 x 1", "12:00:00\tall 1", "9:00:00 1 2", "10:00:04", "10:00:05 ",
    "Average:        all      1.00      0.00", "Average:     CPU  %user", "Average:", "Averagex 1 2", "Average 1 2",
    "  Average: all 1", "A", "", " ", "\t", "#### forensics-sample ts=2026-12-01T10:00:00+00:00 argv=\"sar -u 1 1\"",
    "Linux 5.15.0 (node01) \t12/01/26 \t_x86_64_\t(8 CPU)", "%idle", "kbswpfree %swpused", "-1.5 2", "1 2 3", "\t5.07",
    " 7 8", "a:b", "%", "-", "x y z", "ab-c/d.e f%", "1,5 2.0", "\u4e2d\u6587 1", "10:00:06 AM all 1.0 # a comment",
]


def _cases(seed: int, n: int):
    rnd = random.Random(seed)
    for _ in range(n):
        lines = [rnd.choice(LINES) for _ in range(rnd.choice((1, 2, 3, 8, 40, 70, 150)))]
        nl = rnd.choice(("\n", "\r\n"))
        yield (nl.join(lines) + rnd.choice(("", nl))).encode()


@pytest.mark.parametrize("seed", range(8))
def test_prescan_agrees_with_the_whole_pattern(seed):
    seen = {True: 0, False: 0}
    for data in _cases(seed, 300):
        got = _may_be_wrapped(data)
        assert got == (_WRAPPED.search(data) is not None), data
        seen[got] += 1
    assert seen[True] and seen[False]  # (both answers among the cases)


def test_many_blank_and_average_lines_are_passed_over():
    """A collected series' blank lines, markers and Average: blocks are no candidates: the few lines left are matched
    one by one (the whole-input pattern is not needed), and a real tail among them is still found."""
    block = ("\n10:00:00        CPU     %user\n10:00:01        all      1.00\n\nAverage:        CPU     %user\n"
             "Average:        all      1.00\n#### forensics-sample ts=2026-12-01T10:00:00+00:00\n")
    data = ("Linux 5.15.0 (node01) \t12/01/26 \t_x86_64_\t(8 CPU)\n" + block * (4 * _FEW_UNTIMED)).encode()
    assert not _may_be_wrapped(data) and _WRAPPED.search(data) is None
    wrapped = data + b"10:00:02        CPU     %user\n%idle\n"
    assert _may_be_wrapped(wrapped) and _WRAPPED.search(wrapped) is not None
    after_average = data + b"Average:        all      1.00\n5.07\n"
    assert _may_be_wrapped(after_average) and _WRAPPED.search(after_average) is not None
