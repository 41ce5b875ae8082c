"""The sniffing iostat and sar share: sysstat JSON, their own header lines, and the banner both print."""
from __future__ import annotations

import re

from forensics.sources._base import Sniff, head_text
from forensics.sources._sysstat.dates import banner


def sniff(head: bytes, *, json_members: re.Pattern, json_what: str, json_tool: str, headers: re.Pattern,
          headers_what: str, header_what: str, none_what: str,
          also: tuple[tuple[re.Pattern, str], ...] = ()) -> Sniff:
    """sysstat JSON (a "sysstat" member near the top and one of `json_members`), then any pattern of `also`,
    then `headers` lines; a sysstat banner alone is a weak 0.3 (iostat and sar print the same one).
    The *_what words name what was (not) seen in the reason."""
    text = head_text(head)
    if text.lstrip().startswith("{"):
        if '"sysstat"' in text[:400] and json_members.search(text):
            return Sniff(0.99, f"sysstat JSON with {json_what}")
        return Sniff(0.0, f"JSON without {json_tool}'s sysstat members")
    for rx, why in also:
        if rx.search(text):
            return Sniff(0.99, why)
    n = len(headers.findall(text))
    if n:
        return Sniff(0.95, f"{n} {headers_what}")
    if any(banner(ln) for ln in text.splitlines()[:50]):
        return Sniff(0.3, f"a sysstat banner but no {header_what}")
    return Sniff(0.0, f"no {none_what} and no sysstat banner")
