"""Print the README's configuration table from the Settings model (so the two never drift apart)."""

from core.settings import Settings

print("| variable | default | meaning |")
print("|---|---|---|")
for name, field in Settings.model_fields.items():
    default = field.default if field.default is not None else ""
    default = f"`{default}`" if default != "" else "(empty)"
    print(f"| `NEWSKG_{name.upper()}` | {default} | {field.description or ''} |")
