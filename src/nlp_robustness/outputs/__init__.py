"""Outputs: paper-shaped tables (CSV, Markdown, LaTeX) and figures (PNG, PDF)."""
