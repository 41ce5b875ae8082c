"""`python -m forensics.collect` (and the zipapp's entry point)."""
import sys

from forensics.collect.main import main

sys.exit(main())
