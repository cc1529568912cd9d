"""The runtime: agent loop, run state machine, limits, peers and the context fold."""
