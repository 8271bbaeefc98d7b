"""Statistics: robustness Metrics I-III, bagging and design bagging, the one engine that evaluates any study on
every leave-one-out pool and method, and rank statistics (Kendall tau, agreement)."""
