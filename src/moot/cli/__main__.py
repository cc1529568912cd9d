"""`python -m moot.cli`: the command line, as the `moot` script runs it."""

import sys

from moot.cli import main

sys.exit(main())
