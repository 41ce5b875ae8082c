"""iostat text, vectorised: the same reading as the line reader (:mod:`forensics.sources.iostat.text`), with
Python only on the lines that steer it (banners, headers, timestamps, blanks, avg-cpu values) and the device
rows between them taken in bulk: each run of device lines after a Device header is checked and split into
columns by polars."""
from __future__ import annotations

import numpy as np
import polars as pl

from forensics.sources import _sysstat as S
from forensics.sources._base import ParseContext, ParseResult
from forensics.sources._sysstat import reports as R
from forensics.sources.iostat.state import _State, row_reason
from forensics.sources.iostat.text import _DEVICE, _Steer, _parse_text

_NUM_RX = r"^[+-]?(?:[0-9]+(?:[.,][0-9]*)?|[.,][0-9]+)$"


def _parse_text_fast(lines: pl.DataFrame, texts: R.Texts, ctx: ParseContext, data: bytes) -> ParseResult:
    st = _State(ctx)
    text = pl.col("text")
    toks = pl.col("_toks")
    t0, tl, nt = toks.list.first(), toks.list.last(), toks.list.len()
    # plain lines: what the line loop would only try as a row (no blank, marker, banner, header,
    # timestamp or Time: line can be one)
    plain = ((nt > 0) & ~text.str.contains(r"^\s*[LG#]") & (t0 != "avg-cpu:") & ~t0.is_in(_DEVICE)
             & ~((nt > 1) & tl.is_in(_DEVICE)) & ~(t0.str.contains(r"^[0-9]") & (nt <= 3)) & (t0 != "Time:"))
    df = (lines.lazy().with_columns(S.words(text, data).alias("_toks"))
          .with_columns(plain.fill_null(False).alias("_plain"), nt.cast(pl.Int32).alias("_n"),
                        t0.str.contains(_NUM_RX).fill_null(False).alias("_num0"),
                        tl.str.contains(_NUM_RX).fill_null(False).alias("_numl"))
          .collect(engine="in-memory"))
    n = df.height
    is_plain = df["_plain"].to_numpy()
    ntok = df["_n"].to_numpy()
    num0, numl = df["_num0"].to_numpy(), df["_numl"].to_numpy()
    # a word alone (-h of sysstat <= 11.4: the device name on its own line), or a line of numbers right under a
    # device row (a row a narrow terminal or a page wrapped: its last values on the next line): the line reader
    # joins them
    row = is_plain & ~num0
    if (row & (ntok == 1)).any() or (is_plain[1:] & num0[1:] & row[:-1]).any():
        return _parse_text([texts[i] for i in range(n)], ctx)
    digit = lines.filter(text.str.contains(r"^[0-9]") & (text.str.len_bytes() < 64)).select(
        text.str.extract(r"^(\S+)").unique(maintain_order=True))["text"].to_list()
    dates = [t for t in digit if t]  # distinct, in file order: date_order reads the first that tells
    head = texts.span(0, 2000)
    dates += [b["date"] for b in map(S.banner, head) if b]
    order, assumed = S.date_order(dates, head[:400])
    r = _Steer(st, order)
    stamps = S.stamps(df, order)
    has_stamp = stamps.pos >= 0
    runs: list[tuple[int, int, tuple, bool, tuple]] = []  # (start, end, header, device last, extra) of device rows
    fits: dict[tuple[int, bool], np.ndarray] = {}
    cpu_rows: list[tuple[int, tuple, tuple]] = []  # (line, header, extra) of avg-cpu values
    # reports read as a template's copies in bulk: (first lines, report numbers, times in us, template's device runs,
    # template's avg-cpu rows, host), each copy's extras those st.extra() gives a -t report after the template
    copies: list[tuple[np.ndarray, np.ndarray, np.ndarray, list, list, str | None]] = []
    notiostat = "not iostat output (no header before it)"

    def plain_run(a: int, b: int) -> None:
        """Lines a..b-1 (0-based), all plain, under the current mode."""
        i = a
        while i < b and r.mode == "cpu":  # the avg-cpu values: the first line with as many words
            if ntok[i] != len(r.cpu_cols):
                st.bad.append((i + 1, texts[i], f"{ntok[i]} values for {len(r.cpu_cols)} avg-cpu columns"))
            else:  # as st.cpu_row, its words taken in bulk below
                hdr = tuple(r.cpu_cols)
                st.col.batch(("cpu", hdr, id(S.CPU_COLS)), lambda: S.Batch("cpu_util", hdr, S.CPU_COLS, (), "cpu", "avg-cpu"))
                cpu_rows.append((i, hdr, st.extra()))
                st.has_cpu = True
                r.mode = None
            i += 1
        if i >= b:
            return
        if r.mode == "dev":
            dev_last = r.dev_last
            key = (len(r.dev_cols) + 1, dev_last)
            cs = fits.get(key)
            if cs is None:  # running count of the lines that fit this layout
                ok_ = (ntok == key[0]) & ~(numl if dev_last else num0)
                cs = fits[key] = np.concatenate(([0], np.cumsum(ok_)))
            good = int(cs[b] - cs[i])
            if good:
                runs.append((i, b, r.dev_hdr, dev_last, st.extra()))
                st.has_dev = True
            if good < b - i:
                ok = np.diff(cs[i:b + 1]).astype(bool)
                for k in np.flatnonzero(~ok).tolist():
                    j = i + k
                    toks_ = texts[j].split()
                    why = row_reason(toks_, len(r.dev_cols), dev_last)
                    st.bad.append((j + 1, texts[j], why))
            return
        st.bad.extend((j + 1, t, notiostat) for j, t in enumerate(texts.span(i, b), i))

    steer_at = np.flatnonzero(~is_plain)
    # the texts the loop below reads: steering lines that are neither blank nor a -t time read in bulk
    read = steer_at[ntok[steer_at] > 0]
    texts.prefetch(read[~has_stamp[read]])
    steer = steer_at.tolist()
    prev = 0

    def step(i: int) -> None:
        """Steering line i (0-based) after the plain lines before it, as the line reader reads them."""
        nonlocal prev
        if i > prev:
            plain_run(prev, i)
        prev = i + 1
        if ntok[i] == 0:  # a blank line: all the line reader does with one
            r.hdr_open = False
            if r.mode == "cpu":
                r.mode = None
            return
        ts = stamps.get(i)
        if ts is not None:  # a -t time read in bulk: all the line reader does with one
            r.hdr_open = False
            st.new_report(ts, False)
            r.mode = None
            return
        if r.line(i + 1, texts[i]) is not None:
            plain_run(i, i + 1)  # not steering after all: a row like the plain ones

    def flush(e: int) -> None:
        """The plain lines from the last steering line to line e (0-based), read now (as step(e) would first)."""
        nonlocal prev
        if e > prev:
            plain_run(prev, e)
            prev = e

    def state() -> tuple:
        """What steers the reading of the next lines (all but the report's number and time)."""
        return (r.mode, tuple(r.cpu_cols), tuple(r.dev_cols), r.dev_hdr, r.dev_last, r.hdr_open, st.run_start,
                st.has_cpu, st.has_dev, st.exact, st.host, len(st.hosts), st.day, st.variant)

    # Reports read once, their layout applied to the reports like it: a report (from one boundary line, a -t
    # time or else its first header, to the next) read by the walk that starts and ends in the same state,
    # adds one report and no unparsed line is a template; each following report whose lines have the same
    # kinds (each steering line's text, each plain line's word count and number flags) is read as it was, its
    # rows at their own lines and with their own report's number and time, without walking its lines.
    bounds = R.report_bounds(texts, steer_at, ntok, stamps, TEMPLATE_MIN_REPORTS)
    code = R.line_codes(texts, steer_at, ntok, stamps, num0, numl) if bounds is not None else None
    si = 0  # next steering line (index into steer)
    k = 0
    nb = 0 if bounds is None else len(bounds) - 1
    while k < nb:
        a, e = int(bounds[k]), int(bounds[k + 1])
        while si < len(steer) and steer[si] < a:
            step(steer[si])
            si += 1
        flush(a)
        before, rep0, nbad, nrun, ncpu = state(), st.report, len(st.bad), len(runs), len(cpu_rows)
        while si < len(steer) and steer[si] < e:
            step(steer[si])
            si += 1
        flush(e)
        k += 1
        rep = st.report
        if (state() != before or rep != rep0 + 1 or len(st.bad) != nbad
                or any(x[4][5] != rep for x in runs[nrun:]) or any(x[2][5] != rep for x in cpu_rows[ncpu:])):
            continue
        rest = bounds[k:nb + 1]
        m = R.alike(code, a, e, rest)  # a template: the reports right after it with its line kinds
        if not m:
            continue
        t_runs = [(x[0] - a, x[1] - a, x[2], x[3]) for x in runs[nrun:]]
        t_cpu = [(x[0] - a, x[1]) for x in cpu_rows[ncpu:]]
        has = (st.has_cpu, st.has_dev)
        starts = rest[:m].astype(np.int64)
        if has_stamp[starts].all():  # (each copy a -t report, its report number past the run's first: no since_boot)
            copies.append((starts, np.arange(st.report + 1, st.report + 1 + m, dtype=np.int64), stamps.us[stamps.pos[starts]],
                           t_runs, t_cpu, st.extra()[0]))
            st.report += m - 1
            st.new_report(stamps[int(starts[-1])], False)  # the last copy's, as the loop below leaves it
        else:
            for a2 in starts.tolist():
                st.new_report(stamps.get(a2), False)
                ex = st.extra()
                runs.extend((a2 + x0, a2 + x1, h, last, ex) for x0, x1, h, last in t_runs)
                cpu_rows.extend((a2 + x0, h, ex) for x0, h in t_cpu)
        st.has_cpu, st.has_dev = has
        k += m
        end = int(bounds[k])
        si = int(np.searchsorted(steer_at, end))
        prev = end
    for i in steer[si:]:
        step(i)
    flush(n)
    # device rows of all runs, in bulk: one batch per header layout
    if runs or any(c[3] for c in copies):
        run_of = np.full(n, -1, dtype=np.int32)
        for r, (a, b_, _, _, _) in enumerate(runs):
            run_of[a:b_] = r
        layouts: dict[tuple, int] = {}  # (a template's runs follow its own walked ones: first seen in runs)
        lay = [layouts.setdefault((h, last), len(layouts)) for _, _, h, last, _ in runs]
        ex = list(zip(*(e for *_, e in runs))) or [()] * len(S.EXTRA)
        infos = [pl.DataFrame([pl.Series("_run", range(len(runs)), dtype=pl.Int32),
                               pl.Series("_lay", lay, dtype=pl.Int32),
                               *(pl.Series(name, ex[k], dtype=S._EXTRA_TYPES[name]) for k, name in enumerate(S.EXTRA))])]
        nrun = len(runs)
        for starts, reps, us, t_runs, _, host in copies:
            m = len(starts)
            for x0, x1, h, last in t_runs:  # one run per copy: ids nrun .. nrun + m - 1
                ids = np.arange(nrun, nrun + m, dtype=np.int32)
                run_of[(starts[:, None] + np.arange(x0, x1, dtype=np.int64)).ravel()] = np.repeat(ids, x1 - x0)
                infos.append(_copy_extras(pl.Series("_run", ids), reps, us, host).with_columns(
                    pl.lit(layouts.setdefault((h, last), len(layouts)), pl.Int32).alias("_lay")))
                nrun += m
        info = pl.concat(infos, how="diagonal")
        rows = (df.lazy().select("line_no", "_toks", "_n", "_num0", "_numl",
                                 pl.Series("_run", run_of)).filter(pl.col("_run") >= 0)
                .join(info.lazy(), on="_run", how="left", maintain_order="left")
                .collect(engine="in-memory"))
        for (hdr, last), k in layouts.items():
            w = len(hdr)
            part = rows.filter((pl.col("_lay") == k) & (pl.col("_n") == w) & ~pl.col("_numl" if last else "_num0"))
            if last:
                cols = [toks.list.last().alias("t0"), *(toks.list.get(j).alias(f"t{j + 1}") for j in range(w - 1))]
            else:
                cols = [toks.list.get(j).alias(f"t{j}") for j in range(w)]
            bt = st.col.batch(("dev", hdr, id(S.DISK_COLS)),
                              lambda: S.Batch("disk_io", hdr, S.DISK_COLS, (hdr[0],), "device", "device"))
            bt.frame = part.select("line_no", *S.EXTRA, *cols)
            bt.clean = True
    if cpu_rows or any(c[4] for c in copies):  # avg-cpu values, in bulk: one batch per header
        hdr_ids: dict[tuple, int] = {}
        infos = [pl.DataFrame([pl.Series("_i", [i for i, _, _ in cpu_rows], dtype=pl.Int64),
                               pl.Series("_h", [hdr_ids.setdefault(h, len(hdr_ids)) for _, h, _ in cpu_rows], dtype=pl.Int32),
                               *(pl.Series(name, col, dtype=S._EXTRA_TYPES[name])
                                 for name, col in zip(S.EXTRA, list(zip(*(e for _, _, e in cpu_rows))) or [()] * len(S.EXTRA)))])]
        for starts, reps, us, _, t_cpu, host in copies:
            for x0, h in t_cpu:
                infos.append(_copy_extras(pl.Series("_i", starts + x0), reps, us, host).with_columns(
                    pl.lit(hdr_ids.setdefault(h, len(hdr_ids)), pl.Int32).alias("_h")))
        info = pl.concat(infos, how="diagonal").sort("_i")  # in line order, as the walk met them
        vals = df.select("line_no", "_toks")[info["_i"]].hstack(info.drop("_i").get_columns())
        for hdr, k in hdr_ids.items():
            part = vals if len(hdr_ids) == 1 else vals.filter(pl.col("_h") == k)
            bt = st.col.batches[("cpu", hdr, id(S.CPU_COLS))]
            bt.frame = part.select("line_no", *S.EXTRA, *(toks.list.get(j).alias(f"t{j}") for j in range(len(hdr))))
            bt.clean = True
    meta = {"date_order": order, "date_order_assumed": assumed}
    return st.finish(texts, **meta)


TEMPLATE_MIN_REPORTS = 4  # fewer reports than this: each is walked


def _copy_extras(key: pl.Series, reps: np.ndarray, us: np.ndarray, host: str | None) -> pl.DataFrame:
    """The extras (S.EXTRA) st.extra() gives the rows of a template's copies: each a -t report of local time `us`
    and number `reps`, past its run's first (since_boot false), beside `key`."""
    m = len(reps)
    return pl.DataFrame([key, pl.Series("host", [host], dtype=pl.String).new_from_index(0, m),
                         pl.Series("_lus", us, dtype=pl.Int64), pl.Series("_xus", [None] * m, dtype=pl.Int64),
                         pl.Series("_q", ["local"], dtype=pl.String).new_from_index(0, m),
                         pl.Series("_key", [None] * m, dtype=pl.Int64), pl.Series("sample_no", reps, dtype=pl.Int64),
                         pl.Series("since_boot", [False], dtype=pl.Boolean).new_from_index(0, m)])
