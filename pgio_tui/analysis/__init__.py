"""Comparison of recordings and reports."""
