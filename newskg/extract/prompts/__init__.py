"""One prompt per module, each with its response model and version."""
