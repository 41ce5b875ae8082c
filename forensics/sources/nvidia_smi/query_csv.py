"""`nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]` (single call or `-l N` series), and the
`--query-compute-apps` blocks pasted with it (:mod:`.compute_apps`).

The header names the fields as they were queried, with unit tags ("utilization.gpu [%]"); values
carry units unless `nounits` ("100 %", "70.44 W", "1980 MHz"). Without a header the fields come
from ``ctx.hints["query_fields"]`` (``--fields``) or, failing that, from the shape of the rows
(:mod:`.csv_shapes`); otherwise the rows are unparsed with the reason.

Conversion is vectorised (polars). A row whose value does not convert is not half-kept: its line
goes to unparsed naming the field. Samples: the k-th row of a GPU (index / bus id / uuid) after a
marker or header line belongs to sample k, so `-l N` series and shell loops both number correctly.
"""
from __future__ import annotations

import re
from typing import Any

import polars as pl

from forensics.layout import parse_marker
from forensics.sources._base import marker_split
from forensics.sources._bounded import to_float
from forensics.sources.nvidia_smi import compute_apps, csv_shapes
from forensics.sources.nvidia_smi.common import NA_TOKENS, REASON_BITS

# Aliases nvidia-smi accepts (`nvidia-smi --help-query-gpu`), folded to one spelling.
ALIASES = {
    "gpu_name": "name", "gpu_serial": "serial", "gpu_uuid": "uuid", "gpu_bus_id": "pci.bus_id",
    "clocks.current.sm": "clocks.sm", "clocks.current.graphics": "clocks.gr", "clocks.current.memory": "clocks.mem",
    "clocks.max.graphics": "clocks.max.gr", "clocks.max.memory": "clocks.max.mem",
    "clocks.max.streaming_multiprocessor": "clocks.max.sm",
    "pcie.link.gen.gpucurrent": "pcie.link.gen.current", "pcie.link.gen.gpumax": "pcie.link.gen.max",
    "retired_pages.sbe": "retired_pages.single_bit_ecc.count", "retired_pages.dbe": "retired_pages.double_bit.count",
}
_REASON_SUFFIX = {
    "gpu_idle": "reason_gpu_idle", "applications_clocks_setting": "reason_applications_clocks",
    "sw_power_cap": "reason_sw_power_cap", "hw_slowdown": "reason_hw_slowdown",
    "hw_thermal_slowdown": "reason_hw_thermal_slowdown", "hw_power_brake_slowdown": "reason_hw_power_brake",
    "sync_boost": "reason_sync_boost", "sw_thermal_slowdown": "reason_sw_thermal_slowdown",
    "display_clocks_setting": "reason_display_clocks",
}

# canonical field -> (column, kind, priority among fields feeding the same column; lower wins)
SPECS: dict[str, tuple[str, str, int]] = {
    "timestamp": ("_ts_local", "ts", 0),
    "index": ("gpu", "int32", 0),
    "uuid": ("uuid", "str", 0),
    "pci.bus_id": ("pci_bus_id", "pci", 0),
    "name": ("name", "str", 0),
    "serial": ("serial", "str", 0),
    "vbios_version": ("vbios", "str", 0),
    "driver_version": ("driver_version", "str", 0),
    "persistence_mode": ("persistence_mode", "str", 0),
    "mig.mode.current": ("mig_mode", "str", 0),
    "pstate": ("pstate", "pstate", 0),
    "pcie.link.gen.max": ("pcie_gen_max", "int32", 0),
    "pcie.link.gen.current": ("pcie_gen", "int32", 0),
    "pcie.link.width.max": ("pcie_width_max", "int32", 0),
    "pcie.link.width.current": ("pcie_width", "int32", 0),
    "fan.speed": ("fan_pct", "num:%", 0),
    "temperature.gpu": ("temp_c", "num:C", 0),
    "temperature.memory": ("mem_temp_c", "num:C", 0),
    "utilization.gpu": ("util_pct", "num:%", 0),
    "utilization.memory": ("mem_util_pct", "num:%", 0),
    "memory.total": ("mem_total_mib", "num:MiB", 0),
    "memory.used": ("mem_used_mib", "num:MiB", 0),
    "power.draw": ("power_w", "num:W", 0),
    "power.draw.average": ("power_w", "num:W", 1),
    "power.draw.instant": ("power_w", "num:W", 2),
    "enforced.power.limit": ("power_limit_w", "num:W", 0),
    "power.limit": ("power_limit_w", "num:W", 1),
    "clocks.sm": ("sm_clock_mhz", "num:MHz", 0),
    "clocks.gr": ("gr_clock_mhz", "num:MHz", 0),
    "clocks.mem": ("mem_clock_mhz", "num:MHz", 0),
    "clocks.max.sm": ("max_sm_clock_mhz", "num:MHz", 0),
    "clocks_event_reasons.active": ("clocks_event_reasons", "mask", 0),
    "ecc.errors.corrected.volatile.total": ("ecc_sbe_volatile", "int", 0),
    "ecc.errors.uncorrected.volatile.total": ("ecc_dbe_volatile", "int", 0),
    "ecc.errors.corrected.aggregate.total": ("ecc_sbe_aggregate", "int", 0),
    "ecc.errors.uncorrected.aggregate.total": ("ecc_dbe_aggregate", "int", 0),
    "retired_pages.single_bit_ecc.count": ("retired_pages_sbe", "int", 0),
    "retired_pages.double_bit.count": ("retired_pages_dbe", "int", 0),
    "retired_pages.pending": ("retired_pages_pending", "yesno", 0),
    "remapped_rows.correctable": ("remapped_correctable", "int", 0),
    "remapped_rows.uncorrectable": ("remapped_uncorrectable", "int", 0),
    "remapped_rows.pending": ("remap_pending", "yesno", 0),
    "remapped_rows.failure": ("remap_failure", "yesno", 0),
}
SPECS.update({f"clocks_event_reasons.{k}": (v, "flag", 0) for k, v in _REASON_SUFFIX.items()})
SPECS.update({
    "clocks_event_reasons_counters.sw_power_cap": ("clocks_event_sw_power_cap_us", "count:us", 0),
    "clocks_event_reasons_counters.sync_boost": ("clocks_event_sync_boost_us", "count:us", 0),
    "clocks_event_reasons_counters.sw_thermal_slowdown": ("clocks_event_sw_thermal_us", "count:us", 0),
    "clocks_event_reasons_counters.hw_thermal_slowdown": ("clocks_event_hw_thermal_us", "count:us", 0),
    "clocks_event_reasons_counters.hw_power_brake_slowdown": ("clocks_event_hw_power_brake_us", "count:us", 0),
})
# Everything else nvidia-smi can be asked for is read (its values are checked only for field count).
OTHER_FIELDS = {
    "count", "memory.free", "memory.reserved", "compute_mode", "compute_cap", "display_mode", "display_active",
    "accounting.mode", "accounting.buffer_size", "driver_model.current", "driver_model.pending", "pci.domain",
    "pci.bus", "pci.device", "pci.device_id", "pci.sub_device_id", "pcie.link.gen.hostmax", "mig.mode.pending",
    "ecc.mode.current", "ecc.mode.pending", "power.management", "power.default_limit", "power.min_limit",
    "power.max_limit", "clocks.video", "clocks.current.video", "clocks.max.video", "clocks.max.gr",
    "clocks.max.mem", "clocks.applications.graphics", "clocks.applications.memory",
    "clocks.default_applications.graphics", "clocks.default_applications.memory", "clocks_event_reasons.supported",
    "temperature.gpu.tlimit", "inforom.img", "inforom.oem", "inforom.ecc", "inforom.pwr", "gom.current",
    "gom.pending", "reset_status.reset_required", "reset_status.drain_and_reset_recommended", "fabric.state",
    "fabric.status", "encoder.stats.sessioncount", "encoder.stats.averagefps", "encoder.stats.averagelatency",
    "protected_memory.total", "protected_memory.used", "protected_memory.free", "vgpu_device_capability.fractional_multivgpu",
    "pcie.link.width.max", "utilization.encoder", "utilization.decoder", "utilization.jpeg", "utilization.ofa",
    "gpu_operation_mode.current", "platform.chassis_serial_number", "addressing_mode", "module_id",
}

_FIELD_RE = r"[A-Za-z_][A-Za-z0-9_.]*(?: \[[^\],]*\])?"
_HEADER_RE = rf"^\s*{_FIELD_RE}(?:\s*,\s*{_FIELD_RE})*\s*$"
# a shell prompt or command line pasted above the output ("$ nvidia-smi --query-gpu=... --format=csv")
PROMPT_RE = r"(?:^|[\s$#>])(?:sudo )?nvidia-smi(?:\s|$)"
# ... which, with --format=csv,noheader, is the only place the field list of the rows below it is stated
_COMMAND = re.compile(r"(?:^|[\s$#>/])(?:sudo )?nvidia-smi(?:\.exe)?\s.*?--query-(gpu|compute-apps)[= ]([A-Za-z0-9_.,]+)")
_NOHEADER = re.compile(r"--format[= ]\S*noheader")


_GAP = re.compile(r"\s{2,}")


def aligned_cells(line: str) -> list[str]:
    """The cells of a line of a CSV re-aligned by ``column -s, -t`` (cells apart by two or more spaces)."""
    return _GAP.split(line.strip())


def aligned_header(line: str) -> list[str] | None:
    """The fields of a --query-gpu header piped through ``column -s, -t`` (no commas, cells apart by 2+ spaces:
    ``index   utilization.gpu [%]   power.draw [W]``), or None.

    >>> aligned_header("    index   utilization.gpu [%]   fan.speed [%]   temperature.gpu")
    ['index', 'utilization.gpu', 'fan.speed', 'temperature.gpu']
    """
    if "," in line or len(line) > 4096 or "  " not in line.strip():
        return None
    cells = aligned_cells(line)
    return header_fields(", ".join(cells)) if len(cells) >= 2 else None


def decolumn(lines: pl.DataFrame) -> pl.DataFrame:
    """`lines` with each ``column -t`` aligned header and the lines below it (up to a blank line) written back as
    CSV (the cells joined by ", ", so that a row with a cell too many or too few is reported with its count);
    other lines as they are. For the few lines of a paste."""
    out, inside = [], False
    for t in lines["text"].to_list():
        if not t or not t.strip():
            inside = False
            out.append(t)
        elif "," not in t and aligned_header(t) is not None:
            inside = True
            out.append(", ".join(aligned_cells(t)))
        else:
            out.append(", ".join(aligned_cells(t)) if inside and "," not in t else t)
    return lines.with_columns(pl.Series("text", out, dtype=pl.String))


def command_fields(line: str) -> tuple[str, list[str]] | None:
    """('gpu' | 'compute-apps', the fields) of an ``nvidia-smi --query-gpu=... --format=csv,noheader`` command line
    pasted above its rows, or None (no such command, another format, or a field list nvidia-smi would not print).

    >>> command_fields("❯ nvidia-smi --loop=1 --query-gpu=temperature.gpu,utilization.gpu --format=csv,noheader,nounits")
    ('gpu', ['temperature.gpu', 'utilization.gpu'])
    >>> command_fields("$ nvidia-smi --query-gpu=index,utilization.gpu --format=csv") is None  # its header follows
    True
    """
    if "--query-" not in line or len(line) > 4096 or not _NOHEADER.search(line):
        return None  # (a command line is short; a long one is not searched, the patterns backtrack with length)
    m = _COMMAND.search(line)
    if m is None:
        return None
    if m.group(1) == "gpu":
        f = header_fields(m.group(2))
        return ("gpu", f) if f and all(x in SPECS or x in OTHER_FIELDS for x in f) else None
    f = compute_apps.header_fields(m.group(2))
    return ("compute-apps", f) if f else None
CAPTION_RE = r"(?i)^[>#*\s]*(?:output|result|results)\s*:\s*$"  # ">> output:" between a command and its rows
MAX_CONTINUED = 8  # lines of one command joined at its trailing backslashes


def continued(texts: list[str], i: int) -> tuple[str, int]:
    """The command that starts at texts[i], its lines that end in a backslash joined to the next (``nvidia-smi
    --query-gpu=... \\`` / ``--format=csv,noheader``), and the index of its last line."""
    line, j = texts[i].rstrip(), i
    while line.endswith("\\") and j + 1 < len(texts) and j - i < MAX_CONTINUED and len(line) <= 4096:
        j += 1
        line = line[:-1].rstrip() + " " + texts[j].strip()
    return line, j


def canonical(field: str) -> str:
    f = field.strip().lower()
    f = re.sub(r"\s*\[[^\]]*\]$", "", f)
    f = ALIASES.get(f, f)
    if f.startswith("clocks_throttle_reasons."):
        f = "clocks_event_reasons." + f.split(".", 1)[1]
    return f


def header_fields(line: str) -> list[str] | None:
    """The canonical fields of a header line, or None when `line` is not a --query-gpu header."""
    if not re.match(_HEADER_RE, line):
        return None
    fields = [canonical(f) for f in line.split(",")]
    known = sum(1 for f in fields if f in SPECS or f in OTHER_FIELDS)
    # half the names known; or a long list from a newer driver (610 prints ~240 fields, most of them new
    # names such as power_smoothing.*, fabric.health.*): LONG_KNOWN known names are nvidia-smi's header all the same
    return fields if known and (known * 2 >= len(fields) or known >= LONG_KNOWN) else None


LONG_KNOWN = 16


def infer_fields(rows: list[str]) -> tuple[str, ...] | None:
    """The field list of noheader rows, recognised by shape (see :mod:`.csv_shapes`), else None."""
    return csv_shapes.infer(rows)[0]


def stated_hints(fields: str | None = None, interval: float | None = None) -> dict[str, Any]:
    """Parser hints from what the user states (``--fields``, ``--interval``); ValueError names what is wrong.

    >>> stated_hints("index, utilization.gpu", 2)
    {'query_fields': ['index', 'utilization.gpu'], 'interval_s': 2.0}
    """
    out: dict[str, Any] = {}
    if fields is not None:
        names = [canonical(f) for f in fields.split(",")]
        if not all(names):
            raise ValueError(f"--fields {fields!r}: an empty field name")
        unknown = [f for f in names if f not in SPECS and f not in OTHER_FIELDS]
        if unknown:
            raise ValueError(f"--fields: unknown --query-gpu field(s) {', '.join(unknown)} "
                             "(nvidia-smi --help-query-gpu lists them)")
        out["query_fields"] = names
    if interval is not None:
        if not (0 < float(interval) <= 86400):
            raise ValueError(f"--interval {interval}: seconds between samples, above 0 and at most 86400")
        out["interval_s"] = float(interval)
    return out


def _hint_fields(ctx) -> list[str] | None:
    q = (ctx.hints or {}).get("query_fields") if ctx is not None else None
    if not q:
        return None
    if isinstance(q, str):
        q = q.split(",")
    if not isinstance(q, (list, tuple)) or not all(isinstance(f, str) for f in q) or len(q) > 200:
        return None  # (a bundle's hints are not trusted: only a list of names is read)
    return [canonical(f) for f in q]


def _convert(raw: pl.Expr, kind: str) -> tuple[pl.Expr, pl.Expr]:
    """(value, bad) expressions for one raw field; N/A tokens give null and are not bad."""
    na = raw.is_null() | raw.is_in(list(NA_TOKENS))
    r = pl.when(na).then(None).otherwise(raw)
    if kind == "ts":
        frac = r.str.contains(".", literal=True)  # a value fits at most one of the two forms
        val = pl.when(frac).then(r.str.strptime(pl.Datetime("us"), "%Y/%m/%d %H:%M:%S%.f", strict=False)).otherwise(
            r.str.strptime(pl.Datetime("us"), "%Y/%m/%d %H:%M:%S", strict=False))
    elif kind in ("int", "int32"):
        val = r.str.strip_suffix("x").cast(pl.Int64 if kind == "int" else pl.Int32, strict=False)
    elif kind.startswith("count:"):
        unit = re.escape(kind[6:])
        val = (pl.when(r.str.contains(rf"^[0-9]+(?: ?{unit})?$"))
               .then(r.str.replace(rf" ?{unit}$", "")).otherwise(None).cast(pl.Int64, strict=False))
    elif kind.startswith("num:"):
        unit = re.escape(kind[4:])
        val = to_float(r.str.extract(rf"^(-?[0-9]+(?:\.[0-9]+)?)(?: ?{unit})?$", 1))  # (past a double: null, not inf)
    elif kind == "pci":
        low = r.str.to_lowercase()
        val = pl.when(low.str.contains(r"^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]$")).then(
            low.str.replace(r"^0*([0-9a-f]{4}):", "$1:")).otherwise(None)
    elif kind == "mask":
        val = r.str.strip_prefix("0x").str.strip_prefix("0X").str.to_integer(base=16, strict=False)
    elif kind == "flag":
        low = r.str.to_lowercase()
        val = pl.when(low == "active").then(True).when(low == "not active").then(False).otherwise(None)
    elif kind == "yesno":
        low = r.str.to_lowercase()
        val = pl.when(low == "yes").then(True).when(low == "no").then(False).otherwise(None)
    elif kind == "pstate":
        val = pl.when(r.str.contains(r"^P[0-9]{1,2}$")).then(r).otherwise(None)
    else:
        val = r
    return val, r.is_not_null() & val.is_null()


# from this many rows a field is converted through its distinct values where they repeat (an hour of 8 GPUs at
# 1 s is 28,800 rows: 0.75x the CPU; 4,800 rows are no quicker)
_SERIES_ROWS = 8192
_UNIQUE_ROWS = 256  # (bus ids: from this many rows)


def _convert_series(raw: pl.Series, kind: str, strip: bool = False) -> pl.Series:
    """_convert applied to a column (`strip`: to its values with blanks taken off each end), through its distinct
    values when they repeat a lot (the conversion is value by value: the same column either way)."""
    if kind == "ts" and raw.len() >= _UNIQUE_ROWS:
        return _convert_stamps(raw.str.strip_chars() if strip else raw)
    conv = _convert(pl.col("r").str.strip_chars() if strip else pl.col("r"), kind)[0]
    if raw.len() >= _UNIQUE_ROWS:
        uniq = raw.drop_nulls().unique()
        if uniq.len() * 4 <= raw.len():
            done = pl.DataFrame({"r": uniq}).select(conv.alias("c"))["c"]
            if done.dtype != pl.Null:
                return raw.replace_strict(uniq, done, default=None, return_dtype=done.dtype)
    return pl.DataFrame({"r": raw}).select(conv.alias("c"))["c"]


_STAMP_MS = r"^[0-9]{4}/[0-9]{2}/[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}$"  # as nvidia-smi prints them


def _convert_stamps(raw: pl.Series) -> pl.Series:
    """_convert(.., "ts") of a column: the stamps of nvidia-smi's own form (``2026/12/05 04:00:00.690``) read by
    their fixed positions (each distinct date once, the time of day as whole numbers), any other value and any
    such stamp whose date or time of day strptime would not take (a 25th hour, a leap second, 30 February)
    through _convert as before; the same column (strptime's ``%.f`` of three digits is milliseconds)."""
    r = pl.col("r")
    fixed = raw.str.contains(_STAMP_MS).fill_null(False)
    if not fixed.any():
        return pl.DataFrame({"r": raw}).select(_convert(r, "ts")[0].alias("c"))["c"]
    days = raw.filter(fixed).str.slice(0, 10).unique()
    day_of = days.str.strptime(pl.Date, "%Y/%m/%d", strict=False)
    h, mi, se, ms = (r.str.slice(a, b).cast(pl.Int64, strict=False) for a, b in ((11, 2), (14, 2), (17, 2), (20, 3)))
    day = r.str.slice(0, 10).replace_strict(days, day_of, default=None, return_dtype=pl.Date)
    us = (day.cast(pl.Datetime("us")).cast(pl.Int64)
          + ((h * 60 + mi) * 60 + se) * 1_000_000 + ms * 1000).cast(pl.Datetime("us"))
    ok = pl.lit(fixed) & day.is_not_null() & (h <= 23) & (mi <= 59) & (se <= 59)
    got = pl.DataFrame({"r": raw}).select(pl.when(ok).then(us).alias("c"), ok.alias("ok"))
    out, ok_ = got["c"], got["ok"]
    if ok_.all():
        return out
    idx = (~ok_).arg_true()
    slow = pl.DataFrame({"r": raw.gather(idx)}).select(_convert(r, "ts")[0].alias("c"))["c"]
    return out.scatter(idx, slow)


def parse(lines: pl.DataFrame, ctx) -> dict[str, Any]:
    """Returns {"samples": frame, "gpus": frame, "unparsed": [(frame, reason expr)...], "meta": {...}}."""
    df = marker_split(lines).with_columns(pl.col("text").str.strip_chars().alias("_s"))
    fields_of: dict[int, list[str]] = {}
    # a header starts with a field name: the full pattern runs on those lines only
    cand = (df.filter(~pl.col("is_marker") & pl.col("_s").str.contains(r"^[A-Za-z_]"))
            .filter(pl.col("_s").str.contains(_HEADER_RE)))
    apps_of: dict[int, list[str]] = {}  # --query-compute-apps headers (their blocks go to `processes`)
    meta_cmd = False  # a command line stated a field list
    for ln, text in zip(cand["line_no"].to_list(), cand["_s"].to_list()):
        f = header_fields(text)
        if f:
            fields_of[ln - 1] = f
        elif (f := compute_apps.header_fields(text)):
            fields_of[ln - 1] = apps_of[ln - 1] = f
    # a pasted "nvidia-smi --query-gpu=... --format=csv,noheader" command line states the fields of the rows below it
    cmds = df.filter(~pl.col("is_marker") & pl.col("_s").str.contains("--query-", literal=True))
    texts = None
    for ln, text in zip(cmds["line_no"].to_list(), cmds["_s"].to_list()):
        last = ln - 1
        if text.endswith("\\"):  # a command continued on the next lines: read whole, its rows after its last line
            texts = texts if texts is not None else df["_s"].to_list()  # (row i is line i + 1)
            if texts[last:last + 1] == [text]:
                text, last = continued(texts, last)
        c = command_fields(text)
        if c is not None:
            for k in range(ln - 1, last + 1):  # (its continuation lines are the command's, not rows)
                fields_of[k] = c[1]
                if c[0] == "compute-apps":
                    apps_of[k] = c[1]
            meta_cmd = True
            texts = texts if texts is not None else df["_s"].to_list()
            k = next((k for k in range(last + 1, min(last + 4, len(texts))) if texts[k]), None)
            if k is not None and re.match(CAPTION_RE, texts[k]):  # ">> output:" above the rows: the command's
                fields_of[k] = c[1]
                if c[0] == "compute-apps":
                    apps_of[k] = c[1]
    hdr_lines = pl.Series([i + 1 for i in fields_of], dtype=pl.Int64)
    df = df.with_columns(pl.col("line_no").is_in(hdr_lines.implode()).alias("_hdr"))
    df = df.with_columns(pl.col("_hdr").cum_sum().alias("_block"))
    is_data = ~pl.col("is_marker") & ~pl.col("_hdr") & (pl.col("_s") != "")
    unparsed: list[tuple[pl.DataFrame, Any]] = []
    markers = df.filter(pl.col("is_marker"))
    if markers.height:  # a marker line that does not parse still separates samples; report it
        bad_marker = markers.filter(pl.Series([parse_marker(t) is None for t in markers["text"]], dtype=pl.Boolean))
        if bad_marker.height:
            unparsed.append((bad_marker, "malformed forensics-sample marker line"))
    hdr_idx = sorted(fields_of)
    block_fields: dict[int, tuple[str, ...] | None] = {b + 1: tuple(fields_of[i]) for b, i in enumerate(hdr_idx)
                                                       if i not in apps_of}
    apps_blocks = {b + 1: tuple(fields_of[i]) for b, i in enumerate(hdr_idx) if i in apps_of}
    meta: dict[str, Any] = {}
    variant = "csv-header" if hdr_idx else None
    # rows before any header: noheader capture
    pre = df.filter(is_data & (pl.col("_block") == 0))
    prompt = pre.filter(pl.col("_s").str.contains(PROMPT_RE))  # "$ nvidia-smi --query-gpu=..." pasted above the header
    if prompt.height:
        unparsed.append((prompt, "shell prompt or command line, not nvidia-smi output"))
        pre = pre.filter(~pl.col("_s").str.contains(PROMPT_RE))
    if pre.height:
        hinted = _hint_fields(ctx)
        if hinted:
            block_fields[0] = tuple(hinted)
            variant = variant or "csv-noheader-hinted"
        else:
            inferred, why = csv_shapes.infer(pre["_s"].head(50).to_list())
            block_fields[0] = inferred
            if inferred:
                variant = variant or "csv-noheader-inferred"
                meta["inferred_fields"] = list(inferred)
            else:
                unparsed.append((pre, f"CSV without header: {why} (state the fields: --fields / hints query_fields)"))
                variant = variant or "csv-noheader-unknown"
    meta["variant"] = variant or "csv"
    if meta_cmd:
        meta["fields_from_command_line"] = True
    procs = []
    for b, fields in apps_blocks.items():
        rows, bad = compute_apps.parse(df.filter(is_data & (pl.col("_block") == b)).select("line_no", "text", "_s"), fields)
        procs.append(rows)
        unparsed.extend(bad)
    processes = pl.concat(procs, how="diagonal_relaxed").sort("line_no") if procs else None
    if apps_blocks:
        meta["variant"] = ("csv-compute-apps" if len(apps_blocks) == len(hdr_idx) and variant == "csv-header"
                           else meta["variant"] + "+compute-apps")
    by_fields: dict[tuple[str, ...], list[int]] = {}
    for b, f in block_fields.items():
        if f:
            by_fields.setdefault(f, []).append(b)
    samples, gpus = [], []
    ignored: set[str] = set()
    for fields, blocks in by_fields.items():
        n = len(fields)
        part = df.filter(is_data & pl.col("_block").is_in(blocks))
        if not part.height:
            continue
        # the cells: n fields at the first n - 1 commas, the rest of the line in the last; a row of another number
        # of fields has no last cell (fewer) or a comma in it (more), and only those rows have their commas counted
        cells = part.select(pl.col("_s").str.splitn(",", n).struct.unnest())
        last = cells.get_column(f"field_{n - 1}")
        off = (last.is_null() | last.str.contains(",", literal=True)).fill_null(True)
        if off.any():
            wrong = part.filter(off).with_columns(pl.col("_s").str.count_matches(",", literal=True).alias("_n"))
            unparsed.append((wrong, pl.format("{} fields where the header has " + str(n), pl.col("_n") + 1)))
            part, cells = part.filter(~off), cells.filter(~off)
        if not part.height:
            continue
        mapped = [(i, f, SPECS[f]) for i, f in enumerate(fields) if f in SPECS]
        ignored.update(f for f in fields if f not in SPECS)
        # raw cells, then each field converted (in a series of _SERIES_ROWS rows or more each field once per distinct
        # value where they repeat: clocks, utilisation, memory, bus ids) and checked only where a conversion
        # gave more nulls than there were empty cells; materialised step by step (a fused lazy query splits
        # every line again for each field)
        # (a field converted by value is stripped there, each distinct cell once; its stripped cells _r<i> are
        # made only when its conversion gave nulls: the check below reads them)
        cell = {i: cells.get_column(f"field_{i}") for i, _, _ in mapped}
        by_value = {i for i, _, spec in mapped if spec[1] == "pci" or part.height >= _SERIES_ROWS}
        part = part.with_columns([cell[i].str.strip_chars().alias(f"_r{i}") for i, _, _ in mapped if i not in by_value])
        part = part.with_columns([_convert(pl.col(f"_r{i}"), spec[1])[0].alias(f"_c{i}")
                                  for i, _, spec in mapped if i not in by_value])
        part = part.with_columns([_convert_series(cell[i], spec[1], strip=True).alias(f"_c{i}")
                                  for i, _, spec in mapped if i in by_value])
        suspect = [(i, f) for i, f, spec in mapped  # (stripping keeps a cell's null or not null)
                   if spec[1] != "str" and part.get_column(f"_c{i}").null_count() > cell[i].null_count()]
        part = part.with_columns([cell[i].str.strip_chars().alias(f"_r{i}") for i, _ in suspect if i in by_value])
        bads = [pl.col(f"_r{i}").is_not_null() & ~pl.col(f"_r{i}").is_in(list(NA_TOKENS)) & pl.col(f"_c{i}").is_null()
                for i, _ in suspect]
        if bads:
            part = part.with_columns(pl.any_horizontal(bads).alias("_bad"))
        if bads and part["_bad"].any():
            reasons = [pl.when(b).then(pl.format(f"{f}: unexpected value {{}}", pl.col(f"_r{i}").str.slice(0, 60)))
                       for b, (i, f) in zip(bads, suspect)]
            bad_rows = part.filter(pl.col("_bad"))
            unparsed.append((bad_rows.with_columns(pl.coalesce(reasons).alias("_why")), pl.col("_why")))
            part = part.filter(~pl.col("_bad"))
        by_col: dict[str, list[tuple[int, int]]] = {}
        for i, _, (col, _kind, prio) in mapped:
            by_col.setdefault(col, []).append((prio, i))
        out_cols = [pl.coalesce([pl.col(f"_c{i}") for _, i in sorted(v)]).alias(c) for c, v in by_col.items()]
        rows = part.select("line_no", pl.col("sample_no").alias("_seg"), "_block",
                           pl.col("sample_ts").alias("_ts_utc"), *out_cols)
        samples.append(rows)
    meta["ignored_fields"] = sorted(ignored) if ignored else []
    if not meta["ignored_fields"]:
        del meta["ignored_fields"]
    if not samples:
        return {"samples": None, "gpus": None, "processes": processes, "unparsed": unparsed, "meta": meta}
    s = pl.concat(samples, how="diagonal_relaxed").sort("line_no")
    if "clocks_event_reasons" in s.columns:  # explicit per-reason fields win over the decoded mask
        mask = pl.col("clocks_event_reasons")
        s = s.with_columns([
            (pl.coalesce(pl.col(c), (mask & bit) != 0) if c in s.columns else (mask & bit) != 0).alias(c)
            for c, bit in REASON_BITS.items()
        ])
    ident = [c for c in ("gpu", "pci_bus_id", "uuid") if c in s.columns]
    key = pl.concat_str([pl.col(c).cast(pl.String) for c in ident], separator="|", ignore_nulls=True) if ident else pl.lit("")
    s = s.with_columns(key.fill_null("").alias("_key"))
    s = s.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).over(["_seg", "_block", "_key"]).alias("_occ"))
    order = (s.select("_seg", "_block", "_occ").unique().sort("_seg", "_block", "_occ")
             .with_row_index("sample_no").with_columns(pl.col("sample_no").cast(pl.Int64)))
    s = s.join(order, on=["_seg", "_block", "_occ"], how="left").sort("line_no")
    inventory = {"name", "serial", "vbios", "driver_version", "persistence_mode", "mig_mode", "pcie_gen_max",
                 "pcie_width_max", "uuid", "pci_bus_id", "gpu"}
    g = s.filter(pl.col("_key") != "").unique(subset="_key", keep="first", maintain_order=True)
    gcols = [c for c in s.columns if c in inventory | {"power_limit_w", "max_sm_clock_mhz"}]
    # inventory rows only when the query says more about a GPU than its index
    gpus_df = g.select("line_no", *gcols) if ident and g.height and set(gcols) - {"gpu"} else None
    s = s.drop("_seg", "_block", "_occ", "_key")
    return {"samples": s, "gpus": gpus_df, "processes": processes, "unparsed": unparsed, "meta": meta}
