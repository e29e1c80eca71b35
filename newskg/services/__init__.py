"""Local real servers: start, health-check, stop."""
