"""Reports: render findings and views (never raw tables)."""
