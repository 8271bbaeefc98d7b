"""Perturbation families: functions that turn a test set into a perturbed test set (paper 004 and later)."""
