"""The design assistant: per-criterion ε, ε_gen and the selection mode from the proxy at n.

``design(spec, proxy, n, target_p=0.6)`` rehearses the spec's generator on the public proxy
resampled to the registry's expected size, derives each criterion's ε from its margin on the
candidates, forecasts P(all pass) for every alternative, and keeps the smallest ε_total (by
``privacy.budget_plan.BudgetPlan``) whose forecast reaches the target; ``workbench design``
prints the derivation table and writes the draft spec. Public data only (simulation contexts).
"""
