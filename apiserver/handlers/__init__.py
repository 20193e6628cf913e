"""REST handlers: one module per verb family, all generic over the kind registry."""
