"""Faithfulness (NEON §3): is every statement of the answer backed by the evidence passages it was given? The
only judge prompt that shows the evidence."""

from __future__ import annotations

from newskg.core.llm.prompt import Prompt
from newskg.evaluation.neon.judges.inputs import Attribute, JudgeCase
from newskg.evaluation.neon.judges.prompts import base
from newskg.evaluation.neon.judges.prompts.base import Verdict

NAME = "neon_judge_faithfulness"
VERSION = 1
ATTRIBUTE: Attribute = "faithfulness"
RESPONSE_MODEL = Verdict


def build(case: JudgeCase, few_shot: bool = False) -> Prompt[Verdict]:
    """Zero-shot: the rubric alone; few-shot: the rubric, worked examples and reason-before-rating."""
    return base.build(NAME, VERSION, ATTRIBUTE, case, few_shot)
