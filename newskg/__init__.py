"""The application on top: CLI, local services and the wiring of adapters by configuration."""
