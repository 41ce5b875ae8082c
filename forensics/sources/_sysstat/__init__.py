"""What the sysstat parsers (iostat, sar) share: banner, dates and times, numbers, column maps, rows.

sysstat prints local times and dates in the format of the locale it ran under (C: ``11/30/21``,
en_US: ``11/30/2021 10:15:02 AM``, de_DE: ``30.11.2021``, zh_CN: ``2017年01月12日`` and
``14时28分00秒``, ``S_TIME_FORMAT=ISO``: ``2021-11-30`` and ``2021-11-30T10:15:02+0100``).
Day and month order of ``NN/NN/NN`` dates is decided per file: a first field above 12 means
day/month (en_GB), a second one above 12 means month/day; when no date tells, month/day (C and
en_US) is assumed and the result's meta says so.

>>> parse_date("2017年01月12日")
datetime.date(2017, 1, 12)
>>> parse_date("30.10.2020"), parse_date("01/01/70"), parse_date("04/23/2019")
(datetime.date(2020, 10, 30), datetime.date(1970, 1, 1), datetime.date(2019, 4, 23))
>>> parse_tod(["03:59:48", "PM", "eth0"]), parse_tod(["14时28分00秒", "x"])
((57588, 2), (52080, 1))
>>> banner("Linux 3.10.0-957.el7.x86_64 (lqdocker) \\t08/11/2020 \\t_x86_64_\\t(16 CPU)")["host"]
'lqdocker'
"""
from __future__ import annotations

from forensics.sources._sysstat.dates import (  # noqa: F401
    BANNER_RE, banner, date_order, parse_date, parse_timestamp, parse_tod,
)
from forensics.sources._sysstat.tokens import (  # noqa: F401
    BadValue, SPLIT_ONLY_BLANKS, has_any, is_number, stamp_frame, stamps, value, words,
)
from forensics.sources._sysstat.columns import (  # noqa: F401
    CPU_COLS, CPU_JSON, DISK_COLS, DISK_JSON, MEM_COLS, MEM_JSON, NET_DEV_COLS, NET_DEV_JSON, NET_EDEV_COLS, NET_EDEV_JSON, QUEUE_COLS, TEXT_COLS, is_item_header,
)
from forensics.sources._sysstat.rows import (  # noqa: F401
    Batch, Collector, EXTRA, _EXTRA_TYPES, empty, exact_us, local_us, no_gc,
)
from forensics.sources._sysstat.jsonlines import (  # noqa: F401
    HostsJson, JsonError, JsonLines, json_tok,
)
