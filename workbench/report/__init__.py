"""Human-readable renderings: spec summaries, criteria tables, datasheets and release reports."""

from workbench.report.spec_summary import describe_spec

__all__ = ["describe_spec"]
