"""The leak check's worst case (issue 15: "time is bounded on any input"): every one of 100,000 lines
(7 MB) holds one of 8,000 originals (MAC addresses) glued to hex digits, so every line passes the
Aho-Corasick prefilter and meets the regexes of all 8,000 values, beside a random MAC address.
CPU seconds with the values split into regexes of forensics.redact.verify.REGEX_VALUES (1,000) and
in one regex (100,000).

    python benchmarks/leak_check_worst.py
"""
import random, time, sys
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent))
import polars as pl
from forensics.redact import verify as V
rnd = random.Random(2)
mac = lambda: "0c:42:a1:" + ":".join(f"{rnd.randrange(256):02x}" for _ in range(3))
orig = {"hex": {mac() for _ in range(8000)}}
vals = sorted(orig["hex"])
# every original in the text, but glued to hex digits: no boundary, so no leak, yet every line is a candidate
ser = pl.Series([f"    link/ether {mac()} brd ff:ff:ff:ff:ff:ff port {i} a{vals[i % len(vals)]}f" for i in range(100_000)])
for n in (1000, 100_000):
    V.REGEX_VALUES = n
    t = time.process_time(); leaks = []; V._scan(ser, V.Rules(orig), "w", leaks); print(f"REGEX_VALUES {n}: {time.process_time()-t:.2f} CPU s, {len(leaks)} leaks", flush=True)
