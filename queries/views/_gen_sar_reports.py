"""Writes queries/views/60_sar_reports.sql, the wide views of the sar reports without a table of
their own, from REPORTS below: ``python queries/views/_gen_sar_reports.py``
(tests/test_sar_report_views.py checks the file is this script's output).

A report: (view, sar option, header(s) that tell its text / sadf -d section, its sadf -j section (or
"sql:" a condition on ``section``), item column(s) or None, [(column, sar_metric_base of each
spelling, or "sql:" a condition)]). Header names as sysstat prints them (its manual and its
tests/expected.* outputs), sadf -j names as its json_stats.c writes them.
"""
from __future__ import annotations

from pathlib import Path


def _rates(names: str) -> list[tuple[str, str]]:
    """Rate columns named after their headers' bases: "imsg omsg" -> imsg_s, omsg_s."""
    return [(f"{c}_s", c) for c in names.split()]


def _cols(hdr: str) -> list[tuple[str, str]]:
    """Columns named after a text header (the sadf -j names are the same bases)."""
    out = []
    for h in hdr.split():
        rate = h.endswith("/s")
        base = (h[:-2] if rate else h).replace("-", "_").lower()
        out.append((base + "_s" if rate else base, base))
    return out


def _psi() -> list[tuple[str, str]]:
    """sar -q CPU/IO/MEM: text %scpu-10 ... %fmem, sadf -j psi-cpu/io/mem some_avg10 ... full_avg."""
    cols = []
    for res in ("cpu", "io", "mem"):
        for kind, k in (("some", "s"), ("full", "f")):
            if res == "cpu" and kind == "full":
                continue  # sar -q CPU prints no "full" line
            for w in ("10", "60", "300", ""):
                text = f"{k}{res}_{w}_pct" if w else f"{k}{res}_pct"
                cols.append((f"{res}_{kind}_avg{w}_pct",
                             f"sql:b = '{text}' OR (section = 'psi.psi-{res}' AND b = '{kind}_avg{w}')"))
    return cols


REPORTS = [
    ("sar_cswch", "-w", "cswch/s", "process-and-context-switch", None, _rates("proc cswch")),
    ("sar_swapping", "-W", "pswpin/s", "swap-pages", None, _rates("pswpin pswpout")),
    ("sar_paging", "-B", "pgpgin/s", "paging", None,
     _rates("pgpgin pgpgout fault majflt pgfree pgscank pgscand pgsteal") + [("vmeff_pct", "vmeff_pct")]
     + _rates("pgprom pgdem")),
    ("sar_io", "-b", "bread/s", "io", None, [("tps", "tps"), ("rtps", "rtps"), ("wtps", "wtps"), ("dtps", "dtps")]
     + _rates("bread bwrtn bdscd")),
    ("sar_swap_space", "-S", "kbswpfree", "memory", None,
     [("kbswpfree", "swpfree"), ("kbswpused", "swpused"), ("swpused_pct", "swpused_pct"), ("kbswpcad", "swpcad"),
      ("swpcad_pct", "swpcad_pct")]),
    ("sar_hugepages", "-H", "kbhugfree", "hugepages", None,
     [("kbhugfree", "hugfree"), ("kbhugused", "hugused"), ("hugused_pct", "hugused_pct"), ("kbhugrsvd", "hugrsvd"),
      ("kbhugsurp", "hugsurp")]),
    ("sar_kernel_tables", "-v", "dentunusd", "kernel", None, _cols("dentunusd file-nr inode-nr pty-nr")),
    ("sar_tty", "-y", "rcvin/s", "serial", "tty", _rates("rcvin xmtin framerr prtyerr brk ovrun")),
    ("sar_intr", "-I", "INTR", "interrupts", "intr", None),
    ("sar_fs", "-F", "MBfsfree", "filesystems", "filesystem",
     _cols("MBfsfree MBfsused") + [("fsused_pct", "fsused_pct"), ("ufsused_pct", "ufsused_pct")]
     + _cols("Ifree Iused") + [("iused_pct", "iused_pct")]),
    ("sar_cpu_freq", "-m CPU / -m FREQ", ["MHz", "wghMHz"], "power-management.cpu-frequency", "cpu",
     [("mhz", "mhz", "frequency"), ("wghmhz", "wghmhz")]),
    ("sar_fan", "-m FAN", "rpm", "power-management.fan-speed", ("fan", "device"), [("rpm", "rpm"), ("drpm", "drpm")]),
    ("sar_temp", "-m TEMP", "degC", "power-management.temperature", ("temp", "device"),
     [("degc", "degc"), ("temp_pct", "temp_pct")]),
    ("sar_voltage", "-m IN", "inV", "power-management.voltage-input", ("voltage", "device"),
     [("inv", "inv"), ("in_pct", "in_pct")]),
    ("sar_psi", "-q CPU/IO/MEM (pressure stall)", ["%scpu-10", "%sio-10", "%smem-10"],
     "sql:section LIKE 'psi.psi-%'", None, _psi()),
    ("sar_fchost", "-n FC", "fch_rxf/s", "network.fchosts", "fchost", _rates("fch_rxf fch_txf fch_rxw fch_txw")),
    ("sar_nfs", "-n NFS", "getatt/s", "network.net-nfs", None, _rates("call retrans read write access getatt")),
    ("sar_nfsd", "-n NFSD", "scall/s", "network.net-nfsd", None,
     _rates("scall badcall packet udp tcp hit miss sread swrite saccess sgetatt")),
    ("sar_net_sock", "-n SOCK", "totsck", "network.net-sock", None, _cols("totsck tcpsck udpsck rawsck ip-frag tcp-tw")),
    ("sar_net_ip", "-n IP", "irec/s", "network.net-ip", None,
     _rates("irec fwddgm idel orq asmrq asmok fragok fragcrt")),
    ("sar_net_eip", "-n EIP", "ihdrerr/s", "network.net-eip", None,
     _rates("ihdrerr iadrerr iukwnpr idisc odisc onort asmf fragf")),
    ("sar_net_icmp", "-n ICMP", "imsg/s", "network.net-icmp", None,
     _rates("imsg omsg iech iechr oech oechr itm itmr otm otmr iadrmk iadrmkr oadrmk oadrmkr")),
    ("sar_net_eicmp", "-n EICMP", "idstunr/s", "network.net-eicmp", None,
     _rates("ierr oerr idstunr odstunr itmex otmex iparmpb oparmpb isrcq osrcq iredir oredir")),
    ("sar_net_tcp", "-n TCP", "active/s", "network.net-tcp", None, _rates("active passive iseg oseg")),
    # sysstat 12.x prints retrseg/s where older versions print retrans/s
    ("sar_net_etcp", "-n ETCP", "atmptf/s", "network.net-etcp", None,
     _rates("atmptf estres") + [("retrans_s", "retrans", "retrseg")] + _rates("isegerr orsts")),
    ("sar_net_udp", "-n UDP", "idgm/s", "network.net-udp", None, _rates("idgm odgm noport idgmerr")),
    ("sar_net_soft", "-n SOFT", "squeezd/s", "network.softnet", "cpu",
     _rates("total dropd squeezd rx_rps flw_lim") + [("blg_len", "blg_len")]),
    ("sar_net_sock6", "-n SOCK6", "tcp6sck", "network.net-sock6", None, _cols("tcp6sck udp6sck raw6sck ip6-frag")),
    ("sar_net_ip6", "-n IP6", "irec6/s", "network.net-ip6", None,
     _cols("irec6/s fwddgm6/s idel6/s orq6/s asmrq6/s asmok6/s imcpck6/s omcpck6/s fragok6/s fragcr6/s")),
    ("sar_net_eip6", "-n EIP6", "ihdrer6/s", "network.net-eip6", None,
     _cols("ihdrer6/s iadrer6/s iukwnp6/s i2big6/s idisc6/s odisc6/s inort6/s onort6/s asmf6/s fragf6/s itrpck6/s")),
    ("sar_net_icmp6", "-n ICMP6", "imsg6/s", "network.net-icmp6", None,
     _cols("imsg6/s omsg6/s iech6/s iechr6/s oechr6/s igmbq6/s igmbr6/s ogmbr6/s igmbrd6/s ogmbrd6/s irtsol6/s "
           "ortsol6/s irtad6/s inbsol6/s onbsol6/s inbad6/s onbad6/s")),
    ("sar_net_eicmp6", "-n EICMP6", "idtunr6/s", "network.net-eicmp6", None,
     _cols("ierr6/s idtunr6/s odtunr6/s itmex6/s otmex6/s iprmpb6/s oprmpb6/s iredir6/s oredir6/s ipck2b6/s opck2b6/s")),
    ("sar_net_udp6", "-n UDP6", "idgm6/s", "network.net-udp6", None, _cols("idgm6/s odgm6/s noport6/s idgmer6/s")),
]
# counts (sockets, kernel table entries, kB, inodes, backlog length): BIGINT; the rest DOUBLE
INT_COLS = {"totsck", "tcpsck", "udpsck", "rawsck", "ip_frag", "tcp_tw", "tcp6sck", "udp6sck", "raw6sck", "ip6_frag",
            "dentunusd", "file_nr", "inode_nr", "pty_nr", "kbswpfree", "kbswpused", "kbswpcad", "kbhugfree",
            "kbhugused", "kbhugrsvd", "kbhugsurp", "ifree", "iused", "blg_len"}

HEAD = r"""-- Wide views of the sar reports that have no table of their own (issue 17): one row per sample
-- (and per item: TTY, filesystem, CPU, FC host, interrupt, sensor), one typed column per metric, read
-- from the long rows of raw.sar_generic. Text reports and sadf -d are told by a header of the report,
-- sadf -j by its section; metric names of all three are matched through sar_metric_base(), so the
-- column is the same whatever sysstat printed (`%swpused` and `swpused-percent`, `kbhugfree` and
-- `hugfree`, `retrans/s` and 12.x's `retrseg/s` in -n ETCP). Column names: the header's, `/s` -> `_s`,
-- `%x` -> `x_pct`, lower case; counts (sockets, kernel table entries, kB, inodes) are BIGINT, rates
-- and % DOUBLE. Columns sysstat did not print (older versions, other options) are NULL. The long rows
-- stay in sar_generic; sar_reports says which view each of them belongs to (-m USB and BAT, whose
-- columns are text, have none).
-- Written by queries/views/_gen_sar_reports.py: change that and run it, not this file.
--
-- sar_metric_base(metric): the metric's name without unit spellings ("io-reads.rtps" -> "rtps",
-- "bread/s" -> "bread", "%swpused", "swpused-percent" -> "swpused_pct", "percent-temp" -> "temp_pct",
-- "kbhugfree" -> "hugfree").
CREATE OR REPLACE MACRO sar_metric_base(m) AS
    lower(replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
        split_part(m, '.', -1), '/s$', ''), '^%(.*)$', '\1_pct'), '-percent$', '_pct'), '^percent-(.*)$', '\1_pct'),
        '^kb', ''), '-', '_'));
-- sar_section_is(section, headers, json_section): the sar_generic section is the report whose text
-- (or sadf -d) header holds one of `headers` or whose sadf -j section is `json_section`.
CREATE OR REPLACE MACRO sar_section_is(section, headers, json_section) AS
    section = json_section OR list_has_any(string_split(section, ' '), headers);
"""


def _where(key: str | list[str], js: str) -> str:
    keys = "[" + ", ".join(f"'{k}'" for k in ([key] if isinstance(key, str) else key)) + "]"
    if js.startswith("sql:"):
        return f"(list_has_any(string_split(section, ' '), {keys}) OR {js[4:]})"
    return f"sar_section_is(section, {keys}, '{js}')"


def _view(view: str, opt: str, key, js: str, item, cols) -> str:
    sel = ["host", "source", "file", "min(line_no) AS line_no", "sample_no", "ts", "ts_quality"]
    grp = ["host", "source", "file", "sample_no", "ts", "ts_quality"]
    if isinstance(item, tuple):  # "1 f71858fg-isa-0200": the sensor's number, then its device
        sel += [f"split_part(item, ' ', 1) AS {item[0]}", f"substr(item, strpos(item, ' ') + 1) AS {item[1]}"]
        grp.append("item")
    elif item:
        sel.append(f"item AS {item}")
        grp.append("item")
    if cols is None:  # -I: the per-CPU columns are the metric
        sel += ["CASE WHEN metric IN ('intr/s', 'all', 'intr') THEN 'all' ELSE metric END AS cpu", "max(value) AS intr_s"]
        grp.append("metric")
    else:
        for name, *bases in cols:
            if bases[0].startswith("sql:"):
                cond = bases[0][4:]
            elif len(bases) == 1:
                cond = f"b = '{bases[0]}'"
            else:
                cond = "b IN (" + ", ".join(f"'{x}'" for x in bases) + ")"
            e = f"max(value) FILTER (WHERE {cond})"
            sel.append(f"CAST({e} AS BIGINT) AS {name}" if name in INT_COLS else f"{e} AS {name}")
    names = "cpu, intr_s" if cols is None else ", ".join(c[0] for c in cols)
    per = "sample" + (" and " + (" ".join(item) if isinstance(item, tuple) else item) if item else "")
    return (f"-- {view}: sar {opt}, one row per {per}: {names}\nCREATE OR REPLACE VIEW {view} AS\nSELECT "
            + ",\n       ".join(sel)
            + f"\nFROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE {_where(key, js)})\n"
            + "GROUP BY " + ", ".join(grp) + ";\n")


def render() -> str:
    cases = "\n".join(f"        WHEN {_where(key, js)} THEN '{view}'" for view, _, key, js, _, _ in REPORTS)
    reports = ("-- sar_reports: the long rows of sar_generic with the wide view (`report`) their section belongs to"
               " (NULL: none).\nCREATE OR REPLACE VIEW sar_reports AS\nSELECT *, CASE\n" + cases
               + "\n    END AS report\nFROM raw.sar_generic;\n")
    return "\n".join([HEAD, reports, *(_view(*r) for r in REPORTS)])


if __name__ == "__main__":
    Path(__file__).with_name("60_sar_reports.sql").write_text(render())
