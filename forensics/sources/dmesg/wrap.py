"""Where a kernel log paste was hard-wrapped: a terminal's cut at a width (anywhere in a word) or a mail
client's word wrap (at a space it dropped). Shared by the sniffer (its tails count as the record's) and
the parser (paste.hard_wrapped joins them back)."""
from __future__ import annotations

HARD_WRAP_MIN, HARD_WRAP_MAX = 60, 100  # the widths a mail client or a terminal wraps a paste at
HARD_WRAP_JOINS = 2  # a file shows it was hard-wrapped by at least this many breaks of that shape
HARD_WRAP_SLACK = 6  # a reply's client re-wraps quoted text at its own width, a few columns off the longest line


def wrap_breaks(breaks: list[tuple[int, int]], longest: int) -> list[str | None]:
    """For each candidate break (length of the line before it, length of the next line's first word, -1 where
    the next line starts with a blank):
    "" where the paste was cut there at a width anywhere in a word, " " where a word wrap dropped a space
    there, None where it is no break of the paste's (a short line then prose). The width W: the file's
    longest line where that is within HARD_WRAP_MIN..HARD_WRAP_MAX (a terminal's cut, a mail whose
    lines all wrapped); else the longest line before a candidate break (a mail's word wrap beside a
    few longer lines it left whole, such as a path no wrap could break). Cut mid-word: the line before
    is W long, on a W that is the file's longest line; a word wrap: the line before plus the next word
    would have gone over W less HARD_WRAP_SLACK; where more breaks are a word wrap's than a cut's, a line at W
    is a word wrap's too (it filled the line: joined with a blank, not cut). Fewer than HARD_WRAP_JOINS breaks:
    none taken."""
    if len(breaks) < HARD_WRAP_JOINS:
        return [None] * len(breaks)
    cut_width = HARD_WRAP_MIN <= longest <= HARD_WRAP_MAX
    width = longest if cut_width else max(b for b, _ in breaks)
    if not HARD_WRAP_MIN <= width <= HARD_WRAP_MAX:
        return [None] * len(breaks)
    if cut_width:  # a word wrap also fills a line to the width now and then: where most breaks are a
        # word wrap's (shorter lines), the file was word-wrapped and a line at the width is one too
        at = sum(1 for b, w in breaks if w and b >= width)
        cut_width = at >= sum(1 for b, w in breaks if w and b < width and b + 1 + w > width - HARD_WRAP_SLACK)
    out: list[str | None] = []
    for before, word in breaks:
        if word < 0:  # the next line starts with a blank: only a cut leaves one there (a word wrap drops it)
            out.append("" if cut_width and before >= width else None)
        elif not word:
            out.append(None)
        elif cut_width and before >= width:
            out.append("")  # cut at the width, anywhere in a word
        elif before + 1 + word > width - HARD_WRAP_SLACK:
            out.append(" ")  # the word did not fit: the wrap dropped the space before it
        else:
            out.append(None)
    return out if sum(x is not None for x in out) >= HARD_WRAP_JOINS else [None] * len(breaks)
