"""Helpfulness (NEON §3): does the answer give the user what they wanted about the entity that day, with the
other entities involved? Graded against the query and its day only, as in the paper."""

from __future__ import annotations

from newskg.core.llm.prompt import Prompt
from newskg.evaluation.neon.judges.inputs import Attribute, JudgeCase
from newskg.evaluation.neon.judges.prompts import base
from newskg.evaluation.neon.judges.prompts.base import Verdict

NAME = "neon_judge_helpfulness"
VERSION = 1
ATTRIBUTE: Attribute = "helpfulness"
RESPONSE_MODEL = Verdict


def build(case: JudgeCase, few_shot: bool = False) -> Prompt[Verdict]:
    """Zero-shot: the rubric alone; few-shot: the rubric, worked examples and reason-before-rating."""
    return base.build(NAME, VERSION, ATTRIBUTE, case, few_shot)
