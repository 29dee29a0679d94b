"""`python -m oncall_memory.cli`: the same as the `oncall-memory` command."""

import sys

from . import main

sys.exit(main())
