"""Labelled benchmarks built from real agents' recorded conversations."""
