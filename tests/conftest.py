import os
import time

# The whole suite runs with a pinned zone and locale: parsers of local-time sources must not
# depend on the machine they run on.
os.environ["TZ"] = "UTC"
os.environ["LC_ALL"] = "C"
time.tzset()


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def cli_env(tmp_path_factory):
    """Environment for running the `forensics` executable in a subprocess: pinned zone and locale,
    one parsed-table cache shared by every test of the session (each sample bundle parsed once)."""
    return {**os.environ, "TZ": "UTC", "LC_ALL": "C", "FORENSICS_CACHE_DIR": str(tmp_path_factory.mktemp("cli-cache"))}
