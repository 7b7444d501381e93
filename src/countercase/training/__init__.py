"""What every trained model shares: the query split it trains and is chosen on, the saved state
an interrupted run takes up, and the check that it learned."""
