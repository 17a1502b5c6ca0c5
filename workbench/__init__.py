"""Release Workbench: co-design, freeze and run-once DP microdata releases."""

__version__ = "0.1.0"
