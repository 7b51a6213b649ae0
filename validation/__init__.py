"""Comparisons of hsa-elastica with measured data (see validation/characterization.py)."""
