"""NEON's LLM judges (paper §3-4): helpfulness, relevance and faithfulness, each on a 0-2 scale, each in its own
LLM call (the paper's order-bias argument), zero-shot or few-shot. Rubric wording and worked examples are data
files (`data/rubrics.json`, `data/examples.jsonl`), our own words.

Interface (for replay and reports)::

    from newskg.evaluation.neon.judges import Judge, aggregate

    judge = Judge(llm, few_shot=True)           # llm: `core.llm.client.LLMClient` (`newskg.wiring.Wiring.llm`)
    j = judge.judge(query, day, answer, evidence)   # day: yyyymmdd int; evidence: Sequence[EvidenceLike]
    j.score("faithfulness")                     # 0 | 1 | 2 | None (None = unparsed, never a score)
    j.attributes                                # AttributeJudgement per attribute: score, rationale, parsed,
                                                #   attempts, cache_hit, prompt_tokens, completion_tokens, prompt
    j.as_dict()                                 # for report.json
    aggregate(judgements)["relevance"]          # AttributeSummary: mean over parsed, parsed, unparsed

`EvidenceLike` is structural: anything with `text: str`, `event_day: int` (yyyymmdd) and `kind: str`, e.g.
`qa.evidence.Evidence`. Helpfulness and relevance see query, day and answer; faithfulness also sees the evidence
(as in the paper). All inputs are delimited and escaped. Answers go through the client's cache (a repeated
judgement costs no call) and usage ledger (prompt names `neon_judge_<attribute>[_few_shot]`; unparsed outcomes
are also counted there as `unparsed`). A malformed or out-of-range answer is retried once by the client, then
counted as unparsed. The offline proxies, which are no judges and never mix with their scores, are in
`evaluation.neon.proxies`."""

from newskg.evaluation.neon.judges.inputs import ATTRIBUTES, Attribute, EvidenceItem, EvidenceLike, JudgeCase
from newskg.evaluation.neon.judges.judge import AttributeJudgement, AttributeSummary, Judge, Judgement, aggregate
from newskg.evaluation.neon.judges.prompts.base import Verdict

__all__ = [
    "ATTRIBUTES",
    "Attribute",
    "AttributeJudgement",
    "AttributeSummary",
    "EvidenceItem",
    "EvidenceLike",
    "Judge",
    "JudgeCase",
    "Judgement",
    "Verdict",
    "aggregate",
]
