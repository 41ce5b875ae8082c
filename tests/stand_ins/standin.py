"""Stand-in for the node tools the collector runs (nvidia-smi, ethtool, iostat, sar, numactl, dmesg, ...).

Installed under each tool's name in a bin folder put first on PATH (see kit.make_bin). What it does
is read from the JSON file named by $STANDIN_CONFIG:

    {"<tool>": {"mode": "replay", "file": "<fixture>", "by_arg": {"<argument>": "<fixture>"}, ...}}

("mode_by_arg": {"<all arguments>": "<mode>"} overrides the mode for one invocation; "head_by_arg":
{"<argument>": N} replays only the first N lines of the fixture.) Modes: replay (print a real captured output), loop (print it, then keep running until killed, like
`nvidia-smi -l`), hang (sleep, ignore SIGTERM, with a child that sleeps too), fail (message on
stderr, exit 1), garbage (random bytes), huge (100 MB of lines), oneline ("bytes" bytes without a
newline), setsid (replay, leaving behind a child in a session of its own that ignores SIGTERM and
closed its output: a daemon), setsid_hang (hang, with such a child holding stdout open). Every
start is appended to $STANDIN_LOG with its argv and pid (the setsid children too, before their
parent goes on), so a test can check that none is left running.
"""
import json
import os
import random
import signal
import subprocess
import sys
import time

TOOL = os.path.basename(sys.argv[0])  # main(tool) sets it when run through a wrapper
ARGS = sys.argv[1:]


def log():
    path = os.environ.get("STANDIN_LOG")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({"tool": TOOL, "argv": ARGS, "pid": os.getpid()}) + "\n")


def setsid_child(hold_stdout):
    """A child in a new session (out of the process group the collector kills) that ignores SIGTERM."""
    r, w = os.pipe()
    code = ("import json, os, signal, sys, time\n"
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "p = os.environ.get('STANDIN_LOG')\n"
            "if p:\n"
            "    open(p, 'a').write(json.dumps({'tool': %r, 'argv': [], 'pid': os.getpid()}) + '\\n')\n"
            "os.write(%d, b'ready')\n"
            "os.close(%d)\n"
            "time.sleep(3600)\n") % (TOOL + ":setsid", w, w)
    subprocess.Popen([sys.executable, "-c", code], start_new_session=True, pass_fds=(w,),
                     stdout=None if hold_stdout else subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(w)
    os.read(r, 5)  # logged before we go on
    os.close(r)


def pick(cfg):
    """The fixture for this invocation: by_arg matches any argument (interface, sar flag, nvidia-smi option)."""
    by_arg = cfg.get("by_arg") or {}
    joined = " ".join(ARGS)
    for test in (lambda k: k == joined, lambda k: k in ARGS, lambda k: any(a.startswith(k) for a in ARGS)):
        for key, path in by_arg.items():
            if test(key):
                return path
    return cfg.get("file")


def emit(path, head=None):
    with open(path, "rb") as fh:
        data = fh.read()
    if head:  # only the first lines (one output of a fixture that holds several)
        data = b"".join(data.splitlines(True)[:head])
    sys.stdout.buffer.write(data)
    sys.stdout.flush()


def main(tool=None):
    global TOOL
    TOOL = tool or TOOL
    log()
    with open(os.environ["STANDIN_CONFIG"]) as fh:
        cfg = json.load(fh).get(TOOL, {})
    mode = cfg.get("mode", "replay")
    for key, m in (cfg.get("mode_by_arg") or {}).items():
        if key == " ".join(ARGS):
            mode = m
    if mode == "oneline":
        left = int(cfg.get("bytes", 1 << 20))
        block = b"x" * (1 << 20)
        while left > 0:
            sys.stdout.buffer.write(block[:left])
            left -= len(block)
        sys.stdout.flush()
        return 0
    if mode in ("setsid", "setsid_hang"):
        setsid_child(hold_stdout=mode == "setsid_hang")
        mode = "hang" if mode == "setsid_hang" else "replay"
    if mode == "hang":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])  # a child in our group
        sys.stdout.write("starting...\n")
        sys.stdout.flush()
        time.sleep(3600)
        return 0
    if mode == "fail":
        sys.stderr.write("%s: %s\n" % (TOOL, cfg.get("message", "Operation not permitted")))
        return cfg.get("code", 1)
    if mode == "garbage":
        rnd = random.Random(7)
        sys.stdout.buffer.write(bytes(rnd.getrandbits(8) for _ in range(20000)))
        return 0
    if mode == "huge":
        line = b"x" * 99 + b"\n"
        block = line * 10000  # 1 MB
        for _ in range(100):
            sys.stdout.buffer.write(block)
        sys.stdout.flush()
        return 0
    special = cfg.get("text", {})
    for key, text in special.items():  # generated answers (e.g. compute apps with the test's pids)
        if key in " ".join(ARGS):
            sys.stdout.write(text)
            return 0
    path = pick(cfg)
    if path is None:
        sys.stderr.write("%s: no stand-in output for %s\n" % (TOOL, ARGS))
        return 2
    head = [n for key, n in (cfg.get("head_by_arg") or {}).items() if key in ARGS]
    emit(path, head[0] if head else None)
    if mode == "loop" or (mode == "replay" and cfg.get("loop_on") and any(a in ARGS for a in cfg["loop_on"])):
        while True:
            time.sleep(0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
