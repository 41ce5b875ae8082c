"""Banner, dates and times as sysstat prints them in every locale (see the package's docstring)."""
from __future__ import annotations

import datetime as dt
import functools
import re


# ---------------------------------------------------------------- banner, dates, times

# the banner date is one word (%x: "03/08/2022", "2021-09-10") or, in locales whose d_fmt spells it out, an English
# long date "Thursday 04 September 2014" (%A %d %B %Y: as an en_IN paste of tecmint's sysstat article shows it)
_LONG_DATE_RX = (r"(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day [0-9]{1,2} "
                 r"(?:January|February|March|April|May|June|July|August|September|October|November|December) [0-9]{4}")
BANNER_RE = re.compile(
    r"^(?P<sys>Linux|GNU/Linux)\s+(?P<release>\S+)\s+\((?P<host>[^()\s]*)\)\s+(?P<date>" + _LONG_DATE_RX + r"|\S+)"
    r"(?:\s+_(?P<arch>\S+?)_)?(?:\s*\((?P<ncpu>[0-9]+)\s+CPU\))?\s*$"
)
_DATE_ISO = re.compile(r"^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})$")
_DATE_CJK = re.compile(r"^([0-9]{4})年([0-9]{1,2})月([0-9]{1,2})日$")
_DATE_YMD = re.compile(r"^([0-9]{4})[/.]([0-9]{1,2})[/.]([0-9]{1,2})$")
_DATE_LONG = re.compile(r"^[A-Za-z]+ ([0-9]{1,2}) ([A-Za-z]+) ([0-9]{4})$")
_MONTHS = {m: i for i, m in enumerate(("January", "February", "March", "April", "May", "June", "July", "August",
                                        "September", "October", "November", "December"), start=1)}
_DATE_NNY = re.compile(r"^([0-9]{1,2})([/.-])([0-9]{1,2})\2([0-9]{2}|[0-9]{4})$")
_TIME_24 = re.compile(r"^([0-9]{1,2}):([0-9]{2}):([0-9]{2})$")
_TIME_CJK = re.compile(r"^([0-9]{1,2})[时時]([0-9]{2})分([0-9]{2})秒$")
_AMPM = {"AM": 0, "PM": 12, "am": 0, "pm": 12}
_TS_ISO = re.compile(
    r"^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(Z|[+-][0-9]{2}:?[0-9]{2})?$"
)


# ko_KR: sysstat prints times with strftime %X and the banner date with %x, which glibc's ko_KR
# LC_TIME defines as t_fmt "%H시 %M분 %S초" and d_fmt "%Y년 %m월 %d일" (three words each; glibc
# localedata/locales/ko_KR, as in jsor/locale-data data/ko_KR.php @4247204). Read as the 24-hour
# and ISO forms they stand for, before the words are split.
_KO_TIME = re.compile(rb"(?<![0-9])([0-9]{2})\xec\x8b\x9c ([0-9]{2})\xeb\xb6\x84 ([0-9]{2})\xec\xb4\x88")  # 시 분 초
_KO_DATE = re.compile(rb"(?<![0-9])([0-9]{4})\xeb\x85\x84 ([0-9]{2})\xec\x9b\x94 ([0-9]{2})\xec\x9d\xbc")  # 년 월 일


def ko_kr_times(data: bytes) -> bytes | None:
    """`data` with ko_KR times and dates (``21시 47분 24초``, ``2021년 09월 10일``) in the 24-hour
    and ISO forms (``21:47:24``, ``2021-09-10``); None when it has none (the input is left as is).

    >>> ko_kr_times("02시 21분 57초   runq-sz\\n".encode()), ko_kr_times(b"10:00:00 x")
    (b'02:21:57   runq-sz\\n', None)
    """
    if data.isascii() or b"\xec\xb4\x88" not in data:  # no 초 at all: the usual case (isascii: a quicker scan)
        return None
    out = _KO_TIME.sub(rb"\1:\2:\3", data)
    if out is data or out == data:
        return None
    return _KO_DATE.sub(rb"\1-\2-\3", out)


# zh_CN/zh_TW 12-hour times: glibc's t_fmt_ampm "%p %I时%M分%S秒" with am_pm "上午";"下午" (what `date +%r`
# prints there: "下午 03时50分35秒"), in sar output where the time is printed in the 12-hour form. Read as the
# "03:50:35 PM" they stand for; the 24-hour "15时50分35秒" (t_fmt) is read as it is (parse_tod).
_ZH_AMPM = re.compile("(上午|下午) ?([0-9]{2}) ?(?:时|時) ?([0-9]{2}) ?分 ?([0-9]{2}) ?秒".encode())
_ZH_PM = "下午".encode()


def zh_ampm_times(data: bytes) -> bytes | None:
    """`data` with zh 12-hour times (``下午 03时21分10秒``) as ``03:21:10 PM``; None when it has none.

    >>> zh_ampm_times("下午 03时21分10秒  CPU\\n上午12时00分01秒 all\\n".encode()), zh_ampm_times(b"x")
    (b'03:21:10 PM  CPU\\n12:00:01 AM all\\n', None)
    """
    if data.isascii() or "午".encode() not in data:
        return None
    out = _ZH_AMPM.sub(lambda m: b"%s:%s:%s %s" % (m[2], m[3], m[4], b"PM" if m[1] == _ZH_PM else b"AM"), data)
    return None if out == data else out


# zh_CN 24-hour times and banner dates with a blank on each side of the units ("15 时 05 分 29 秒",
# "2017 年 03 月 08 日"): glibc prints them unspaced (t_fmt "%H时%M分%S秒", d_fmt "%Y年%m月%d日"), and the blanks
# are put in afterwards, where a paste has gone through CJK/Latin auto-spacing ("pangu" spacing, as in the
# OpenDocCN copy of the Netkiller Linux book). Read as the 24-hour and ISO forms they stand for; a spaced
# time of a 12-hour paste ("下午 03 时 21 分 10 秒") is left to zh_ampm_times, which allows the blanks too.
_ZH_SPACED_TIME = re.compile("(?<![0-9午])([0-9]{2}) (?:时|時) ([0-9]{2}) 分 ([0-9]{2}) 秒".encode())
_ZH_SPACED_DATE = re.compile("(?<![0-9])([0-9]{4}) 年 ([0-9]{2}) 月 ([0-9]{2}) 日".encode())
_ZH_SEC = " 秒".encode()


def zh_spaced_times(data: bytes) -> bytes | None:
    """`data` with zh 24-hour times and dates spaced out (``15 时 05 分 29 秒``, ``2017 年 03 月 08 日``) as
    ``15:05:29`` and ``2017-03-08``; None when it has no such time (the input is left as is).

    >>> zh_spaced_times("15 时 05 分 29 秒     CPU\\n".encode()), zh_spaced_times("15时05分29秒 CPU".encode())
    (b'15:05:29     CPU\\n', None)
    """
    if data.isascii() or _ZH_SEC not in data:
        return None
    out = _ZH_SPACED_TIME.sub(rb"\1:\2:\3", data)
    if out == data:
        return None
    return _ZH_SPACED_DATE.sub(rb"\1-\2-\3", out)


def locale_dates(data: bytes) -> bytes | None:
    """`data` with banner dates of three words (ko_KR d_fmt ``2021년 09월 10일``, zh_CN spaced out
    ``2019 年 08 月 19 日``) in the ISO form; None when it has none. For reports whose times are not
    localised (iostat prints only the banner date unless -t), where :func:`locale_times` finds no time.

    >>> locale_dates("(gerry) \\t2019 年 08 月 19 日 \\t_x86_64_".encode()), locale_dates(b"x")
    (b'(gerry) \\t2019-08-19 \\t_x86_64_', None)
    """
    if data.isascii():
        return None
    out = _ZH_SPACED_DATE.sub(rb"\1-\2-\3", _KO_DATE.sub(rb"\1-\2-\3", data))
    return None if out == data else out


def locale_times(data: bytes) -> tuple[bytes, str] | None:
    """(`data` with its localised times in the forms read everywhere, the locale's name), or None where it
    has none: ko_KR (:func:`ko_kr_times`), zh 12-hour (:func:`zh_ampm_times`), zh 24-hour spaced out
    (:func:`zh_spaced_times`; the unspaced form is read as it is)."""
    if data.isascii():  # the usual case: one quick scan
        return None
    ko = ko_kr_times(data)
    if ko is not None:
        return ko, "ko_KR"
    zh = zh_ampm_times(data)
    if zh is not None:
        return zh, "zh_CN"
    zh = zh_spaced_times(data)
    if zh is not None:
        return zh, "zh_CN"
    return None


# a zone abbreviation printed after every time: sysstat prints times with strftime %X, and a locale whose t_fmt
# ends in %Z prints the zone after each ("02:00:44  IST   runq-sz ...", tecmint's sysstat article, Linux Mint
# 3.11, en_IN; "01:55:51  IST     CPU ..." in a C comment, el7). The word is the same on every timed line, header
# and row alike (a column name such as CPU or IFACE is on header lines only).
_ZONE_LEAD = rb"(?m)^([ \t]*[0-9]{2}:[0-9]{2}:[0-9]{2}(?:[ \t]+[AP]M)?)[ \t]+"
_ZONE_PROBE = re.compile(_ZONE_LEAD + rb"(\S+)([^\n]*)")
_ZONE_WORD = re.compile(rb"^[A-Z]{2,5}$")
_A_NUMBER = re.compile(rb"(?:^|[ \t])-?[0-9][0-9.,]*(?=[ \t]|\r?$)")
ZONE_PROBE_LINES = 8  # timed lines looked at (at the input's start)


def zone_word_times(data: bytes) -> tuple[bytes, str] | None:
    """(`data` with the zone word after each time removed, the word), or None where the first timed lines
    (:data:`ZONE_PROBE_LINES`, at least two) do not all carry the same upper-case word of 2-5 letters right
    after their time, and a number on one of them at least (a row: a header's first column, CPU, IFACE, DEV,
    is on header lines only, and rows carry items such as "all" there). The word is not mapped
    to a zone (IST is India's, Israel's or Ireland's): the times are read as printed, in the zone the run
    is given.

    >>> zone_word_times(b"02:00:44  IST   runq-sz  plist-sz\\n02:00:46  IST         1       431\\n")
    (b'02:00:44   runq-sz  plist-sz\\n02:00:46         1       431\\n', 'IST')
    >>> zone_word_times(b"10:46:38 AM  CPU  %user\\n10:46:48 AM  all  0.03\\n") is None
    True
    """
    words, row = set(), False
    n = 0
    for m in _ZONE_PROBE.finditer(data, 0, min(len(data), 1 << 16)):
        words.add(m.group(2))
        row = row or bool(_A_NUMBER.search(m.group(3)))
        n += 1
        if len(words) > 1 or n >= ZONE_PROBE_LINES:
            break
    if n < 2 or len(words) != 1 or not row:
        return None
    word = words.pop()
    if not _ZONE_WORD.match(word) or word in (b"AM", b"PM"):
        return None
    out = re.sub(_ZONE_LEAD + re.escape(word) + rb"(?=[ \t]|\r?$)", rb"\1", data)
    return out, word.decode("ascii")


def _year(y: str) -> int:
    n = int(y)
    if len(y) == 2:  # POSIX %y: 69-99 -> 19xx, 00-68 -> 20xx
        n += 1900 if n >= 69 else 2000
    return n


# a value printed with a decimal comma ("1,95", "-0,50"): sysstat follows the locale's LC_NUMERIC
_DEC_COMMA = re.compile(r"(?:^|\s)-?[0-9]+,[0-9]{2}(?=\s|$)")
_DEC_POINT = re.compile(r"(?:^|\s)-?[0-9]+\.[0-9]{2}(?=\s|$)")


def decimal_comma(lines: list[str]) -> bool:
    """Whether the values of these lines (the first 200 looked at) are printed with a decimal comma
    more often than with a point."""
    comma = point = 0
    for t in lines[:200]:
        comma += bool(_DEC_COMMA.search(t))
        point += bool(_DEC_POINT.search(t))
    return comma > point


def date_order(dates: list[str], sample: list[str] | None = None) -> tuple[str, bool]:
    """'mdy' or 'dmy' for the NN/NN/NN dates of one file, and whether it was assumed.

    A date that tells (a day above 12, a dotted date) decides. Otherwise the order is assumed: day
    first when the file's values carry a decimal comma (`sample`: some of its lines), as in every
    glibc locale that writes one (de_DE, fr_FR, it_IT, es_ES, pt_BR, nl_NL, ru_RU, pl_PL, ...: their
    LC_TIME d_fmt puts the day first, e.g. it_IT "%d/%m/%Y", es_ES "%d/%m/%y"); else month first (the
    C and en_US locales)."""
    for s in dates:
        m = _DATE_NNY.match(s)
        if not m:
            continue
        if m.group(2) == ".":
            return "dmy", False
        a, b = int(m.group(1)), int(m.group(3))
        if a > 12 >= b:
            return "dmy", False
        if b > 12 >= a:
            return "mdy", False
    ambiguous = any(_DATE_NNY.match(s) and _DATE_NNY.match(s).group(2) != "." for s in dates)
    if ambiguous and sample and decimal_comma(sample):
        return "dmy", True
    return "mdy", ambiguous


@functools.lru_cache(maxsize=4096)
def parse_date(s: str, order: str = "mdy") -> dt.date | None:
    """A date as sysstat prints it under some locale (None when it is not one)."""
    s = s.strip()
    try:
        for rx in (_DATE_ISO, _DATE_CJK, _DATE_YMD):
            m = rx.match(s)
            if m:
                return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        m = _DATE_LONG.match(s)
        if m:
            mon = _MONTHS.get(m.group(2))
            return dt.date(int(m.group(3)), mon, int(m.group(1))) if mon else None
        m = _DATE_NNY.match(s)
        if m:
            a, b, y = int(m.group(1)), int(m.group(3)), _year(m.group(4))
            if m.group(2) == "." or m.group(2) == "-" or order == "dmy":
                a, b = b, a
            return dt.date(y, a, b)
    except ValueError:
        return None
    return None


def parse_tod(tokens: list[str]) -> tuple[int, int] | None:
    """(seconds since midnight, tokens consumed) for a leading time of day, 24 h, 12 h or CJK."""
    if not tokens:
        return None
    m = _TIME_24.match(tokens[0]) or _TIME_CJK.match(tokens[0])
    if not m:
        return None
    h, mi, se = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if mi > 59 or se > 60:
        return None
    if len(tokens) > 1 and tokens[1] in _AMPM:
        if not 1 <= h <= 12:
            return None
        return ((h % 12) + _AMPM[tokens[1]]) * 3600 + mi * 60 + min(se, 59), 2
    if h > 23:
        return None
    return h * 3600 + mi * 60 + min(se, 59), 1


def parse_timestamp(s: str, order: str = "mdy") -> tuple[dt.datetime | None, bool]:
    """A full date and time (iostat -t, JSON "timestamp"); (datetime, exact).

    exact is True when the text carries its UTC offset (ISO form); the datetime is then aware.
    """
    s = s.strip()
    m = _TS_ISO.match(s)
    if m:
        try:
            d = dt.datetime(*(int(m.group(i)) for i in range(1, 7)))
        except ValueError:
            return None, False
        z = m.group(7)
        if not z:
            return d, False
        if z == "Z":
            return d.replace(tzinfo=dt.timezone.utc), True
        z = z.replace(":", "")
        off = dt.timedelta(hours=int(z[1:3]), minutes=int(z[3:5]))
        return d.replace(tzinfo=dt.timezone(off if z[0] == "+" else -off)).astimezone(dt.timezone.utc), True
    parts = s.split()
    if len(parts) < 2:
        return None, False
    day = parse_date(parts[0], order)
    tod = parse_tod(parts[1:])
    if day is None or tod is None or 1 + tod[1] != len(parts):
        return None, False
    return dt.datetime.combine(day, dt.time()) + dt.timedelta(seconds=tod[0]), False


def banner(line: str) -> dict[str, str] | None:
    """Fields of the ``Linux <release> (<host>) <date> _<arch>_ (<n> CPU)`` first line, or None."""
    m = BANNER_RE.match(line.strip())
    return m.groupdict() if m else None
