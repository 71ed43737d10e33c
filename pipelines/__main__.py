"""`python -m pipelines` runs the `vtp` CLI."""

import sys

from pipelines.cli import main

sys.exit(main())
