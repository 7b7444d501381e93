"""Segment a judgment into sections: Facts, Issues, Submissions, Held, Ratio, Obiter, Unknown.

:func:`segment` returns :class:`Segment` objects that cover the text contiguously (character
offsets, ``[start, end)``). The rules are cheap regular expressions over *units*: paragraphs
(blank lines, a line ending a sentence, a numbered line such as ``12.`` / ``(a)`` / ``(iv)``, a new
line starting with a capital) and numbered paragraphs that start inside a line.

The rules, in the order they apply. Each was measured against the rhetorical-role annotations
(:mod:`countercase.extract.rhetorical_roles`: BUILD dev, 30 judgments / 2,879 spans; Paheli,
50 judgments / 9,380 sentences). The numbers in brackets are the change in span accuracy
(BUILD / Paheli) when that one rule is switched off in the final rule set
(:func:`countercase.extract.rhetorical_roles.ablation`). All together: accuracy 0.123 -> 0.852
(BUILD) and 0.161 -> 0.775 (Paheli) against the plan's fallback alone.

1. ``preamble``: the header (parties, bench, citation, head-note) runs up to the first
   ``JUDGMENT`` / ``J U D G M E N T`` / ``ORDER`` line, "... delivered the following:", or AILA's
   "The Judgment was delivered by ..." / "The Order of the Court was as follows" (with the
   spelling slips found in AILA), in the first half of the text, plus the reporter's "The
   Judgment of the Court was delivered by X, J." block that may follow it; without any of them,
   AILA's four header lines (title, "Supreme Court of India", date, case number). The header is
   ``Unknown`` (BUILD labels it PREAMBLE/NONE). [+0.260 / 0.000; Paheli texts have no header]
2. ``tail``: trailing signature lines (``....J.``, names in capitals, "New Delhi", dates,
   "Sd/-", "(Dictated ...)") are ``Unknown``. [+0.005 / 0.000]
3. ``headings``: a line that is only a heading ("FACTS", "BRIEF FACTS", "BACKGROUND FACTS",
   "STATEMENT OF THE CASE", "ISSUES", "POINTS FOR DETERMINATION", "QUESTIONS FOR CONSIDERATION",
   "SUBMISSIONS", "ARGUMENTS", "CONTENTIONS", "ANALYSIS", "DISCUSSION", "REASONS", "RATIO
   DECIDENDI", "HELD", "RESULT", "ORDER", "OBITER DICTA", ...; any case, optionally numbered,
   ending in ":" or "-") opens a section of its type, and so does a line in capitals that starts
   with such a keyword ("ANALYSIS OF THE STATUTORY PROVISIONS", "PRECEDENTS ON ..."). Within a
   headed section cues do not change the type; another heading ends it, and a capitals-only
   heading of no known type ("RES JUDICATA :") ends a headed section and returns to the body's
   default. An explicit Facts section runs to the next heading of a known other type (the
   evidence, the trial court's and the High Court's judgments are told under their own
   headings inside it). An Issues heading marks only itself and the "Whether ..." items after
   it, since the issue-wise discussion usually follows under it. "CONCLUSION(S)" opens Ratio,
   not Held: in the Paheli judgments that have it, what follows restates the reasoning
   (Paheli's Held precision: 0.68 with Held, 0.90 with Ratio). A Held heading ("ORDER",
   "RESULT") counts only in the last quarter of the body: in AILA, 7 of its 18 unquoted
   occurrences are earlier, heading an order of a court below. Lines that open with a quote are
   quoted material, not headings. Headings are rare (BUILD: none; Paheli: 4 judgments; AILA: 188
   heading lines of known type in 105 judgments), so they cannot show much here.
   [0.000 / +0.006]
4. ``facts_fraction`` (the plan's fallback): the first 20 % of the body (the text after the
   preamble) is Facts when no better end is found.
5. ``facts_end_cue``: the facts end instead at the first unit that opens issues, submissions or
   reasoning (a heading, or a cue of rules 6-8), when it lies between 10 % and 50 % of the body.
   Before 10 % such a cue is mostly the "We have heard learned counsel" opening (no lower bound:
   +0.004 on BUILD, -0.017 on Paheli; 5 %: -0.001 on Paheli, -0.034 on its 5 test judgments);
   beyond 50 % it is rarely the end of the facts (40 % or 60 % did worse on both sets).
   [+0.038 / +0.013]
6. ``issues``: units starting "The (only|short|...) question/issue/point (that arises|for
   consideration|to decide ...)", "This appeal raises a question", or a "Whether ...?"
   question are Issues, and so are the "Whether ..." / "What order?" items right after them.
   The body's default resumes after them. [+0.023 / +0.001]
7. ``submissions``: units starting with a counsel's argument ("Learned counsel for the appellant
   contended/submitted/urged ...", "It was contended ...", "Mr. X, learned counsel ...",
   "Per contra ...", "He further submitted ...") open Submissions, which run on until a
   reasoning cue (rule 8) or 500 characters past the last submissions cue: arguments are
   summarised in short runs, and the court answers them right after (runs of 1 to 300
   characters score within 0.005 of it; 800 or more does worse on both sets).
   [+0.005 / +0.026]
8. ``ratio_cues`` ("We have considered", "Having heard", "In our view/opinion", "We are of the
   view", "We find/hold/...", "There is no merit", "It is well settled", "Admittedly") end a
   Submissions run and can end the facts (rule 5). Cues starting "I am/I have ..." were dropped:
   in Paheli they fired mostly on facts (-0.01). [+0.038 / -0.005]
9. ``body_ratio``: the rest of the body is the court's reasoning, Ratio (the plan's fallback
   leaves it Unknown); reasoning is most of a judgment's text. [+0.198 / +0.185]
10. ``held``: the last 1,000 characters of the body are searched for the first sentence that
    disposes of the case ("The appeal is allowed/dismissed", "In the result", "no order as to
    costs", "set aside", "acquitted", "We accordingly allow ...", "answered in the
    affirmative/negative"); from that sentence on the body is Held, unless a Held heading was
    found. (A window of 500 / 1,500 / 3,000 characters did worse; cues at unit starts only did
    worse than sentences.) [+0.021 / +0.013]

Tried and dropped: facts cues ("The facts in brief are ...") as a signal that the facts go on
to there (no change on either set); on an earlier version of the rules, letting only "strong"
reasoning cues ("We have considered", "In our view") end the facts (+0.02 on Paheli, -0.02 on
BUILD). A fallback share other than 20 % was not adopted (25 %: +0.004 on BUILD, -0.002 on
Paheli).

Of the rules written after looking at Paheli errors, the capitals-prefix headings came from one
training judgment (2006_A_136). Paheli's 5 test judgments were not used to choose any rule
(except to keep the 10 % bound of rule 5): baseline 0.146 -> final 0.847 on them.

``Obiter`` is produced only by an "OBITER DICTA" heading: nothing in the annotations marks obiter.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, replace

SECTION_TYPES = ("Facts", "Issues", "Submissions", "Held", "Ratio", "Obiter", "Unknown")


@dataclass(frozen=True)
class Segment:
    section_type: str
    start: int  # character offsets into the text, [start, end)
    end: int


@dataclass(frozen=True)
class Rules:
    """Which rules run (see the module docstring); :data:`FINAL` is the default."""

    facts_fraction: float = 0.2
    preamble: bool = True
    tail: bool = True
    headings: bool = True
    facts_end_cue: bool = True
    min_facts_fraction: float = 0.10
    max_facts_fraction: float = 0.50
    issues: bool = True
    submissions: bool = True
    submissions_decay: int = 500
    ratio_cues: bool = True
    body_ratio: bool = True
    held: bool = True
    held_window: int = 1000

    def without(self, name: str) -> "Rules":
        """These rules with one switched off (for ablations)."""
        return replace(self, **{name: False})


FINAL = Rules()
# The plan's fallback alone: first 20 % Facts, the rest Unknown.
BASELINE = Rules(preamble=False, tail=False, headings=False, facts_end_cue=False, issues=False,
                 submissions=False, ratio_cues=False, body_ratio=False, held=False)
# The plan as written: headings, else the fallback.
PLAN = replace(BASELINE, headings=True)
RULE_NAMES = ("preamble", "tail", "headings", "facts_end_cue", "issues", "submissions",
              "ratio_cues", "body_ratio", "held")

# ---------------------------------------------------------------------------------------------
# Units
_BOUNDARY = re.compile(
    r"\n[ \t]*\n\s*"  # blank line
    r"|[.?!:;\"”’')\]][ \t]*\n\s*"  # a line that ends a sentence
    r"|\n[ \t]*(?=(?:\d{1,3}\.|\(\w{1,4}\)|[ivxIVX]{1,5}\.)\s)"  # a numbered line
    r"|\n[ \t]*(?=[A-Z\"“‘(])"  # a new line starting with a capital
    r"|[.?!\"”][ \t]+(?=\d{1,3}\.[ \t]+[A-Z\"“])"  # "... end. 12. The next paragraph"
)
_SENT_END = re.compile(r"[.?!][\"”’')]*\s+(?=[A-Z\"“(])|\n\s*")
_NUM = r"(?:\(?\d{1,3}[.)]|\(?[a-zA-Z][.)]|\(?[ivxIVX]{1,5}[.)]|[A-Z]\.)"
_LEAD = re.compile(r"[\s\"“'‘(]*(?:" + _NUM + r"[\s\"“]*)*")  # quotes and paragraph numbers

# Rule 1
_PREAMBLE_MARK = re.compile(
    r"^[ \t/:]*(?:ORAL[ \t]+|COMMON[ \t]+)?"
    r"(?:J[ \t]?U[ \t]?D[ \t]?G[ \t]?E?[ \t]?M[ \t]?E[ \t]?N[ \t]?T|O[ \t]?R[ \t]?D[ \t]?E[ \t]?R)"
    r"[ \t]*(?:\(PER[^)\n]*\)[ \t]*)?(?:[:/.]+[ \t]*|[ \t]*$)"
    r"|^[^\n]*(?i:(?:delivered|court\s+made)\s+the\s+following)[ \t]*:?[ \t]*"
    r"|^[^\n]*(?i:The\s+(?:Judge?ment|Order)(?:\s+of\s+the\s+Court)?\s+(?:was|is)\s+(?:was\s+|as\s+)?"
    r"(?:delivered\s+by|follo?ws?\b|as\s+follo?ws?\b))[^\n]*$",
    re.M,
)
# AILA's own header when it has no such line: title, "Supreme Court of India", date, case number.
_AILA_HEADER = re.compile(r"\A[^\n]*\nSupreme Court of India\n\s*\n?[^\n]*\b\d{4}\n[^\n]*\n")
_DELIVERED_BY = re.compile(
    r"(?i:The\s+(?:Judgment|Order)\s+of\s+the\s+Court\.?\s+was\s+(?:delivered|made)\s+by)\s*:?\s*"
    r"(?:[A-Z][A-Za-z.\s]{0,40}?,?\s*(?:C\.\s*)?JJ?\b\.?)?"
)
_AUTHOR_LINE = re.compile(r"\s*(?:\(?PER\s*:?\s*)?[A-Z][A-Za-z.\s]{2,40},\s*(?:C\.\s*)?JJ?\.?\s*\)?\s*[:.\-]*[ \t]*\n")

# Rule 2
_TAIL_LINE = re.compile(
    r"^\s*$|^[\s.\-…]*\.{3,}.*$|^.*\bJ\.?\s*\)?\s*$|^\s*\(?[A-Z][A-Z .,&]{2,60}\)?\s*$|^.*NEW\s+DELHI.*$"
    r"|^\s*(?:Sd/-|Dated?\b|Place\b).*$|^[^a-z]{0,40}\d{4}\.?\s*$"
    r"|^.{0,60}\b(?i:New\s+Delhi)\b.{0,40}$|^\s*\(?Dictated\b.*$",
)
_LONG_TAIL = re.compile(r"\s*(?:\.{5,}|\(?Dictated\b)")

# Rule 3
_HEADINGS = [
    ("Facts", r"(?:the\s+)?(?:brief\s+|relevant\s+|background\s+|material\s+|basic\s+|undisputed\s+|admitted\s+)?facts?"
              r"(?:\s+(?:of\s+the\s+case|in\s+brief|in\s+short|and\s+(?:the\s+)?background|in\s+a\s+nutshell))?"
              r"|factual\s+(?:background|matrix|aspects?|position|narrative|history)|(?:the\s+)?background"
              r"|statement\s+of\s+(?:the\s+)?(?:case|facts)|(?:the\s+)?prosecution\s+case|case\s+of\s+the\s+prosecution"
              r"|introduction"),
    ("Issues", r"(?:the\s+)?(?:(?:main|core|principal|substantial|short)\s+)?(?:issues?|points?|questions?)"
               r"(?:\s+of\s+law)?(?:\s+(?:for|to\s+be|that\s+arises?\s+for|arising\s+for|involved|raised)"
               r"(?:\s+(?:our\s+)?(?:determination|consideration|decision|adjudication))?)?"),
    ("Submissions", r"(?:the\s+)?(?:rival\s+)?(?:submissions?|arguments?|contentions?|pleas?)"
                    r"(?:\s+(?:of|on\s+behalf\s+of|by|for)\s+(?:the\s+)?(?:learned\s+)?"
                    r"(?:parties|counsel|appellants?|respondents?|petitioners?|state|accused))?"),
    ("Ratio", r"(?:our\s+)?(?:analysis|discussion|consideration|reasons?|reasoning|findings?|view)"
              r"(?:\s+and\s+(?:findings?|conclusions?|analysis|discussion))?|ratio(?:\s+decidendi)?|determination"
              r"|submissions\s+and\s+discussion|merits|appreciation\s+of\s+evidence|evaluation"
              r"|precedents?|case\s+laws?|(?:relevant\s+|statutory\s+)provisions|legal\s+position"
              r"|conclusions?"),  # see rule 3 in the docstring
    ("Held", r"held|result|(?:final\s+)?order|operative\s+(?:order|portion)|directions?|relief|decision"
             r"|disposition"),
    ("Obiter", r"obiter(?:\s+dict(?:a|um))?"),
]
_OTHER = "other"  # a heading line of no known type
_QUOTES = "\"“‘'"
HELD_HEADING_FROM = 0.75  # a Held heading ("ORDER", "RESULT") counts only in the last quarter of the body
# e.g. "RES JUDICATA :", "II. DELAY IN LODGING FIR": capitals only, short, on a line of its own
_CAPS_HEADING = re.compile(r"[ \t]*(?:[IVX]{1,5}\.|\d{1,2}\.|\([a-z]\))?[ \t]*[A-Z][A-Z0-9 ,&'()/\-]{2,58}[ \t]*[:\-]*[ \t]*$")
_HEADING_RES = [(t, re.compile(p, re.I)) for t, p in _HEADINGS]
# capitals-only headings that start with a keyword and go on with a topic
_PREFIX_HEADING_RES = [(t, re.compile(p + r"\b", re.I)) for t, p in [
    ("Facts", r"(?:the\s+)?(?:brief\s+|relevant\s+|background\s+)?facts|factual\s+(?:background|matrix)"),
    ("Issues", r"(?:the\s+)?(?:issues?|questions?|points?)\s+(?:for|involved|arising|raised)"),
    ("Submissions", r"(?:the\s+)?(?:rival\s+)?(?:submissions?|arguments?|contentions?)"),
    ("Ratio", r"(?:our\s+)?(?:analysis|discussion|consideration|reasons|reasoning|findings?)|precedents?|case\s+laws?"
              r"|(?:relevant\s+|statutory\s+|legal\s+)(?:provisions?|position)"),
]]
_HEADING_STRIP = re.compile(r"^\W*(?:" + _NUM + r"\s*)?(?P<core>.*?)[\s:.\-–—]*$")

# Rules 6-8: cues matched at a unit's start (after its number and quotes)
_CUES: dict[str, list[str]] = {
    "Issues": [
        r"(?:the\s+)?(?:short|only|sole|main|principal|primary|core|moot|neat|important|substantial|first|second|next"
        r"|following|two|three|common|narrow|crucial|basic|real|pivotal)?\s*(?:questions?|issues?|points?)\s+"
        r"(?:of\s+law\s+)?(?:that|which|for|to\s+be|to\s+(?:decide|determine|consider|answer)|involved|arising|raised"
        r"|before\s+us|arises?|falling|requiring|being|canvassed|emerg|posed|referred|of\s+importance)",
        r"(?:this|the)\s+(?:appeal|petition|reference|case)s?\s+(?:by\s+\w+\s+(?:leave|certificate)\s+)?raises?\s+"
        r"(?:a|the)\s+(?:short\s+|only\s+|important\s+|interesting\s+)?(?:question|issue|point)",
        r"whether\b[^\n]{0,400}\?",
    ],
    "Submissions": [
        r"(?:the\s+)?(?:\w+\s+){0,8}?(?:learned|ld\.?)\s+(?:senior\s+|additional\s+|addl\.\s+|chief\s+)?"
        r"(?:counsel|advocate|solicitor|attorney|amicus|standing\s+counsel|public\s+prosecutor|app|aga"
        r"|government\s+(?:advocate|pleader)|defence\s+counsel)\b[^.]{0,160}?\b(?:contend|submit|urg|argu|point"
        r"|rel[iy]|assail|canvass|strenuous|vehement|placed\s+reliance|stated|states|sa(?:id|ys)|pray|question|challeng"
        r"|maintain|invite|contest|plead|support|took\s+us|taken\s+us|drew|draw|refer)",
        r"it\s+(?:is|was|has\s+been)\s+(?:further\s+|also\s+|next\s+|then\s+|lastly\s+|finally\s+)?"
        r"(?:contended|submitted|urged|argued|pointed\s+out|canvassed|pleaded|stated\s+on\s+behalf)",
        r"(?:mr|mrs|ms|shri|smt|sri|dr)\.?\s+[^.,]{0,60},?\s+(?:the\s+)?(?:learned|ld\.?)",
        r"(?:on\s+behalf\s+of|for)\s+the\s+(?:appellants?|respondents?|petitioners?|state|accused|assessee|revenue"
        r"|complainant)\b[^.]{0,80}?(?:contend|submit|urg|argu|it\s+(?:is|was))",
        r"(?:the\s+)?(?:main\s+|principal\s+|only\s+|first\s+|next\s+|other\s+)?(?:contention|submission|argument"
        r"|plea|grievance)s?\s+(?:of|on\s+behalf\s+of|advanced|raised|urged|made|put\s+forward)",
        r"(?:per\s+contra|on\s+the\s+other\s+hand|in\s+reply|in\s+rebuttal|countering|refuting|opposing)\b[^.]{0,100}?"
        r"(?:counsel|advocate|respondent|appellant|state|submit|contend|urg|argu)",
        r"(?:he|she|they|counsel)\s+(?:also\s+|further\s+|then\s+|next\s+|lastly\s+|finally\s+)?(?:submitted|submits"
        r"|contended|contends|urged|urges|argued|argues|relied|relies|pointed\s+out|points\s+out|placed\s+reliance"
        r"|invited|referred|drew)",
        r"according\s+to\s+(?:him|her|them|(?:the\s+)?(?:learned\s+)?(?:senior\s+)?counsel)\b",
    ],
    "Ratio": [
        r"we\s+have\s+(?:carefully\s+|anxiously\s+|duly\s+|also\s+|now\s+)?(?:considered|heard|gone\s+through|perused"
        r"|examined|given|bestowed|weighed)",
        r"having\s+(?:heard|considered|gone\s+through|perused|regard|given|examined|carefully)",
        r"(?:in\s+)?(?:our|my)\s+(?:view|opinion|considered)",
        r"we\s+(?:are|were)\s+(?:of\s+the|unable|not|inclined|satisfied|in\s+agreement|in\s+(?:complete|full)\s+agreement"
        r"|clearly|firmly|afraid|constrained|conscious|also)",
        r"we\s+(?:find|hold|agree|see|do\s+not|cannot|can\s+not|would|may|shall|will|now|think|consider|must|have\s+no"
        r"|feel|need)",
        r"there\s+is\s+(?:no|nothing|considerable|much|force|substance|merit|some)",
        r"it\s+is\s+(?:well[\s-]settled|settled|clear|evident|manifest|apparent|obvious|trite|now\s+well)",
        r"(?:now|turning|coming)\s+(?:to|we)",
        r"(?:admittedly|undoubtedly|indisputably|evidently|plainly)",
    ],
}
_CUE_RES = {t: re.compile(r"(?:" + "|".join(p) + r")", re.I) for t, p in _CUES.items()}
_ISSUE_ITEM = re.compile(r"(?:whether\b|what\s+(?:order|relief))", re.I)

# Rule 10
_DISPOSAL = re.compile(
    r"\b(?:appeals?|petitions?|suits?|revisions?|applications?|references?|writs?)\b[^.;]{0,80}?"
    r"\b(?:allowed|dismissed|disposed\s+of|rejected|decreed|fails?|succeeds?)\b"
    r"|\bin\s+the\s+result\b|\bno\s+order\s+as\s+to\s+costs\b|\border\s+accordingly\b|\bset\s+aside\b"
    r"|\bacquit(?:ted)?\b|\bset\s+at\s+liberty\b|\bbear\s+(?:their|its|his|her)\s+own\s+costs\b"
    r"|\bwe\s+(?:accordingly\s+|therefore\s+|hereby\s+)?(?:allow|dismiss|dispose|set\s+aside|quash|direct|answer)\b"
    r"|\banswer(?:ed)?\b[^.;]{0,80}\b(?:affirmative|negative|in\s+favour)",
    re.I,
)


def _unit_starts(text: str, start: int, end: int) -> list[int]:
    starts = [start]
    for m in _BOUNDARY.finditer(text, start, end):
        pos = m.end()
        if start < pos < end and pos > starts[-1]:
            starts.append(pos)
    return starts


def _preamble_end(text: str) -> int:
    """End of the header (rule 1), or 0 when no marker is found in the first half."""
    m = _PREAMBLE_MARK.search(text, 0, len(text) // 2)
    if not m:
        header = _AILA_HEADER.match(text)
        return header.end() if header else 0
    end = m.end()
    while True:  # "... delivered the following:" and then "JUDGMENT": take both
        skip = end
        while skip < len(text) and text[skip].isspace():
            skip += 1
        line_start = text.rfind("\n", 0, skip) + 1
        m = _PREAMBLE_MARK.match(text, line_start) if line_start >= end else None
        if not m or m.end() <= skip:
            break
        end = m.end()
    by = _DELIVERED_BY.search(text, end, min(len(text), end + 2500))
    if by and not re.search(r"\n\s*1\.\s", text[end:by.start()]):  # not once the body has begun
        end = by.end()
    author = _AUTHOR_LINE.match(text, end)  # "HEMANT GUPTA, J."
    if author and author.end() - author.start() < 80:
        end = author.end()
    while end < len(text) and text[end].isspace():
        end += 1
    return end


def _tail_start(text: str, floor: int) -> int:
    """Start of the trailing signature block (rule 2), or len(text)."""
    pos = len(text)
    while pos > floor:
        nl = text.rfind("\n", floor, pos - 1 if text[pos - 1] == "\n" else pos)
        line_start = nl + 1 if nl >= 0 else floor
        line = text[line_start:pos].rstrip("\n")
        if (len(line.strip()) > 80 and not _LONG_TAIL.match(line)) or not _TAIL_LINE.match(line):
            break
        pos = line_start
        if nl < 0:
            break
    return pos


def _heading_type(line: str) -> str | None:
    m = _HEADING_STRIP.match(line.strip())
    core = m.group("core") if m else ""
    if not core or len(core) > 60:
        return None
    for section_type, rx in _HEADING_RES:
        if rx.fullmatch(core):
            return section_type
    if _CAPS_HEADING.match(line):  # "ANALYSIS OF THE STATUTORY PROVISIONS", "SUBMISSIONS ON LIMITATION"
        for section_type, rx in _PREFIX_HEADING_RES:
            if rx.match(core):
                return section_type
    return None


def _held_start(text: str, lo: int, hi: int) -> int | None:
    """Start of the first sentence in [lo, hi) that disposes of the case (rule 10)."""
    m = _DISPOSAL.search(text, lo, hi)
    if not m:
        return None
    start = lo
    for s in _SENT_END.finditer(text, max(lo, m.start() - 600), m.start()):
        start = s.end()
    if start > m.start():
        start = lo
    while start < m.start() and text[start].isspace():
        start += 1
    return start


def segment(text: str, rules: Rules = FINAL, facts_fraction: float | None = None) -> list[Segment]:
    """Sections of ``text``: contiguous, non-empty segments covering ``[0, len(text))``.

    Adjacent segments of the same type are merged. An empty text gives ``[]``.
    ``facts_fraction`` overrides ``rules.facts_fraction`` (``params.yaml``:
    ``extract.facts_fallback_fraction``).
    """
    if facts_fraction is not None:
        if not 0 < facts_fraction <= 1:
            raise ValueError(f"facts_fraction must be in (0, 1], got {facts_fraction}")
        rules = replace(rules, facts_fraction=facts_fraction)
    n = len(text)
    if n == 0:
        return []
    body_start = _preamble_end(text) if rules.preamble else 0
    body_end = _tail_start(text, body_start) if rules.tail else n
    if body_end <= body_start:  # nothing left: no preamble/tail split
        body_start, body_end = 0, n
    body = _Body(text, body_start, body_end, _unit_starts(text, body_start, body_end))
    facts_end = _fallback_cut(body, rules)
    headings, cues = _marks(body, rules)
    if rules.facts_end_cue:
        facts_end = _facts_end(body, rules, headings, cues, facts_end)
    types = _types(body, rules, headings, cues, facts_end)
    if rules.held and not any(t == "Held" for t in types):
        _held(body, rules, types, facts_end)
    return _merged(n, body, types)


@dataclass
class _Body:
    """The body of a judgment (between its preamble and its tail) and where its units start."""

    text: str
    start: int
    end: int
    units: list[int]

    @property
    def length(self) -> int:
        return self.end - self.start

    @property
    def ends(self) -> list[int]:
        return self.units[1:] + [self.end]


def _fallback_cut(body: _Body, rules: Rules) -> int:
    """Rule 4: the fallback's end of the facts, at the next unit start or, in a long unit, the
    next sentence end (inserted as a unit start)."""
    units = body.units
    cut = body.start + int(rules.facts_fraction * body.length)
    k = bisect.bisect_right(units, cut)
    nxt = units[k] if k < len(units) else body.end
    if nxt - cut > 200:
        m = _SENT_END.search(body.text, cut, nxt)
        if m and m.end() < nxt:
            units.insert(k, m.end())
            nxt = m.end()
    return nxt


def _marks(body: _Body, rules: Rules) -> tuple[list[str | None], list[str | None]]:
    """A heading (rule 3) and a cue (rules 6-8) per unit, or None."""
    text, units = body.text, body.units
    cue_types = [t for t, on in (("Issues", rules.issues), ("Submissions", rules.submissions),
                                 ("Ratio", rules.ratio_cues)) if on]
    headings: list[str | None] = [None] * len(units)
    cues: list[str | None] = [None] * len(units)
    for i, (u, e) in enumerate(zip(units, body.ends)):
        if rules.headings:
            nl = text.find("\n", u, e)
            line = text[u:nl if nl >= 0 else e]
            if len(line) <= 80 and line.lstrip()[:1] not in _QUOTES:  # not in quoted material
                heading = _heading_type(line) or (_OTHER if _CAPS_HEADING.match(line) else None)
                if heading == "Held" and u - body.start < HELD_HEADING_FROM * body.length:
                    heading = None  # "ORDER" early on heads an order of a court below, quoted
                headings[i] = heading
        if cue_types:
            p = _LEAD.match(text, u, e).end()
            window = text[p:min(e, p + 260)]
            for t in cue_types:
                if _CUE_RES[t].match(window):
                    cues[i] = t
                    break
    return headings, cues


def _facts_end(body: _Body, rules: Rules, headings: list[str | None], cues: list[str | None],
               facts_end: int) -> int:
    """Rule 5: where the facts end (``facts_end``, the fallback's, when nothing marks it)."""
    units = body.units
    lo, hi = rules.min_facts_fraction * body.length, rules.max_facts_fraction * body.length
    first = 0
    facts_heading = next((i for i, h in enumerate(headings)
                          if h == "Facts" and units[i] - body.start <= hi), -1)
    if facts_heading >= 0:
        # an explicit facts section runs to the next heading of a known other type
        nxt = next((j for j in range(facts_heading + 1, len(units))
                    if headings[j] not in (None, "Facts", _OTHER)), -1)
        if nxt >= 0:
            facts_end, first = units[nxt], len(units)
        else:
            first = facts_heading + 1
    for i in range(first, len(units)):
        offset = units[i] - body.start
        if offset > hi:
            break
        if (headings[i] not in (None, "Facts", _OTHER)) or (cues[i] and offset >= lo):
            if units[i] > body.start:
                facts_end = units[i]
            break
    return facts_end


def _types(body: _Body, rules: Rules, headings: list[str | None], cues: list[str | None],
           facts_end: int) -> list[str]:
    """The section type of each unit: the facts, then the state the headings and cues set."""
    text, units, ends = body.text, body.units, body.ends
    default = "Ratio" if rules.body_ratio else "Unknown"
    types = [default] * len(units)
    state, in_issues, last_submission, heading_run = default, False, -1, False
    for i, u in enumerate(units):
        if u < facts_end:
            types[i] = "Facts"
            continue
        h, c = headings[i], cues[i]
        if h == "Issues" or (h is None and c == "Issues"):
            types[i] = "Issues"
            in_issues = True
            if state == "Submissions" and not heading_run:
                state = default
            continue
        if in_issues and _ISSUE_ITEM.match(text, _LEAD.match(text, u, ends[i]).end()):
            types[i] = "Issues"
            continue
        in_issues = False
        if h == _OTHER:  # a heading of no known type (a topic of the discussion) ends a headed section
            if heading_run:
                state, heading_run = default, False
        elif h:
            state, heading_run = h, True
        elif heading_run:  # within a headed section, cues do not change its type
            pass
        elif c == "Submissions":
            state, last_submission = "Submissions", u
        elif c == "Ratio":
            state = "Ratio"
        elif state == "Submissions" and rules.submissions_decay and u - last_submission > rules.submissions_decay:
            state = default
        types[i] = state
    return types


def _held(body: _Body, rules: Rules, types: list[str], facts_end: int) -> None:
    """Rule 10: with no Held section, the disposal at the end starts one (a unit start and its
    type inserted where it falls inside a unit)."""
    units = body.units
    hs = _held_start(body.text, max(facts_end, body.end - rules.held_window), body.end)
    if hs is None:
        return
    k = bisect.bisect_right(units, hs) - 1
    if units[k] != hs:
        units.insert(k + 1, hs)
        types.insert(k + 1, types[k])
        k += 1
    for m in range(k, len(units)):
        types[m] = "Held"


def _merged(n: int, body: _Body, types: list[str]) -> list[Segment]:
    """The units as segments, the preamble and the tail Unknown, neighbours of one type merged."""
    segments: list[Segment] = []

    def add(section_type: str, start: int, end: int) -> None:
        if end <= start:
            return
        if segments and segments[-1].section_type == section_type:
            segments[-1] = Segment(section_type, segments[-1].start, end)
        else:
            segments.append(Segment(section_type, start, end))

    add("Unknown", 0, body.start)
    for section_type, start, end in zip(types, body.units, body.ends):
        add(section_type, start, end)
    add("Unknown", body.end, n)
    return segments


def section_of_span(segments: list[Segment], start: int, end: int) -> str:
    """The section type covering most characters of ``[start, end)`` (a tie goes to the earlier
    type); for an empty span, the type at ``start``; ``"Unknown"`` where no segment covers it."""
    if end <= start:
        return section_at(segments, start)
    i = max(0, bisect.bisect_right([s.start for s in segments], start) - 1)
    weight: dict[str, int] = {}
    while i < len(segments) and segments[i].start < end:
        seg = segments[i]
        overlap = min(end, seg.end) - max(start, seg.start)
        if overlap > 0:
            weight[seg.section_type] = weight.get(seg.section_type, 0) + overlap
        i += 1
    if not weight:
        return "Unknown"
    return max(weight, key=weight.__getitem__)  # dicts keep insertion order: ties go to the earlier


def section_at(segments: list[Segment], offset: int) -> str:
    """The section type at a character offset; ``"Unknown"`` outside the segments."""
    if not segments or offset < segments[0].start or offset >= segments[-1].end:
        return "Unknown"
    i = bisect.bisect_right([s.start for s in segments], offset) - 1
    return segments[i].section_type


def facts_text(text: str, segments: list[Segment] | None = None) -> str:
    """The Facts section(s) of ``text``, stripped, joined by blank lines ("" when there are none)."""
    if segments is None:
        segments = segment(text)
    parts = [text[s.start:s.end].strip() for s in segments if s.section_type == "Facts"]
    return "\n\n".join(p for p in parts if p)
