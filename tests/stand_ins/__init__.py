"""Test kit of the bundle/collect area: executable stand-ins for node tools, and bundle builders."""
