"""Model adapters. Each speaks one wire protocol and yields provider-neutral deltas."""
