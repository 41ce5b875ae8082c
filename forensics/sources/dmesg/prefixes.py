"""Line prefixes of the kernel log shapes (anchored; applied to subsets routed by their first
character), the level and facility names, and the expression helpers the readers and the field
extraction share."""
from __future__ import annotations

import polars as pl

from forensics.sources._base import RE_MAIL_QUOTE

LEVELS = ("emerg", "alert", "crit", "err", "warn", "notice", "info", "debug")
# util-linux dmesg facility names, by code (priority >> 3)
FACILITIES = ("kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron",
              "authpriv", "ftp", "res0", "res1", "res2", "res3", "local0", "local1", "local2",
              "local3", "local4", "local5", "local6", "local7")
# spellings of syslog/logread levels -> the dmesg names above
LEVEL_ALIASES = {"warning": "warn", "error": "err", "panic": "emerg", **{x: x for x in LEVELS}}
LEVEL_ALIASES.update({k.upper(): v for k, v in LEVEL_ALIASES.items()})  # SONiC's upper-case severity words
MONTHS = {m: i for i, m in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), start=1)}


# --- line prefixes (anchored; applied to subsets routed by their first character) -------------
RE_PRI = r"^<([0-9]{1,3})>"
RE_DECODE = r"^(?P<dfac>[a-z0-9]+) *:(?P<dlvl>[a-z]+) *: "
# "[  12.345678] ", "-d" "[  12.345678 <  0.000012>] ", "-H"/"--reltime" deltas "[  +0.000844] ", and
# the printk caller id of CONFIG_PRINTK_CALLER kernels after the time: "[   36.764462][  T291] "
RE_RAW = r"^\[ *\+?[0-9]+\.[0-9]+(?: <[ 0-9.]+>)?\](?:\[ *[TC][0-9]+\])? ?"
# the same cut before its "[" by `grep ... | cut -d '[' -f 2-` (the pipeline people use to drop a syslog
# prefix): "   12.345678] msg", "360770.261344] msg"; read as if the "[" were there (meta bracket_cut)
RE_RAW_CUT = r"^ *[0-9]+\.[0-9]{6,9}\](?:\[ *[TC][0-9]+\])? "
# talosctl dmesg (Talos Linux reads /dev/kmsg with go-kmsg and prints facility, level right-aligned to 7, the
# wall-clock time in RFC 3339 in brackets): "kern:    info: [2022-01-25T10:35:59.111934566Z]: msg"; behind the node
# name ("10.5.0.3: kern: ...") where it asks several nodes (the paste layer takes that off, forensics.sources._hosts)
RE_TALOS = (r"^ ?(?P<tfac>[a-z0-9]+): +(?P<tlvl>[a-z]+): \[(?P<tts>[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:"
            r"[0-9]{2})(?:\.(?P<tfrac>[0-9]{1,9}))?(?P<ttz>Z|[+-][0-9]{2}:?[0-9]{2})\]: ")
RE_CTIME = (r"^(?P<pfx>\[(?P<rt>[A-Z][a-z]{2} (?P<mon>[A-Z][a-z]{2}) +(?P<day>[0-9]{1,2}) "
            r"(?P<hms>[0-9]{2}:[0-9]{2}:[0-9]{2}) (?P<year>[0-9]{4}))\] ?)")
RE_ISO = (r"^(?P<pfx>(?P<rt>(?P<base>[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2})"
          r"(?:(?P<sep>[,.])(?P<frac>[0-9]{1,9}))?(?P<tz>Z|[+-][0-9]{2}:?[0-9]{2})) ?)")
# the same, fixed width: "2025-01-21T04:41:44,283302+00:00 " (dmesg's own iso format; sliced, not captured)
RE_ISO_FIXED = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2},[0-9]{6}[+-][0-9]{2}:[0-9]{2}(?: |$)"
# the month as the host's locale abbreviates it ("Nov", "jan.", "фев", "Mär"; months.py says which are known)
RE_SHORT = (r"^(?P<pfx>(?P<rt>(?P<mon>[^\W\d_]{3,5}\.?) +(?P<day>[0-9]{1,2}) "
            r"(?P<hms>[0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.(?P<frac>[0-9]{1,9}))?) ?)")
# SONiC since 2024 (sonic-buildimage PR 18099) puts the year first: "2024 Feb 15 02:24:26.091224 host ..."
RE_SHORT_YEAR = (r"^(?P<pfx>(?P<rt>(?P<year>[0-9]{4}) (?P<mon>[^\W\d_]{3,5}\.?) +(?P<day>[0-9]{1,2}) "
                 r"(?P<hms>[0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.(?P<frac>[0-9]{1,9}))?) ?)")
RE_LOGREAD = (r"^(?P<pfx>(?P<rt>[A-Z][a-z]{2} (?P<mon>[A-Z][a-z]{2}) +(?P<day>[0-9]{1,2}) "
              r"(?P<hms>[0-9]{2}:[0-9]{2}:[0-9]{2}) (?P<year>[0-9]{4})) "
              r"(?P<sfac>[a-z0-9]+)\.(?P<slvl>[a-z]+) ?)")
# the severity word SONiC's rsyslog template puts between host and program
# ("%HOSTNAME% %syslogseverity-text:::uppercase% %syslogtag%", sonic-buildimage
# files/image_config/rsyslog/rsyslog.conf.j2): "sonic NOTICE swss#orchagent: ..."
SEVERITY_WORDS = ("EMERG", "ALERT", "CRIT", "ERR", "WARNING", "NOTICE", "INFO", "DEBUG")
RE_SEVERITY = "(?:" + "|".join(SEVERITY_WORDS) + ")"
# a program tag: "kernel", "systemd[1]", SONiC's container-qualified "swss#orchagent"
RE_TAG = r"[A-Za-z][A-Za-z0-9_.@/#-]*"
# "host [SEVERITY ]ident[pid]: " after a syslog/journal time
RE_HOST_IDENT = (r"^(?P<hpfx>(?P<host>[^ \[\]:]+) (?:(?P<sev>" + RE_SEVERITY[3:-1] + r") )?(?P<ident>"
                 + RE_TAG + r")(?:\[(?P<pid>[0-9]+)\])?: ?)")
# "ident: " with no host (OpenWrt logread)
RE_IDENT = r"^(?P<hpfx>(?P<ident>" + RE_TAG + r")(?:\[(?P<pid>[0-9]+)\])?: ?)"
# the kernel's own "[ 12.345678] " inside a syslog line
RE_INNER_BOOT = r"^(?P<ipfx>\[ *(?P<isec>[0-9]+)\.(?P<ifrac>[0-9]+)\] ?)"
RE_PROMPT = r"(?:^|[\s$#>])(?:sudo )?(?:dmesg|journalctl)(?:\s|$)"
# a caption a paste puts above the kernel log lines it indents ("Output:", " -> Kernel log:", "Logs from node 3:"):
# a short line, less indented than those lines, that ends with a colon (or the prompt with the dmesg/journalctl
# command, RE_PROMPT)
RE_CAPTION = r"^[ \t]*[^ \t].{0,79}:[ \t]*$"
# /dev/kmsg records: "prio,seq,usec,flags[,more];message" (Documentation/ABI/testing/dev-kmsg)
RE_KMSG = r"^[0-9]{1,3},[0-9]{1,20},[0-9]{1,20},[-c+][^;]*;"
# a /dev/kmsg dictionary line after its record: " SUBSYSTEM=pci", " DEVICE=+pci:0000:0a:00.0"
RE_KMSG_DICT = r"^[ \t]+[A-Za-z0-9._-]+=[^ ]*$"
# mail and forum quoting: "> ", ">> ", "> > "
RE_QUOTE = RE_MAIL_QUOTE
RE_JOURNAL_HDR = r"^-- (?:Logs begin|Journal begins|Boot |Reboot|No entries|Subject|Defined-By)"


def _masked(expr: pl.Expr, rx: str, literal: bool = False) -> pl.Expr:
    """`expr` where it matches `rx`, else null (work on the result then skips the other rows)."""
    return pl.when(expr.str.contains(rx, literal=literal).fill_null(False)).then(expr)


def _match(expr: pl.Expr, rx: str) -> pl.Expr:
    """The text `rx` matches in `expr` (group 0: a DFA search, much cheaper than capture groups)."""
    return expr.str.extract(rx, 0)
