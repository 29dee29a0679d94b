"""`python -m oncall_memory.cli`: the same as the `oncall-memory` command."""

from . import console

console()
