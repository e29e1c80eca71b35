"""FanOutQA (Zhu et al., the FanOutQA paper): the reference dev/test sets as typed records and the reference
metrics (loose/strict accuracy, ROUGE-1/2/L through the reference functions; the A–F factuality judge through the
project's LLM client), with the leaderboard's JSON shape and our JSON/HTML/PNG report.

For an answerer: `metrics.score(questions, answers, judge=...) -> FanoutReport`, then `report.write_report`."""
