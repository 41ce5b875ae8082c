"""Kernel ring buffer and kernel syslog lines -> ``kernel_log`` (other programs' records -> ``syslog``).

Variants read (line by line; one file may mix them):

- ``dmesg`` raw: ``[  360770.261344] mlx5_core 0000:18:00.0: ...`` (seconds since boot, also with the
  ``-d`` delta ``[ 12.345678 <  0.000012>]`` and a printk caller id ``[  T291]``; a ``-H`` delta
  ``[  +0.000844]`` gives no ``boot_s``). ``ts = ctx.boot_time + boot_s`` (quality ``boot``);
  without a boot time ``ts`` is null (quality ``none``) and ``boot_s`` is kept.
- ``dmesg -T`` / ``--ctime``: ``[Sun Feb 23 16:24:18 2025] ...``: local time, converted with ``ctx.tz``
  (UTC when unknown), quality ``local``.
- ``dmesg --time-format iso``: ``2025-01-21T04:41:44,283302+00:00 ...`` (comma before the
  microseconds), quality ``exact``.
- ``-x``/``--decode`` prefixes ``kern  :warn  : ...`` and ``-r``/``--raw`` priorities ``<4>[ ...] ...``
  (facility and level columns).
- raw ``/dev/kmsg`` records ``6,3964,206764307,-;message`` and their dictionary lines (structured.py).
- ``journalctl -k`` / ``journalctl``: ``-o short`` ``Nov 30 10:15:02 host kernel: ...`` (months of
  common locales, months.py; the host or the time cut out of a paste) and ``short-precise``
  (``.123456``): year from ``ctx.year``, ``ctx.capture_time`` or hint ``file_time`` (a month after
  that month is the year before), quality ``local_year_inferred``; ``-o json`` exact (also ``-o json-pretty`` and mail-wrapped ``-o json``: one entry per object, dmesg.journal_json); ``short-iso``/``short-iso-precise`` ``2025-01-17T17:10:43+0000 host kernel:``
  exact; ``short-monotonic`` ``[  12.345678] host kernel: ...`` boot. ``-- Boot ... --`` /
  ``-- Logs begin ... --`` lines are structure.
- syslog files (``/var/log/kern.log``, ``messages``) in the same shapes, with the kernel's own
  ``[ 12.345678]`` kept as ``boot_s``; OpenWrt ``logread`` ``Sun Jun 11 23:02:41 2023 kern.info kernel:``.
  Records of other programs (``netifd``, ``systemd[1]``) go to the ``syslog`` table.
- SONiC's syslog: a severity word between host and program (``sonic NOTICE swss#orchagent:``, into
  ``level``), container-qualified programs, and the year-first time of 2024 on
  (``2024 Feb 15 02:24:26.091224 host ...``, quality ``local``).
- pasted in mail or forums: quote prefixes, a whole-paste indent (also under captions such as ``Output:``),
  soft-wrapped lines, a ``Modules linked in:``
  list broken by a terminal's width or a mail's word wrap (paste.py), records that ran into each other on a
  line where the line breaks were lost (runon.py).
- messages without any time (``dmesg -t``, a paste with the times cut off; untimed.py): only a
  file without a timed line, as a whole, with kernel-only shapes; quality ``none``.
- Continuation lines (starting with whitespace: how dmesg and journalctl print the further lines
  of a multi-line record) are rows of their own with the time, level and subsystem of the message
  they continue; their ``raw_time`` is null because no time was printed on them.

Extracted from the message: ``subsystem`` (the driver of ``mlx5_core 0000:18:00.0: ...``, the word
before the first ``:`` as in ``NVRM:``/``IPv6:``, the module of ``nvidia-peermem fn:127 ...``),
``pci_addr`` normalised to ``dddd:bb:dd.f`` (``PCI:0000:18:00`` -> ``0000:18:00.0``), ``iface``
(``mlx5_core 0000:18:00.0 ens1f0np0: Link down``, ``eth0: renamed``, ``ADDRCONF(...): eth0:``),
for ``NVRM: Xid (PCI:...): N, ...`` the Xid number and the text after it, and the kernel signature
fields of events.py (``event``, ``task``, ``cpu``, ``duration_s``, ...). The host of
journal/syslog lines is used when ``ctx.host`` is not given (``meta["hosts"]`` lists them).

Lines with no kernel log prefix (shell prompts, garbage, ``dmesg --time-format reltime``) go to
``unparsed`` with a reason. Lines are independent, so big files are parsed in chunks.

>>> from forensics.sources._base import ParseContext
>>> sample = (b"[Sun Feb 23 16:24:18 2025] NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, "
...           b"Timeout after 6s of waiting for RPC response from GPU4 GSP! Expected function 103 (GSP_RM_ALLOC) (0x2081 0x4).\\n"
...           b"[360772.410308] mlx5_core 0000:18:00.0: Port module event: module 0, Cable plugged\\n")
>>> res = parse(sample, ParseContext(host="node01", tz="America/New_York"))
>>> for r in res.tables["kernel_log"].iter_rows(named=True):
...     print(r["ts"], r["ts_quality"], r["boot_s"], r["subsystem"], r["pci_addr"], r["xid"])
2025-02-23 21:24:18+00:00 local None NVRM 0000:9b:00.0 119
None none 360772.410308 mlx5_core 0000:18:00.0 None
>>> res.tables["kernel_log"]["xid_text"][0][:40]
'pid=2024380, name=nvidia-smi, Timeout af'
>>> res.lines, res.unparsed.height
(2, 0)
"""
from __future__ import annotations

from forensics.sources.dmesg.fields import (
    DEDUP_MIN_ROWS,
    DEDUP_SAMPLE,
    RE_BRACKET,
    RE_DEV,
    RE_IFACE,
    RE_MODFN,
    RE_PCI_ANY,
    RE_PCI_CORE,
    RE_PCI_FULL,
    RE_WORD,
    RE_XID_AT,
)
from forensics.sources.dmesg.parser import parse
from forensics.sources.dmesg.prefixes import (
    FACILITIES,
    LEVEL_ALIASES,
    LEVELS,
    MONTHS,
    RE_CTIME,
    RE_DECODE,
    RE_HOST_IDENT,
    RE_IDENT,
    RE_INNER_BOOT,
    RE_ISO,
    RE_ISO_FIXED,
    RE_JOURNAL_HDR,
    RE_LOGREAD,
    RE_PRI,
    RE_PROMPT,
    RE_RAW,
    RE_SHORT,
)
from forensics.sources.dmesg.readers import NAME, NO_PREFIX, PROMPT
from forensics.sources.dmesg.sniffing import sniff

VERSION = 25  # 25: kernel lines without times in a Markdown code fence, or between elision marks ("..."), are recognised as an untimed kernel log: the paste's fence and elision lines are not weighed against them (before, three AER lines and two fence lines were refused); 24: kernel lines indented under a caption (" -> Kernel log:", "Output:", a dmesg prompt: less indented, at most half as many) are read without their indent, the caption unparsed (before, not recognised, and every line a continuation without a message); 23: records that ran into each other (a paste whose line breaks were lost: 9 syslog records on one line, 13 /proc/kmsg records) are a row each, also where the text was wrapped again and a head broken over two lines (runon.py; meta run_on); a line a word wrap filled to the width is joined with its blank where most breaks are a word wrap's (wrap.wrap_breaks); in a paste cut at a width, a tail that starts with the blank the cut fell on joins its record instead of making a continuation row (a kern.log cut at 80: 12 rows for 12 records, was 15); in a paste cut before each line's host, parts of a record cut at the width stay unparsed (text may be lost at the cut: the linux-wireless fixture's module list read 'snd_hda_codecm'); 22: talosctl dmesg lines ("kern:    info: [2022-01-25T10:35:59.111934566Z]: msg": facility, level, RFC 3339 time) are read as dmesg -x --time-format iso records (parser.talos_lines; meta variant talosctl), the node name talosctl -n puts before each line by the paste layer (forensics.sources._hosts: the node is the row's host); before, not recognised; two new real fixtures; 21: no change of the parser: a quoted-printable mail's line joined by soft breaks is read with the next encoded line after it, not blank lines (_mail_qp VERSION 3): the linux-wireless journal fixture's module-list pieces are joined to their message as in the same text unencoded; 20: a boot time or an event's duration_s past a double's range (a run of hundreds of digits) is null, not inf (boot_s null: no boot time); 19: a new real fixture (a linux-mm reply: an unquoted "[...]" above quoted kernel lines, read as a quoted paste by the paste layer, _quote 4); no table of an earlier fixture changed; 18: a /dev/kmsg record of another facility (syslog table) followed by a continuation line is read (the continuation lacked the journal dev column: a ColumnNotFoundError lost the file; found by a 5,000-digit run); 17: a journalctl -o json-pretty paste indented as a whole (a mail or forum paste) is read without its indent: the sniffer keeps each joined object at the indent of its opening brace, so the paste is indented on every line (before, the indent was kept and the mail's prose lines between the objects became kernel_log rows); 16: journalctl -o json-pretty objects, and -o json lines a mail client wrapped (inside MESSAGE or between a key and its value), are read as one entry each (journal_json; meta json_folded: the lines folded into their object's first); before, every line was unparsed and the file was not recognised; 15: a line of 2-8 hex stack words (the unindented first stack line of 2.6.9 task dumps) is a kernel shape of an untimed paste; 14: the 2.6 task line with its saved PC is a kernel-only shape (an untimed paste of one hung task and its trace is read); 13: raw dmesg lines cut before their "[" by `grep | cut -d "[" -f 2-` ("   12.345678] msg") are read as raw lines (meta bracket_cut); 12: 2.6-era task state lines (the saved PC after the state: "khubd  D ffff8800010220c0  0  170  2", no flags before ~2.6.30, 2.6.9 "(NOTLB)" pids) and SysRq's "SysRq : Show Blocked State" header are kernel shapes of an untimed paste; 11: an event's task_pid/cpu of more than 19 digits is null in the Python reader too (int() refused strings of over 4,300 digits: the file was lost); 10: a pid beyond Int64 ("ident[pid]: ", /dev/kmsg user records) is null, the record kept (before, the cast raised and lost the file); 9: an untimed hung-task report (the hint line, "task:comm state:D", the pre-5.13 task line "comm  D  0  pid  ppid 0xflags", "Workqueue:", arm64 "Call trace:") is a kernel log without times (refused before); 8: the width of a hard-wrapped paste is taken from the lines before its breaks where longer lines stand whole beside them (a mail word wrap); the sniffer counts those tails (dmesg.wrap); 7: "kernel: " lines cut before their host keep their inner boot time (boot_s, message without it), and "ident[pid]: " records cut the same way beside them go to syslog; 6: a new real fixture (a linux-mm oops stored quoted-printable, read decoded by forensics.sources._mail_qp: tables of such files change under the mail_qp version too); 5: messages hard-wrapped by a mail or terminal (no soft-break space) are joined back (paste.hard_wrapped)
# 4: a "Modules linked in:" list broken by the paste is joined back (paste.module_list_wrapped)
TABLES = ("kernel_log", "syslog")
DESCRIPTION = "kernel log: dmesg (raw, -T, --time-format iso, -x, -r), journalctl -k, kern.log/syslog"
CHUNKABLE = True
# ingest's chunks for this source: small enough that writing one chunk's rows overlaps parsing the next
# ones (100 MB end to end: 1.3 s at 16 MB, 1.6 s at ingest's default 64 MB; a third less memory)
CHUNK_BYTES = 16 << 20
CHUNK_NO_START = (b" ", b"\t", b"\r", b"\n")  # continuation (and blank) lines stay with the message before them

__all__ = [
    "CHUNKABLE",
    "CHUNK_BYTES",
    "CHUNK_NO_START",
    "DEDUP_MIN_ROWS",
    "DEDUP_SAMPLE",
    "DESCRIPTION",
    "FACILITIES",
    "LEVELS",
    "LEVEL_ALIASES",
    "MONTHS",
    "NAME",
    "NO_PREFIX",
    "PROMPT",
    "RE_BRACKET",
    "RE_CTIME",
    "RE_DECODE",
    "RE_DEV",
    "RE_HOST_IDENT",
    "RE_IDENT",
    "RE_IFACE",
    "RE_INNER_BOOT",
    "RE_ISO",
    "RE_ISO_FIXED",
    "RE_JOURNAL_HDR",
    "RE_LOGREAD",
    "RE_MODFN",
    "RE_PCI_ANY",
    "RE_PCI_CORE",
    "RE_PCI_FULL",
    "RE_PRI",
    "RE_PROMPT",
    "RE_RAW",
    "RE_SHORT",
    "RE_WORD",
    "RE_XID_AT",
    "TABLES",
    "VERSION",
    "parse",
    "sniff",
]
