"""NEON's judges over the wire against the local llama.cpp server (`newskg services up --llm`).

SmolLM2-135M is far too small to grade well and may answer junk: this proves the wire path, the
parser and the accounting (every attribute ends parsed with a 0-2 score, or counted unparsed in the ledger),
not the quality of the grades."""

import pytest

from newskg.evaluation.neon.judges import ATTRIBUTES, EvidenceItem, Judge, aggregate
from newskg.wiring import Wiring

pytestmark = [pytest.mark.integration, pytest.mark.llm]

QUERY, DAY = "olaf scholz eye patch", 20230904
ANSWER = "On September 2, 2023 Olaf Scholz fell while jogging and hurt his face; he now wears an eye patch."
EVIDENCE = [
    EvidenceItem("Olaf Scholz fell while jogging and bruised his face.", 20230902, "interaction"),
    EvidenceItem("Olaf Scholz posted a photo of himself wearing an eye patch.", 20230904, "interaction"),
]


# At most six calls of ~450 tokens: seconds each on an idle machine (40-50 tok/s measured here), but minutes each
# when the two cores are saturated (measured: 218 s for one call at load 16), hence the generous limits.
@pytest.mark.timeout(1800)
def test_every_attribute_is_judged_over_the_wire_and_ends_parsed_or_counted(llm_stack):
    # A verdict is a short JSON object; the cap keeps a rambling small model from filling 512 tokens per call.
    settings = llm_stack.settings.model_copy(update={"llm_max_tokens": 96, "llm_timeout_s": 900.0})
    with Wiring(settings) as wiring:
        llm = wiring.llm()
        assert llm is not None and llm.cache is not None
        zero = Judge(llm).judge(QUERY, DAY, ANSWER, EVIDENCE)
        judged = list(zero.attributes)
        assert [a.attribute for a in judged] == list(ATTRIBUTES)
        for graded in judged:
            if graded.parsed:
                assert graded.score in (0, 1, 2)
                assert graded.cache_hit or graded.attempts in (1, 2)
            else:
                assert graded.score is None and graded.attempts == 2
            assert graded.cache_hit or graded.prompt_tokens > 0  # the server reported usage
        ledger = {row["prompt"]: row for row in llm.cache.usage()}
        counters = {(row["prompt"], row["name"]): row["n"] for row in llm.cache.counters()}
        for graded in judged:
            assert ledger[graded.prompt]["calls"] + ledger[graded.prompt]["cached"] >= 1
            if not graded.parsed:
                assert counters[(graded.prompt, "unparsed")] >= 1 and ledger[graded.prompt]["failures"] >= 1
        summary = aggregate([zero])
        assert sum(s.parsed + s.unparsed for s in summary.values()) == 3

        parsed = [a for a in zero.attributes if a.parsed]  # parsed verdicts come back from the cache, no call
        again = Judge(llm, attributes=[a.attribute for a in parsed]).judge(QUERY, DAY, ANSWER, EVIDENCE)
        assert [(a.cache_hit, a.attempts, a.score) for a in again.attributes] == [(True, 0, a.score) for a in parsed]
