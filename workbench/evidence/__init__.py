"""Public evidence (issue 35): the proxy, the published aggregates it is re-weighted to, and
populations at n drawn from them (``core.Evidence``); the proxy builders (a seeded record sample
of a public source, ``records``; rows drawn from published facts, ``sampler`` and ``build``).

The proxy stands in for the confidential registry during co-design (Hod & Canetti §4.10).
"""
