"""Experiments: a setting sweep with repeats — the plan and run order (plan.py), settings applied
and put back (settings.py), the loop over runs (runner.py), the per-run figures (results.py)."""
