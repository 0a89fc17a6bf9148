"""Analyses: plain functions of a Run's DataFrames that a user can call too."""

from .grouping import assign_groups

__all__ = ["assign_groups"]
