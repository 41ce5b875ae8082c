"""Headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe: no port,
no websocket), for the HTML report's browser tests.

The browser runs with the network off: a proxy that does not exist, every host name resolving to
nothing, no background or component traffic, and the page emulated offline. Every request the page
makes is recorded (Network.requestWillBeSent), as are console messages, log entries and uncaught
exceptions.
"""
from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path

# Debian's /usr/bin/chromium is a shell launcher that sources /etc/chromium.d and does not keep the
# protocol pipe's descriptors: run the binary behind it where it is there.
CANDIDATES = ("/usr/lib/chromium/chromium", "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")


def find_chromium() -> str | None:
    env = os.environ.get("FORENSICS_CHROMIUM")
    if env and Path(env).exists():
        return env
    for c in CANDIDATES:
        if Path(c).exists():
            return c
    return shutil.which("chromium")


class Browser:
    def __init__(self, binary: str, profile: Path, width: int = 1400, height: int = 1000):
        to_child_r, self._w = os.pipe()
        self._r, from_child_w = os.pipe()
        # the child's ends move above 20, so that placing them at 3 and 4 never closes one of them
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 20) for fd in (to_child_r, from_child_w)]
        os.close(to_child_r)
        os.close(from_child_w)
        to_child_r, from_child_w = high
        args = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-default-apps", "--disable-extensions", "--no-default-browser-check",
                "--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND",
                "--disable-dev-shm-usage", f"--window-size={width},{height}",
                f"--user-data-dir={profile}", "--remote-debugging-pipe", "about:blank"]
        # the protocol pipe must be fds 3 (commands in) and 4 (replies out) in the browser
        wrapper = f'exec "$@" 3<&{to_child_r} 4>&{from_child_w} {to_child_r}<&- {from_child_w}>&-'
        self.log = profile / "chromium-stderr.log"
        with open(self.log, "wb") as err:  # a file, not a pipe: a chatty browser never blocks on it
            self.proc = subprocess.Popen(["/bin/bash", "-c", wrapper, "bash"] + args, pass_fds=(to_child_r, from_child_w),
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict] = []
        self.session: str | None = None

    # -- protocol ---------------------------------------------------------------------------
    def _send(self, method: str, params: dict | None = None, session: str | None = None) -> int:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        return self._id

    def _read(self, timeout: float) -> dict | None:
        end = time.monotonic() + timeout
        while b"\0" not in self._buf:
            left = end - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self._r], [], [], left)
            if not ready:
                return None
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe: " + self._stderr_tail())
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, params: dict | None = None, timeout: float = 20.0, session: str | None = "page") -> dict:
        sid = self.session if session == "page" else session
        mid = self._send(method, params, sid)
        end = time.monotonic() + timeout
        while True:
            msg = self._read(max(0.01, end - time.monotonic()))
            if msg is None:
                raise TimeoutError(f"{method}: no reply in {timeout} s")
            if msg.get("id") == mid:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def pump(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            msg = self._read(end - time.monotonic())
            if msg and "method" in msg:
                self.events.append(msg)

    def _stderr_tail(self) -> str:
        try:
            self.proc.kill()
            return self.log.read_text(errors="replace")[-2000:]
        except Exception:  # noqa: BLE001
            return ""

    # -- page ---------------------------------------------------------------------------------
    def open_page(self) -> None:
        target = self.call("Target.createTarget", {"url": "about:blank"}, session=None)["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True}, session=None)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        # and the page itself offline (DevTools network emulation), besides the dead proxy and resolver
        self.call("Network.emulateNetworkConditions", {"offline": True, "latency": 0, "downloadThroughput": -1,
                                                       "uploadThroughput": -1})

    def navigate(self, url: str, timeout: float = 20.0) -> None:
        self.call("Page.navigate", {"url": url})
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if any(ev["method"] == "Page.loadEventFired" for ev in self.events):
                return
            self.pump(0.1)
        raise TimeoutError(f"{url}: no load event in {timeout} s")

    def evaluate(self, expr: str):
        res = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in res:
            raise RuntimeError(f"evaluate {expr!r}: {res['exceptionDetails']}")
        return res["result"].get("value")

    def wait_for(self, expr: str, timeout: float = 15.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            v = self.evaluate(expr)
            if v:
                return v
            self.pump(0.1)
        raise TimeoutError(f"{expr}: still false after {timeout} s")

    def screenshot(self, path: Path, full_page: bool = True) -> Path:
        params = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
        data = self.call("Page.captureScreenshot", params, timeout=30)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    # -- what the page did -------------------------------------------------------------------
    def requests(self) -> list[str]:
        return [ev["params"]["request"]["url"] for ev in self.events if ev["method"] == "Network.requestWillBeSent"]

    def problems(self) -> list[str]:
        """Console errors/warnings, log errors and uncaught exceptions the page produced."""
        out = []
        for ev in self.events:
            m, p = ev["method"], ev.get("params", {})
            if m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append("exception: " + str(d.get("exception", {}).get("description") or d.get("text")))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert", "warning"):
                out.append(f"console.{p['type']}: " + " ".join(str(a.get("value", a.get("description"))) for a in p.get("args", [])))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
                out.append(f"log {p['entry'].get('source')}: {p['entry'].get('text')}")
        return out

    def close(self) -> None:
        try:
            self._send("Browser.close")
            self.proc.wait(timeout=5)
        except Exception:  # noqa: BLE001
            self.proc.kill()
            self.proc.wait(timeout=5)
        finally:
            for fd in (self._r, self._w):
                try:
                    os.close(fd)
                except OSError:
                    pass
