"""Verbs that report what someone said or thinks (word forms: the pipeline runs without a lemmatizer). A clause
such a verb reports is someone's statement: a fact made of it keeps who said it."""

from __future__ import annotations

_FORMS = """
say says said tell tells told write writes wrote add adds added state states stated explain explains explained
note notes noted comment comments commented argue argues argued insist insists insisted warn warns warned
recall recalls recalled continue continues continued acknowledge acknowledges acknowledged admit admits admitted
announce announces announced claim claims claimed report reports reported confirm confirms confirmed
predict predicts predicted suggest suggests suggested believe believes believed think thinks thought
conclude concludes concluded observe observes observed remark remarks remarked reply replies replied
tweet tweets tweeted allege alleges alleged estimate estimates estimated expect expects expected
hope hopes hoped fear fears feared worry worries worried
"""
SPEECH_VERBS = frozenset(_FORMS.split())
