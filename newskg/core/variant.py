"""The open-IE extraction variants: one enum for the graph, the records, the settings, the stage and the CLI.

Its values are what the graph stores on an interaction (`x.variant`), what its id digests (core/ids.py) and what
`graph export` writes: "M0", "M1", "M2". A `StrEnum`, so a member is that very string wherever it goes (JSON, a
query parameter, a digest). People write it in lowercase (`NEWSKG_EXTRACT_VARIANT=m1`, `--variant m2`): `parse`
takes either case, at those boundaries only (a record carrying "m1" is still refused).
"""

from __future__ import annotations

from enum import StrEnum


class Variant(StrEnum):
    M0 = "M0"  # offline rules over the parse (extract/openie/clauses.py)
    M1 = "M1"  # an LLM per chunk, for the target subjects
    M2 = "M2"  # an LLM per (subject, object) pair over k chunks, scheduled over the graph

    @property
    def needs_llm(self) -> bool:
        return self is not Variant.M0

    @property
    def option(self) -> str:
        """How settings and the CLI spell it: "m0", "m1", "m2"."""
        return self.value.lower()

    @classmethod
    def parse(cls, text: object) -> Variant:
        """A variant from "m0"/"M0"… (a member passes through); ValueError for anything else."""
        if isinstance(text, Variant):
            return text
        if isinstance(text, str):
            for member in cls:
                if member.value == text.upper():
                    return member
        choices = ", ".join(m.option for m in cls)
        # never the value: a settings error names none (core/settings.py)
        raise ValueError(f"a variant is one of {choices} (either case)")
