"""The co-design model: the draft session, proxy-derived readouts and budget arithmetic.

Pure Python on public data only: nothing in this package imports ipywidgets (a test checks
it), so notebooks, scripts and the editors share one model.
"""
