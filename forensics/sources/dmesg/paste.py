"""Kernel logs as people paste them into mail and forum posts.

- Quote prefixes (``> ``, ``>> ``, ``> > ``) are taken off every line that has one; a quoted line
  that is not a kernel log line is still reported in ``unparsed`` as it was written.
- A paste indented as a whole (a code block: every non-blank line starts with the same spaces or
  tab), or under captions ("Output:", a dmesg/journalctl prompt: unindented, at most half as many as the
  indented lines), is taken out of its indent when its first indented line is a kernel log line (with or
  without a time); a caption stays unparsed.
- Lines wrapped by a mail client are joined back only where that is certain: a line with no kernel
  log prefix follows a line that ended with a space (the soft line break of ``format=flowed``,
  RFC 3676, which mail archives keep), and the line it continues (or the wrapped line before it)
  gave a message. The wrapped tail is appended to that message and counted as used by it; any other
  line without a prefix stays in ``unparsed``.
"""
from __future__ import annotations

import re

import polars as pl

from forensics.sources.dmesg.prefixes import RE_CAPTION, RE_PROMPT, RE_QUOTE
from forensics.sources.dmesg.sniffing import looks_like_kernel_line
from forensics.sources.dmesg.untimed import _STRONG
from forensics.sources.dmesg.wrap import HARD_WRAP_JOINS, wrap_breaks

_CAPTION, _PROMPT_RE = re.compile(RE_CAPTION), re.compile(RE_PROMPT)


def unquote(lines: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """(lines with quote prefixes and a whole-paste indent removed, the original lines or None when
    nothing was changed)."""
    t = pl.col("text")
    original = None
    if lines["text"].str.starts_with(">").any():
        original = lines
        lines = lines.with_columns(t.str.replace(RE_QUOTE, ""))
    head = [s for s in lines["text"].head(64).to_list() if s.strip()]
    if not head or (head[0][:1] not in (" ", "\t") and not (_CAPTION.match(head[0]) or _PROMPT_RE.search(head[0]))):
        return lines, original  # (the cheap test first: a paste indented as a whole starts indented or with a caption)
    nonblank = lines.filter(t.str.strip_chars() != "")
    depth = t.str.len_chars() - t.str.strip_chars_start(" \t").str.len_chars()
    caption = t.str.contains(RE_CAPTION) | t.str.contains(RE_PROMPT)
    indent = nonblank.filter(~caption).select(depth.min()).item()
    if indent:  # captions (less indented) above the lines, at most half as many
        caps = nonblank.select((caption & (depth < indent)).sum()).item()
        nonblank = nonblank.filter(depth >= indent)
        if nonblank.height < 2 * caps:
            return lines, original
    if indent:
        first = nonblank["text"][0][:indent]
        # only a kernel log taken out of its indent: its first line then carries a kernel log prefix
        if (looks_like_kernel_line(nonblank["text"][0][indent:]) or _STRONG.match(nonblank["text"][0][indent:])) \
                and nonblank["text"].str.starts_with(first).all():
            original = original if original is not None else lines
            lines = lines.with_columns(pl.when(t.str.starts_with(first)).then(t.str.slice(indent)).otherwise(t))
    return lines, original


def soft_wrapped(rows: pl.DataFrame, leftovers: pl.DataFrame, lines: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Join lines without a prefix (`leftovers`: line_no, text) to the message before them where the
    line before ended with a space (a soft break). Returns (rows with their messages extended,
    leftovers not joined)."""
    if not leftovers.height or not rows.height:
        return rows, leftovers
    # the line before each candidate, by position (split_lines numbers lines 1..n): no pass over all lines
    before = (leftovers["line_no"] - 2).clip(lower_bound=0)
    soft = lines["text"].gather(before).str.ends_with(" ") & (leftovers["line_no"] > 1)
    cand = leftovers.filter(soft.fill_null(False))
    if not cand.height:
        return rows, leftovers
    # runs of consecutive candidate lines; a run belongs to the row on the line just before it
    cand = cand.sort("line_no").with_columns(
        (pl.col("line_no") - pl.int_range(pl.len())).alias("_run"))
    runs = cand.group_by("_run").agg(pl.col("line_no").min().alias("_first"))
    heads = runs.with_columns((pl.col("_first") - 1).alias("_head")).join(
        rows.select(pl.col("line_no").alias("_head")), on="_head", how="semi")
    joined = cand.join(heads.select("_run", "_head"), on="_run", how="inner")
    if not joined.height:
        return rows, leftovers
    tails = joined.sort("line_no").group_by("_head", maintain_order=True).agg(pl.col("text").str.join("").alias("_tail"))
    rows = rows.join(tails, left_on="line_no", right_on="_head", how="left").with_columns(
        pl.when(pl.col("_tail").is_not_null()).then(pl.col("message") + pl.col("_tail")).otherwise(pl.col("message"))
        .alias("message")).drop("_tail")
    return rows, leftovers.join(joined.select("line_no"), on="line_no", how="anti")


# the rest of a "Modules linked in:" list after a break: module names (with their taint flags) and the
# "[last unloaded: x]" the kernel prints at its end (print_modules(), kernel/module/main.c), nothing else
_MODULE_LIST_TAIL = r"^(?:[A-Za-z0-9_]+(?:\([A-Z+-]+\))?(?:[ \t]+|$))+(?:\[last unloaded: [^\]]*\][ \t]*)?$"
WRAP_WIDTH = 80  # a line broken at or beyond this many characters was cut at a width (a terminal's, a pager's),
# anywhere in a word; a shorter one by a word wrap (mail, forum), at a space that the wrap dropped


def module_list_wrapped(rows: pl.DataFrame, leftovers: pl.DataFrame, lines: pl.DataFrame, cut_ok: bool = True,
                        held: list[int] | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Join lines without a prefix (`leftovers`: line_no, text) that continue a "Modules linked in:" message
    broken by the paste (the longest line the kernel prints: terminals and mail wrap it) to that message:
    only lines that are nothing but module names (and the closing "[last unloaded: x]"), at least one with
    an underscore or a taint flag, right after the message's line or after a tail already joined to it. The break is taken as mid-word (joined as is) when
    the line before it is at least WRAP_WIDTH long, else as at a dropped space; a cut mid-word only where
    `cut_ok` (see :func:`cut_may_lose_text`; the lines it holds back are added to `held`). Returns (rows
    with their messages extended, leftovers not joined)."""
    if not leftovers.height or not rows.height:
        return rows, leftovers
    heads = rows.filter(pl.col("message").str.contains("Modules linked in:", literal=True))
    if not heads.height:
        return rows, leftovers
    # (plain words pass the shape too: a module name with "_" or a taint flag, or the closing bracket, is asked for)
    cands = leftovers.filter(pl.col("text").str.contains(_MODULE_LIST_TAIL)
                             & pl.col("text").str.contains(r"_|\([A-Z+-]+\)|\[last unloaded: ")).sort("line_no")
    if not cands.height:
        return rows, leftovers
    texts = lines["text"]
    head_of = {ln: ln for ln in heads["line_no"].to_list()}
    tails: dict[int, str] = {}
    used: list[int] = []
    for ln, text in cands.select("line_no", "text").iter_rows():
        head = head_of.get(ln - 1)
        if head is None:
            continue
        before = texts[ln - 2].rstrip()
        sep = "" if len(before) >= WRAP_WIDTH and not before.endswith((")", "]")) else " "
        if not sep and not cut_ok:
            if held is not None:
                held.append(ln)
                head_of[ln] = head  # (the next part is held back too)
            continue
        tails[head] = tails.get(head, "") + sep + text.strip()
        head_of[ln] = head
        used.append(ln)
    if not used:
        return rows, leftovers
    return _append_tails(rows, leftovers, tails, used)


def cut_may_lose_text(variants: dict) -> bool:
    """Whether a line cut at the paste's width may have lost text at the cut: where most records were read
    from lines cut before their host ("kernel: [ 12.3] ...", readers._parse_kernel_only), the paste was
    taken as a block of columns (a rectangular selection, a terminal scrolled sideways) that left out the
    columns of each line's time and host; on a line a record was wrapped onto, the same columns held the
    record's own text (a real journal paste: the linux-wireless fixture, whose module list read
    "snd_hda_codecm" joined). Its parts are not joined at such a cut: they stay unparsed."""
    main = {k: v for k, v in variants.items() if k not in ("continuation", "syslog", "wrapped")}
    return bool(main) and max(main, key=main.get) == "kernel_only"


def hard_wrapped(rows: pl.DataFrame, leftovers: pl.DataFrame, lines: pl.DataFrame, indented: pl.DataFrame | None = None,
                 cut_ok: bool = True, held: list[int] | None = None) -> tuple[pl.DataFrame, pl.DataFrame, list[int]]:
    """Join lines without a prefix (`leftovers`: line_no, text) to the message before them where the paste
    was hard-wrapped (a mail client's word wrap at ~72-80 columns, or a terminal's or editor's cut at 80,
    with no soft-break space kept; see :func:`wrap_breaks` for the width and the shapes of a break): a line
    continues the message on the line just before it (or that message's tail). A line that starts with a
    blank (`indented`: the kernel's own continuation shape) continues it only where the paste was cut at a
    width and the line before is that wide: a cut in front of a blank keeps it on the next line (a word wrap
    drops it); it is joined as it is, its blanks the text's own. Joined only when the file shows
    HARD_WRAP_JOINS such breaks or more; a lone short line after a message (prose, a prompt) is left
    unparsed; a cut at the width only where `cut_ok` (see :func:`cut_may_lose_text`; the lines it holds back
    are added to `held`). Returns (rows with their messages extended, leftovers not joined, the indented lines joined)."""
    n_ind = indented.height if indented is not None else 0
    if leftovers.height + n_ind < HARD_WRAP_JOINS or not rows.height:
        return rows, leftovers, []
    longest = lines["text"].str.strip_chars_end().str.len_chars().max() or 0
    cand = leftovers["line_no"]
    if n_ind:
        cand = pl.concat([cand, indented["line_no"]])
    cand = cand.sort()
    own = lines["text"].gather(cand - 1).to_list()  # (as read: without the quote prefix unparsed keeps)
    prev = lines["text"].gather((cand - 2).clip(lower_bound=0)).to_list()
    head_of = {ln: ln for ln in rows["line_no"].to_list()}
    # candidates in order: a line right after a message (or after a line joined to one) can be its tail;
    # which of them are is decided on all of them together (the width), then each joined in turn
    seq = []
    for ln, text, before in zip(cand.to_list(), own, prev):
        if text[:1] in (" ", "\t"):
            word = -1 if text.strip() else 0
        else:
            word = len(text.strip().split(" ", 1)[0]) if text.strip() else 0
        seq.append((ln, text, len(before.rstrip()), word))
    seps = wrap_breaks([(b, w) for _, _, b, w in seq], longest)
    tails: dict[int, str] = {}
    used: list[int] = []
    for (ln, text, _, word), sep in zip(seq, seps):
        head = head_of.get(ln - 1)
        if head is None or sep is None:
            continue
        if not sep and not cut_ok:
            if held is not None and word >= 0:
                held.append(ln)
                head_of[ln] = head  # (the next part is held back too)
            continue
        tails[head] = tails.get(head, "") + sep + (text.rstrip() if word < 0 else text.strip())
        head_of[ln] = head
        used.append(ln)
    if len(used) < HARD_WRAP_JOINS:
        return rows, leftovers, []
    rows, leftovers = _append_tails(rows, leftovers, tails, used)
    ind = set(indented["line_no"].to_list()) if n_ind else set()
    return rows, leftovers, [ln for ln in used if ln in ind]


def _append_tails(rows: pl.DataFrame, leftovers: pl.DataFrame, tails: dict, used: list) -> tuple[pl.DataFrame, pl.DataFrame]:
    """`tails` ({message's line_no: text}) appended to those messages; the `used` lines leave `leftovers`."""
    tail = pl.DataFrame({"line_no": list(tails), "_tail": list(tails.values())},
                        schema={"line_no": rows.schema["line_no"], "_tail": pl.String})
    rows = rows.join(tail, on="line_no", how="left").with_columns(
        pl.when(pl.col("_tail").is_not_null()).then(pl.col("message").str.strip_chars_end() + pl.col("_tail"))
        .otherwise(pl.col("message")).alias("message")).drop("_tail")
    return rows, leftovers.filter(~pl.col("line_no").is_in(pl.Series(used, dtype=pl.Int64).implode()))
