import os
import time

# The whole suite runs with a pinned zone and locale: parsers of local-time sources must not
# depend on the machine they run on.
os.environ["TZ"] = "UTC"
os.environ["LC_ALL"] = "C"
time.tzset()
