"""Node-side collection (standard library only, Python 3.8 syntax: it runs on production GPU nodes)."""
