"""mlxlink's field lines read as columns (forensics.sources.mlxlink._read): the same rows, runs, ports and
unparsed lines as the line-by-line reader gave, on the shapes where the two could part (a grep-filtered output
whose fields come before any title, a command line naming the next port, Python's own whitespace)."""
from __future__ import annotations

import polars as pl

from forensics.sources import ParseContext
from forensics.sources import mlxlink

# U+001C-U+001F are whitespace to Python (str.strip, re's \s) and not to Rust's regex: spelt out for polars
HOSTILE = ["State : Active", "  State   :   Active  ", "State :Active", "State: Active", "State :", "State  :  ",
           "1abc : 2", "(a) b [c] : 15E-255", "A  B   : x : y", "St:ate : x", "\x1cState\x1c: Active\x1c",
           "\u2028State\u2028:\x85x\x85", "Key\u00a0 : v\u2003", "State :\tActive\r", "\u3000Operational Info",
           "-E- bad : thing", "-----", "", " : x", "State\x1f:\x1fx", "é : ü", "\u00a0\u00a0K : \u00a0v\u00a0"]


def test_field_pattern_reads_as_pythons():
    got = pl.DataFrame({"text": HOSTILE}).select(pl.col("text").str.extract_groups(mlxlink.KV_PL))["text"].to_list()
    for text, g in zip(HOSTILE, got):
        m = mlxlink._KV.match(text)
        want = (m.group(1), m.group(2)) if m else (None, None)
        assert (g["1"], g["2"]) == want, repr(text)
    assert mlxlink._WS.strip() == "" and "\x1c" in mlxlink._WS and len(mlxlink._WS) == sum(
        chr(c).isspace() for c in range(0x110000))


def test_field_groups_share_the_state_of_their_first_line():
    data = ("Link State : Up\n"  # a field before any title or named port
            "========== mlx5_3 ==========\n"
            "State                              : Active\n"  # grep-filtered: the banner's port, no title
            "\n"
            "Speed                              : 400G\n"
            "$ sudo mlxlink -d mlx5_4 -p 2 -c\n"
            "Effective Physical BER             : 15E-255\n"  # the command's port opens a run at its first field
            "Physical Counters and BER Info\n"
            "------------------------------\n"
            "Raw Physical BER                   : 1E-8\n"
            "Link Down Counter                  : N/A\n"
            "Operational Info\n"
            "----------------\n"
            "State\u00a0\u2003: Down\u2003\n"
            "Tool : mlxlink 4.30\n"  # the word mlxlink: read line by line, a field all the same
            "FEC                                : " + "9" * 400 + "\n"
            "-E- the port is down\n").encode()
    res = mlxlink.parse(data, ParseContext(host="n1"))
    rows = res.tables["mlxlink"].select("line_no", "run_no", "device", "port", "section", "field", "value",
                                        "value_num").rows()
    ber = "Physical Counters and BER Info"
    assert rows == [
        (3, 0, "mlx5_3", None, None, "state", "Active", None), (5, 0, "mlx5_3", None, None, "speed", "400G", None),
        (7, 1, "mlx5_4", 2, None, "effective_physical_ber", "15E-255", 1.5e-254),
        (10, 1, "mlx5_4", 2, ber, "raw_physical_ber", "1E-8", 1e-08), (11, 1, "mlx5_4", 2, ber, "link_down_counter", None, None),
        (14, 2, "mlx5_4", 2, "Operational Info", "state", "Down", None),
        (15, 2, "mlx5_4", 2, "Operational Info", "tool", "mlxlink 4.30", None),
        (16, 2, "mlx5_4", 2, "Operational Info", "fec", "9" * 400, None)]  # past a double's range: no number
    assert res.unparsed.select("line_no", "reason").rows() == [
        (1, "field before any mlxlink section title"), (6, "shell prompt or command line (its -d/-p name the next port)"),
        (17, "mlxlink message")]
    assert res.meta["runs"] == 3
