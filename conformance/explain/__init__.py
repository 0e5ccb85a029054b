"""explain."""
