"""`python -m vtp` runs the `vtp` CLI."""

import sys

from vtp.cli import main

sys.exit(main())
