# The weights package of all-MiniLM-L6-v2 (no type information of its own): where the model files are.
from pathlib import Path

def get_model_path() -> Path: ...
