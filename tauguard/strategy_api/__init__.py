"""The strategy contract and the conversation view: the guard hooks a strategy implements,
the τ²-independent conversation it sees, and the name registry strategies are found by.
"""
