"""Entity recognition, within-document resolution, the alias index, linking."""
