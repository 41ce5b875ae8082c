"""What a paste does to `ethtool -S` output, undone before the counters are read (:mod:`forensics.sources.ethtool`):
a tab after the colon, a value a mail client wrapped onto the next line, a note the author wrote after a value;
and the snapshots of a paste that holds several with no ethtool command line between them."""
from __future__ import annotations

import polars as pl

# a note the paste's author wrote after a counter's value: "rx_dropped: 123   # this keeps growing",
# "rx_missed_errors: 4567  <-- here", "tx_timeout: 2 (was 0 yesterday)", "rx_crc: 9 // bad cable?": the value, blanks,
# then a mark no driver prints after a value (ethtool prints "%s: %llu" and nothing more)
_NOTE = r"^([^:]*[^: \t][ \t]*: [ \t]*[0-9]{1,20})[ \t]+((?:#|<-|<=|<<|←|//|--|->|=>|\(|\[|\*|!|\^|\?).*)$"
MAX_NOTES = 200  # notes kept in meta (the rest counted)
_WRAP_NAME = r"^[ \t]*[^ \t:][^ \t]*:$"  # "     rx_prio0_buf_discard:" with its value wrapped onto the next line
_WRAP_VALUE = r"^[ \t]*[0-9]{1,20}[ \t]*$"


def repair_paste(df: pl.DataFrame, notes: list[dict]) -> tuple[pl.Series, int] | None:
    """The texts of `df` (line_no, text, is_marker) with what a paste did to counter lines undone, or None where
    it did nothing: a tab after the colon (``rx_packets:\t333854100``: an editor's or a mail client's tabs) read
    as ethtool's ": "; a value a mail client wrapped onto the next line (``     rx_csum_unnecessary:`` /
    ``333854079``) joined back to its name, that line left blank; a note the author wrote after a value
    (``rx_dropped: 123   # this keeps growing``, ``<-- here``: :data:`_NOTE`) taken off, and appended to
    `notes` ({line_no, note}) so the result's meta keeps it. Also the number of values joined."""
    t = pl.col("text")
    tab = t.str.contains(":\t", literal=True).fill_null(False)
    wrap = (t.str.contains(_WRAP_NAME) & t.shift(-1).str.contains(_WRAP_VALUE) & ~pl.col("is_marker")).fill_null(False)
    note = (t.str.contains(_NOTE) & ~pl.col("is_marker")).fill_null(False)
    got = df.select(tab.any().alias("tab"), wrap.sum().alias("wrap"), note.any().alias("note")).row(0, named=True)
    if not got["tab"] and not got["wrap"] and not got["note"]:
        return None
    if got["note"]:
        noted = df.filter(note).select("line_no", t.str.extract(_NOTE, 2).str.strip_chars_end(" \t").alias("note"))
        notes.extend(noted.to_dicts())
        df = df.with_columns(pl.when(note).then(t.str.extract(_NOTE, 1)).otherwise(t).alias("text"))
    out = df.with_columns(pl.when(tab).then(t.str.replace(r":\t[ \t]*", ": ")).otherwise(t).alias("text"))
    if got["wrap"]:
        out = out.with_columns(wrap.alias("_w")).with_columns(
            pl.when(pl.col("_w")).then(t + " " + t.shift(-1).str.strip_chars(" \t"))
            .when(pl.col("_w").shift(1).fill_null(False)).then(pl.lit("")).otherwise(t).alias("text"))
    return out.get_column("text"), int(got["wrap"])


def pasted_snapshots(rows: pl.DataFrame, df: pl.DataFrame, gaps: list[pl.DataFrame]) -> tuple[pl.DataFrame, bool]:
    """`rows` (counter rows of an input without markers) with ``seg`` renumbered where the paste holds several
    snapshots that no ethtool command line separates: ``NIC statistics:`` again, or a line that is no counter
    (a label "After 10 s:", ``$ sleep 10``: the lines in `gaps`, left unparsed) after which the counters start
    again with a name (and queue) already read since the last boundary (two snapshots pasted before and
    after). Also whether any such split was made."""
    if not rows.height:
        return rows, False
    body = pl.col("text").str.strip_chars(" \t")
    cut = df.filter(body == "NIC statistics:").get_column("line_no")
    if gaps:
        cut = pl.concat([cut, *[g.get_column("line_no") for g in gaps]])
    if not cut.len():
        return rows, False
    cut = cut.unique().sort()
    key = pl.concat_str([pl.col("raw_name"), pl.coalesce(pl.col("lqn"), pl.col("sec_queue"), pl.col("queue"))
                         .cast(pl.String).fill_null("")], separator="\x00")
    r = rows.with_columns(pl.Series("grp", cut.search_sorted(rows.get_column("line_no"), side="left"),
                                    dtype=pl.Int64), key.alias("_key"))
    r = r.with_columns(pl.col("line_no").min().over("seg", "_key").alias("_first"))
    # a group (the counters between two such lines) opens a snapshot where its first counter was read before it
    # in the same command's segment
    heads = r.group_by("seg", "grp").agg(pl.col("_first").sort_by("line_no").first(),
                                         pl.col("line_no").min().alias("_start"))
    opens = heads.filter(pl.col("_first") < pl.col("_start"))
    if not opens.height:
        return rows, False
    r = r.join(opens.select("seg", "grp", "_start"), on=["seg", "grp"], how="left")
    r = r.sort("line_no").with_columns(
        (pl.col("seg") * (1 << 32) + (pl.col("line_no") == pl.col("_start")).fill_null(False).cast(pl.Int64)
         .cum_sum().over("seg")).alias("seg"))
    return r.drop("grp", "_key", "_first", "_start"), True
