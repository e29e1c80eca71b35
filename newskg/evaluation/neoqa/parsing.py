"""Reading a model's multiple-choice answer (NeoQA appendix F.7): the number on the last line ("Answer: [3]",
"Answer: 3"), else the last "Answer: n" anywhere, else an option quoted verbatim; −1 when none of these holds."""

from __future__ import annotations

import re

ANSWER = re.compile(r"answer\s*(?:is)?\s*[:=]?\s*\[?\s*(\d+)\s*\]?", re.I)
BARE_NUMBER = re.compile(r"^\[?\s*(\d+)\s*\]?\.?$")


def parse_choice(text: str, options: list[str], first: int = 1) -> int:
    """The 0-based index of the chosen option; options are shown numbered from `first`."""
    lines = [line.strip() for line in (text or "").strip().splitlines() if line.strip()]
    if not lines:
        return -1
    last = lines[-1]
    for match in (ANSWER.search(last), BARE_NUMBER.match(last)):
        if match and (index := int(match.group(1)) - first) in range(len(options)):
            return index
    for match in reversed(list(ANSWER.finditer(text))):
        if (index := int(match.group(1)) - first) in range(len(options)):
            return index
    quoted = [i for i, option in enumerate(options) if option.lower() in text.lower()]
    return quoted[0] if len(quoted) == 1 else -1
