"""oncall-memory: have we seen this alert before, and what fixed it?"""

__version__ = "0.1.0"
