"""The HTML report in a real browser: headless Chromium, network off, no console errors, no request
other than the file itself, the timeline and the charts drawn; a screenshot is saved.

Needs Debian's `chromium` (.ci/run installs it when /usr/bin/chromium is missing); skipped with the
reason when no Chromium binary is found.
"""
from __future__ import annotations

import contextlib

import pytest

import report_bundles as rb
from report_chromium import Browser, find_chromium

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium binary (apt-get install chromium; .ci/run does it)")

# pixels of the swimlane canvas in each severity's colour (the page draws marks and windows with them)
COUNT_COLOURS = """(() => {
  const c = document.querySelector('#swimlane canvas');
  const g = c.getContext('2d');
  const px = g.getImageData(0, 0, c.width, c.height).data;
  let warn = 0, crit = 0, shaded = 0;
  for (let i = 0; i < px.length; i += 4) {
    const r = px[i], gr = px[i + 1], b = px[i + 2];
    if (r === 0xe8 && gr === 0xa3 && b === 0x3d) warn++;
    else if (r === 0xd6 && gr === 0x45 && b === 0x45) crit++;
    else if (r > 200 && gr < 225 && b < 215 && r - b > 20) shaded++;
  }
  return {warn, crit, shaded, w: c.width, h: c.height};
})()"""


@contextlib.contextmanager
def _opened(path, tmp, width, height):
    """Headless Chromium (a fresh profile under `tmp`) with the file `path` loaded; closed after."""
    profile = tmp / "profile"
    profile.mkdir()
    b = Browser(CHROMIUM, profile, width=width, height=height)
    try:
        b.open_page()
        b.navigate(path.as_uri())
        yield b
    finally:
        b.close()


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("browser")
    path = rb.pfc_report()
    with _opened(path, tmp, 1400, 1000) as b:
        b.wait_for("document.documentElement.dataset.rendered === '1' || !!document.documentElement.dataset.errors")
        yield b, path, tmp


def test_no_errors_and_no_requests(page):
    b, path, _ = page
    assert b.evaluate("document.documentElement.dataset.errors || ''") == ""
    assert b.evaluate("document.getElementById('js-errors').hidden") is True
    assert b.problems() == []
    assert b.requests() == [path.as_uri()], "the page requested something besides itself"


def test_timeline_drawn(page):
    b, _, tmp = page
    marks = int(b.evaluate("document.documentElement.dataset.marks"))
    assert marks > 0
    px = b.evaluate(COUNT_COLOURS)
    assert px["w"] > 300 and px["h"] > 40
    assert px["warn"] + px["crit"] > 0, px  # pause-storm warning marks
    assert px["shaded"] > 200, px  # the findings' windows
    b.screenshot(tmp / "report-top.png", full_page=False)
    assert (tmp / "report-top.png").stat().st_size > 10_000


def test_charts_drawn_when_scrolled_to(page):
    b, _, tmp = page
    b.evaluate("document.getElementById('signals').scrollIntoView()")
    n = b.wait_for("Number(document.documentElement.dataset.charts || 0)")
    assert n >= 2
    sizes = b.evaluate("Array.from(document.querySelectorAll('#signals .uplot canvas')).map(c => [c.width, c.height])")
    assert sizes and all(w > 200 and h > 100 for w, h in sizes), sizes
    # every chart of every open host section can be drawn without an error
    total = b.evaluate("window.__drawAllCharts()")
    expected = b.evaluate("""Array.from(document.querySelectorAll('details.host[open] .plot')).length""")
    assert total >= expected > 0
    assert b.problems() == []
    b.screenshot(tmp / "report-signals.png", full_page=False)
    assert (tmp / "report-signals.png").stat().st_size > 10_000


def test_zoom_link_sets_the_shared_range(page):
    b, _, _ = page
    before = b.evaluate("document.getElementById('range-label').textContent")
    b.evaluate("document.querySelector('[data-zoom]').click()")
    after = b.evaluate("document.getElementById('range-label').textContent")
    assert after != before
    spans = b.evaluate("""Array.from(document.querySelectorAll('.uplot')).length""")
    assert spans > 0
    assert b.problems() == []


def test_the_harness_sees_a_request_and_a_console_error(tmp_path):
    """The checks above can fail: a page that loads an external image and logs an error is caught."""
    page = tmp_path / "leaky.html"
    page.write_text('<!DOCTYPE html><html><body><img src="http://report-test.invalid/x.png">'
                    '<script>console.error("boom")</script></body></html>')
    with _opened(page, tmp_path, 800, 600) as b:
        b.pump(0.5)
        assert "http://report-test.invalid/x.png" in b.requests()
        assert any("boom" in p for p in b.problems()), b.problems()
