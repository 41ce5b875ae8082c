"""nvidia-smi: GPU inventory, GPU state samples and the GPU/NIC topology matrix.

Reads, recognised by content (one variant per file):

* ``nvidia-smi -q`` / ``-a`` text of drivers 410 ... 580+ (``Clocks Throttle Reasons`` and
  ``Clocks Event Reasons``, the ``...Counters`` section, old "Single/Double Bit" and new
  "SRAM/DRAM Correctable/Uncorrectable" ECC, retired pages, remapped rows, ``Power Readings`` and
  ``GPU Power Readings`` with "Power Draw" or "Average/Instantaneous Power Draw", MIG subtrees),
  whole or partial (``-q -d PERFORMANCE,TEMPERATURE``), one or many snapshots (marker lines or
  repeated banners). The ``Timestamp`` line is local time (-> UTC with ctx.tz, ``local``); a marker
  line's time wins when present (``sampled``). One gpu_samples row per GPU section per snapshot,
  one gpus row per GPU (first sighting); ``gpu`` is the position of the section in its snapshot,
  which is nvidia-smi's index (PCI order), not the "Minor Number". ``-q -d SECTION`` outputs are the
  same tree with fewer sections; a GPU's block pasted without its ``GPU <bus id>`` line (``-q | grep
  -A8 ...``) is read as one GPU of unknown bus id (variant ``q-text-fragment``). ECC counts also go to
  gpu_ecc, one row per GPU x scope (volatile/aggregate) x memory location x error kind, in -q text
  (old per-location and new SRAM/DRAM layouts) and -q -x XML.
* ``nvidia-smi -q -x`` XML (nvsmi_device_v10 ... v13, ``<clocks_event_reasons>`` or
  ``<clocks_throttle_reasons>``, MIG), parsed with entity declarations refused, one document per
  marker segment or ``<?xml`` declaration.
* ``--query-gpu=... --format=csv`` (``--fields`` states a noheader capture's list; ``--interval`` the
  seconds between untimed samples, kept in ``sample_interval_s``) with header (unit tags ``[%]``, ``[W]``, values with or without
  units) or ``noheader`` (fields from ``ctx.hints["query_fields"]``, or recognised by shape:
  :mod:`forensics.sources.nvidia_smi.csv_shapes`), or stated by the pasted ``nvidia-smi ... --format=csv,noheader``
  command line above the rows; a CSV piped through ``column -s, -t`` (space-aligned) is read back as CSV;
  the ``timestamp`` field is local time;
  ``clocks_event_reasons.active`` / ``clocks_throttle_reasons.active`` bitmasks are decoded into
  the ``reason_*`` flags (nvmlClocksEventReason bits).
* ``nvidia-smi topo -m`` matrices -> gpu_topo (device, peer, link; NICs named through the
  "NIC Legend") and gpus (gpu, cpu_affinity, numa_node).
* the plain ``nvidia-smi`` table (drivers 4xx ... 580+, with or without its date line and Processes
  block) -> gpu_samples, gpus and processes: :mod:`forensics.sources.nvidia_smi.table`.
* ``nvidia-smi dmon`` -> gpu_samples (power, temperatures, sm/mem busy %, clocks, fb used, PCIe MB/s, ECC):
  :mod:`forensics.sources.nvidia_smi.dmon`.
* ``nvidia-smi -L`` -> gpus (gpu, name, uuid; ``mig_mode`` "Enabled" under MIG device lines):
  :mod:`forensics.sources.nvidia_smi.listing`.
* ``nvidia-smi nvlink -gt d`` / ``-gt r`` (and the deprecated ``-g 0|1`` of older drivers) ->
  nvlink_counters: one row per GPU, link, counter (data, raw, counter0/1) and direction (tx, rx),
  the running total as printed (KiB); one sample per collector marker, or per repeated GPU line
  when outputs were pasted one after the other (see :mod:`forensics.sources.nvidia_smi.nvlink`).

PCI bus ids are normalised to ``dddd:bb:dd.f`` in lowercase. "N/A", "[N/A]", "[Not Supported]",
"Requested functionality has been deprecated" become null on purpose; any other value that does not
convert sends its line to unparsed.

Example (the pulsing-utilisation one-liner of ../shared/seeds, ``index,utilization.gpu`` noheader):

>>> from forensics.sources import ParseContext
>>> ctx = ParseContext(host="node01", hints={"query_fields": ["index", "utilization.gpu"]})
>>> res = parse(b"0, 100 %\\n1, 100 %\\n0, 0 %\\n1, 12 %\\n", ctx)
>>> res.meta["variant"]
'csv-noheader-hinted'
>>> res.tables["gpu_samples"].select("sample_no", "gpu", "util_pct").rows()
[(0, 0, 100.0), (0, 1, 100.0), (1, 0, 0.0), (1, 1, 12.0)]

and a partial ``nvidia-smi -q -d PERFORMANCE`` of a V100 (driver 410.48):

>>> q = b'''GPU 00000000:18:00.0
...     Performance State               : P0
...     Clocks Throttle Reasons
...         Idle                        : Not Active
...         SW Power Cap                : Active
...         HW Slowdown                 : Not Active
...             HW Thermal Slowdown     : Not Active
... '''
>>> res = parse(q, ParseContext(host="node01"))
>>> res.tables["gpu_samples"].select("gpu", "pci_bus_id", "pstate", "reason_sw_power_cap",
...                                  "reason_hw_thermal_slowdown", "ts_quality").rows()
[(0, '0000:18:00.0', 'P0', True, False, 'none')]

and two samples of ``nvidia-smi nvlink -gt d`` as the collector stores them (H800, driver 525):

>>> nvl = '''#### forensics-sample ts=2023-06-30T09:20:02.000000+00:00 argv="nvidia-smi nvlink -gt d"
... GPU 0: NVIDIA H800 (UUID: GPU-34bf77d1-c686-6821-79a8-32d326c5039c)
... \\t Link 0: Data Tx: 5863784 KiB
... \\t Link 0: Data Rx: 5863677 KiB
... #### forensics-sample ts=2023-06-30T09:20:12.000000+00:00 argv="nvidia-smi nvlink -gt d"
... GPU 0: NVIDIA H800 (UUID: GPU-34bf77d1-c686-6821-79a8-32d326c5039c)
... \\t Link 0: Data Tx: 1390774681 KiB
... \\t Link 0: Data Rx: 1387831436 KiB
... '''
>>> res = parse(nvl.encode(), ParseContext(host="node01"))
>>> res.tables["nvlink_counters"].select("sample_no", "link", "counter", "direction", "value").rows()
[(0, 0, 'data', 'tx', 5863784), (0, 0, 'data', 'rx', 5863677),
 (1, 0, 'data', 'tx', 1390774681), (1, 0, 'data', 'rx', 1387831436)]
"""
from __future__ import annotations

import polars as pl

from forensics import schema
from forensics.layout import MARKER_PREFIX
from forensics.sources._base import (
    ParseContext, ParseResult, Sniff, head_text, result, split_lines, unparsed_frame, unparsed_rows,
)
from forensics.sources._shell import take_shell_lines
from forensics.sources.nvidia_smi import dmon, listing, nvlink, q_text, q_xml, query_csv, recognise, table, topo
from forensics.sources.nvidia_smi.common import add_time, ecc_table, frame

NAME = "nvidia_smi"
VERSION = 23  # 23: nvidia-smi -L whose last line was cut short (no closing parenthesis, perhaps a cut UUID) reads it as that GPU's row (uuid null where cut), meta cut_last_line (it was unparsed); a -q -x document cut short inside a GPU gives that GPU a row from its elements complete before the cut, only the lines from the cut on unparsed, meta cut (it gave no row, every line of the GPU unparsed); 22: a --query-gpu command continued with backslashes ("nvidia-smi --query-gpu=... \\" / "--format=csv,noheader") states the fields of the rows below it, a ">> output:" caption between them is the command's (the file was not recognised); 21: a backtick before the table's first border or the NVSMI LOG banner (a paste opened as Markdown inline code) and a border the paste cut short ("+-------+-----") are structure (they were unparsed); 20: nvidia-smi dmon (the "# gpu ..." and "# Idx ..." header lines, "\\#" escaped in Markdown too) is recognised and read into gpu_samples (was not recognised); 19: nvidia-smi -L (GPU lines with their UUID, MIG device lines) is recognised and read into gpus (was not recognised), where no other nvidia-smi output follows it; 18: no change of the parser: a paste behind a comment mark on every line ("% " MATLAB, "# ", "// ", "-- ", "; ") is read without it by the shared paste layer (_quote VERSION 6); a new real fixture (-q of two TITAN Z in MATLAB comments); 17: no change of the parser: lines that only open or close a code fence or comment ("```", "/*", "*/") are skipped and counted, and a paste behind a list mark (" * ", "- ", "| ") is read without it, by the shared paste layer (_quote VERSION 5); 16: a value past a double's range (a run of hundreds of digits) is null, not inf (-q values, the table's, query CSV num: fields, compute-apps memory); a noheader CSV with such a value in its index column no longer raises OverflowError (the file was lost); 15: two new real fixtures (-q -d TEMPERATURE of 530, -q -d POWER of 375), read as before (no parser change); 14: the summary table of drivers 270-295 with its index written "0\\." (a Markdown page: the Arch wiki's 290.10 example) is read (its GPU, state and process lines were unparsed: 0 rows); 13: a -q paste with its indent lost that starts inside a sub-section (indented lines of a section cut above, then the GPU-level lines at column 0) is read (the dedent was judged from the first line only); 12: a -q paste that starts at one of a GPU record's own lines ("Product Name", "Serial Number": no banner, no GPU line), indented or with its indent lost, is recognised and read as a fragment GPU (was unrecognised, or its first lines unparsed); 11: a paste whose lines end in Markdown hard line breaks (" \\") is read without them (meta hard_breaks); 10: lines that only mark an elision ("...", "[...]") are skipped and counted (sources.parse_pasted), no longer unparsed; 9: an integer of more than 20 digits is out of range (int() refused strings of over 4,300 digits: the file was lost); 8: the Windows summary table (TCC/WDDM or Driver-Model header, WDDM/TCC/MCDM on the GPU line) is read (its GPU lines were unparsed); 7: the summary table of drivers 270-295 (Nb., Volatile ECC SB / DB, "64 C", "577MB") is read (its lines were unparsed); 6: a paste quoted or indented as a block (markdown blockquote, mail reply) is read without the prefix
# 5: the command line and the shell's `time` report around a paste go to meta (not unparsed)
# 4: the plain table, csv,noheader with the pasted command, column -t, topo -m ANSI header, 610 CSV header
TABLES = ("gpus", "gpu_samples", "gpu_ecc", "gpu_topo", "nvlink_counters", "processes")
DESCRIPTION = ("nvidia-smi -q text, -q -x XML, --query-gpu CSV, topo -m, nvlink -gt and the plain nvidia-smi table: GPU "
               "inventory, samples, processes "
               "(util, power, clocks, throttle reasons, ECC, row remaps), ECC counts per memory location, GPU/NIC topology, "
               "NVLink traffic counters")


def sniff(head: bytes) -> Sniff:
    """How sure the start of an input is one of the six nvidia-smi outputs this source reads, and why.
    (A paste's Markdown hard line breaks, quote prefixes and quoted-printable encoding are the shared
    paste layer's: sources.recognise / sniff_pasted weigh the head without them.)"""
    text = head_text(head)
    lines = text.replace("\r", "").split("\n")
    if len(head) >= 65536 and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut
    return recognise.classify(lines, None, strict=True)[1]


def sniff_stated(head: bytes, hints: dict) -> Sniff:
    """With the user's --fields (hint query_fields): rows of exactly that many fields are its CSV."""
    fields = (hints or {}).get("query_fields")
    if not fields:
        return Sniff(0.0, "no field list stated")
    n = len(fields.split(",") if isinstance(fields, str) else fields)
    rows = [t for t in head_text(head).replace("\r", "").split("\n")[:200] if t.strip()]
    rows = rows[:-1] if len(head) >= 65536 and len(rows) > 1 else rows
    fit = sum(1 for t in rows if t.count(",") == n - 1)
    return Sniff.ratio(fit, len(rows), f"have the {n} fields stated by --fields")


def parse(data: bytes, ctx: ParseContext) -> ParseResult:
    res = _parse(data, ctx)
    if res.meta.get("variant") == "unknown" or not res.unparsed.height:
        return res
    # the prompt with the nvidia-smi command above a paste, and bash's `time` report below it: facts, not junk
    up, facts = take_shell_lines(res.unparsed, r"nvidia-smi")
    if facts:
        res.unparsed = up
        res.meta = {**res.meta, **facts}
    return res


def _parse(data: bytes, ctx: ParseContext) -> ParseResult:
    # (a paste's Markdown hard line breaks, quote prefixes, quoted-printable encoding and elision marks are
    # the shared paste layer's: sources.parse_bytes / parse_pasted read the input without them first)
    return _parse_lines(split_lines(data), ctx)


def _classify_head(lines: pl.DataFrame) -> list[str]:
    """The first lines of `lines` as Python strings, as many as recognise.classify reads: up to its 401st line that
    is neither blank nor a marker (where it stops) and 16 more (it looks at most 11 lines ahead of a line); all of
    them when there are fewer. The CSV and nvlink -gt series are read in polars: converting each of their lines to a
    Python string only to classify the file was a quarter of the parse of a query-gpu series."""
    n, k = lines.height, 2048
    while True:
        head = lines.get_column("text").head(k).to_list()
        if len(head) >= n:
            return head
        seen = 0
        for i, t in enumerate(head):
            if t.strip() and not t.startswith(MARKER_PREFIX):
                seen += 1
                if seen > 400:
                    if i + 16 <= len(head):
                        return head
                    break
        k *= 4


def _parse_lines(lines: pl.DataFrame, ctx: ParseContext) -> ParseResult:
    n = lines.height
    head = _classify_head(lines)
    kind, verdict = recognise.classify(head, ctx)
    if kind is None:
        rest = lines.filter(pl.col("text").str.strip_chars() != "")
        up = unparsed_frame(rest, "not recognised as nvidia-smi output (-q, -q -x, --query-gpu CSV, topo -m, nvlink -gt, "
                            "the nvidia-smi table): "
                            + verdict.reason, ctx, NAME)
        return result(NAME, ctx, n, {}, up, variant="unknown")
    aligned = kind == "csv-aligned"
    if aligned:  # a CSV piped through `column -s, -t`: its aligned header and rows back to CSV
        kind, original = "csv", lines
        lines = query_csv.decolumn(lines)
    if kind == "csv":
        out = query_csv.parse(lines, ctx)
        ups = [unparsed_frame(f, r, ctx, NAME) for f, r in out["unparsed"] if f.height]
        if aligned:  # unparsed lines as the file has them, not as re-joined
            out["meta"]["variant"] = "csv-column-aligned"
            ups = [u.with_columns(pl.col("line_no").replace_strict(original["line_no"], original["text"],
                                                                   return_dtype=pl.String).alias("text")) for u in ups]
        tables = {}
        s = out["samples"]
        if s is not None:
            s = add_time(s, ctx.tz, ctx.capture_time, prefer_local=True)
            s = s.select([c for c in s.columns if c in schema.polars_schema("gpu_samples")])
        tables["gpu_samples"] = s if s is not None else frame("gpu_samples", [])
        tables["gpus"] = out["gpus"] if out["gpus"] is not None else frame("gpus", [])
        if out.get("processes") is not None:
            tables["processes"] = _process_gpus(out["processes"], out["samples"])
        return result(NAME, ctx, n, tables, ups, **_tz_note(tables, ctx, out["meta"]))
    if kind == "nvlink":
        fast = nvlink.parse_series(lines["text"])
        if fast is not None:
            rows, meta = fast  # (result() conforms the frame to the table's schema)
            return result(NAME, ctx, n, {"nvlink_counters": rows}, None, **meta)
    mod = {"text": q_text, "xml": q_xml, "topo": topo, "nvlink": nvlink, "table": table, "list": listing,
           "dmon": dmon}[kind]
    texts = head if len(head) == n else lines.get_column("text").to_list()
    parts = mod.parse(texts, ctx)
    up = unparsed_rows(parts.unparsed, ctx, NAME)
    if kind == "nvlink":
        return result(NAME, ctx, n, {"nvlink_counters": frame("nvlink_counters", parts.samples)}, up, **parts.meta)
    if kind == "dmon":
        samples = add_time(frame("gpu_samples", parts.samples), ctx.tz, ctx.capture_time, prefer_local=False)
        if samples.height:  # a capture time dates only the first cycle: dmon prints none
            samples = samples.with_columns(
                pl.when(pl.col("sample_no") == 0).then(pl.col("ts")).alias("ts"),
                pl.when(pl.col("sample_no") == 0).then(pl.col("ts_quality")).otherwise(pl.lit("none")).alias("ts_quality"))
        return result(NAME, ctx, n, {"gpu_samples": samples}, up, **_tz_note({"gpu_samples": samples}, ctx, parts.meta))
    if kind == "list":
        return result(NAME, ctx, n, {"gpus": frame("gpus", parts.gpus)}, up, **parts.meta)
    if kind == "topo":
        tables = {"gpu_topo": frame("gpu_topo", parts.topo), "gpus": frame("gpus", parts.gpus)}
    else:
        helpers = {"_ts_utc": pl.Datetime("us", "UTC"), "_ts_local": pl.Datetime("us")}
        samples = add_time(frame("gpu_samples", parts.samples, extra=helpers), ctx.tz, ctx.capture_time,
                           prefer_local=False)
        tables = {"gpu_samples": samples, "gpu_ecc": ecc_table(samples, parts.ecc), "gpus": frame("gpus", parts.gpus)}
        if parts.processes:
            tables["processes"] = frame("processes", parts.processes)
    return result(NAME, ctx, n, tables, up, **_tz_note(tables, ctx, parts.meta))


def _process_gpus(procs: pl.DataFrame, samples: pl.DataFrame | None) -> pl.DataFrame:
    """--query-compute-apps rows name their GPU by UUID: its index, where a --query-gpu block of the same
    paste lists index and UUID."""
    if "gpu_uuids" not in procs.columns or samples is None or not {"uuid", "gpu"} <= set(samples.columns):
        return procs
    known = samples.filter(pl.col("uuid").is_not_null() & pl.col("gpu").is_not_null()).unique("uuid", keep="first")
    index = dict(zip(known["uuid"].to_list(), known["gpu"].to_list()))
    gpus = pl.col("gpu_uuids").list.eval(pl.element().replace_strict(index, default=None, return_dtype=pl.Int32)
                                         ).list.drop_nulls()
    return procs.with_columns(pl.when(gpus.list.len() > 0).then(gpus).alias("gpus"))


def _stated_interval(tables: dict[str, pl.DataFrame], ctx: ParseContext, meta: dict) -> dict:
    """The interval the user stated (hint interval_s) on every gpu_samples row; the sample count in meta."""
    s = tables.get("gpu_samples")
    if s is None or not s.height:
        return meta
    meta = {**meta, "samples": int(s["sample_no"].n_unique())}
    iv = (ctx.hints or {}).get("interval_s")
    if isinstance(iv, (int, float)) and not isinstance(iv, bool) and 0 < iv <= 86400:
        tables["gpu_samples"] = s.with_columns(pl.lit(float(iv), dtype=pl.Float64).alias("sample_interval_s"))
        meta["interval_s"] = float(iv)
    return meta


def _tz_note(tables: dict[str, pl.DataFrame], ctx: ParseContext, meta: dict) -> dict:
    """Say so when local times were converted without a known zone (taken as UTC); the stated interval."""
    meta = _stated_interval(tables, ctx, meta)
    s = tables.get("gpu_samples")
    if ctx.tz is None and s is not None and s.height and (s["ts_quality"] == "local").any():
        meta = {**meta, "tz_assumed": "UTC"}
    return meta
