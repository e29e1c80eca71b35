"""Relevance (NEON §3): is the answer about the right entity at the right moment, accurate for the query's day?
Graded against the query and its day only, as in the paper."""

from __future__ import annotations

from newskg.core.llm.prompt import Prompt
from newskg.evaluation.neon.judges.inputs import Attribute, JudgeCase
from newskg.evaluation.neon.judges.prompts import base
from newskg.evaluation.neon.judges.prompts.base import Verdict

NAME = "neon_judge_relevance"
VERSION = 1
ATTRIBUTE: Attribute = "relevance"
RESPONSE_MODEL = Verdict


def build(case: JudgeCase, few_shot: bool = False) -> Prompt[Verdict]:
    """Zero-shot: the rubric alone; few-shot: the rubric, worked examples and reason-before-rating."""
    return base.build(NAME, VERSION, ATTRIBUTE, case, few_shot)
