"""Search over config spaces: strategies and the learned cost model."""
