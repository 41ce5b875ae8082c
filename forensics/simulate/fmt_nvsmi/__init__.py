"""nvidia-smi outputs of an HGX H100 node on driver 545: ``-q`` snapshots, one ``-q -x``, the
``--query-gpu=... --format=csv -lms N`` series, ``topo -m`` and ``nvlink -gt d`` snapshots.

The ``-q`` layout (field names, indentation, "Clocks Event Reasons", T.Limit temperatures, "GPU
Memory Power Readings " with its trailing space) is the H100 / 545.23.08 output in
tests/fixtures/nvidia_smi (Princeton della-j11g1); the XML follows the nvsmi_device_v12 documents
of the telegraf fixtures; ``topo -m`` the della 8 x H100 matrix with its NIC legend; ``nvlink -gt d``
the driver's layout of tests/fixtures/nvidia_smi/nvidia_smi--nvlink-gt-d-* (``GPU i: <name> (UUID:
...)``, then ``\\t Link k: Data Tx: N KiB`` and ``Data Rx`` per link, a tab and a space before "Link").
"""
from forensics.simulate.fmt_nvsmi.csv import CSV_COLUMNS, csv_argv, csv_fields, query_csv
from forensics.simulate.fmt_nvsmi.nvlink import nvlink_snapshots
from forensics.simulate.fmt_nvsmi.q_text import q_snapshots
from forensics.simulate.fmt_nvsmi.q_xml import q_xml
from forensics.simulate.fmt_nvsmi.topo import topo

__all__ = ["CSV_COLUMNS", "csv_argv", "csv_fields", "query_csv", "nvlink_snapshots", "q_snapshots", "q_xml", "topo"]
