"""Importers: what is not a bundle made into one (`forensics bundle`, and `analyze` of loose inputs).

- :mod:`forensics.importers.build`: :func:`build_bundle` merges node bundles and brings in loose files
  (recognised by content), folders of saved outputs, sosreports and nvidia-bug-reports.
- :mod:`forensics.importers.sos`: where each source's output lives in a sosreport.
- :mod:`forensics.importers.nvbug`: the sections of an ``nvidia-bug-report.log`` and their sources.
"""
