"""Run storage: the run folder, its manifest and records, and the per-run outcome index.
"""
