"""Reproductions of the papers' experiments (layer 10): one module per paper."""
