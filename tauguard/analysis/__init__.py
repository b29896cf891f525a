"""Analysis of stored runs: metrics, paired statistics, compare, check, summaries, power, rendering.
"""
