"""Keyword extraction from a query, and the BM25 query string built from the keywords.

`extract_keywords` keeps what carries meaning for lexical search: lower-cased words that are not
English stopwords, code-ish tokens kept whole (`os.path.join`, `__init__`, `str.format`, `--flag`,
`**kwargs`, `g++`) and quoted phrases (double quotes, curly quotes, or single quotes that open
after a space and close before one) kept as one phrase. Call parentheses are dropped
(`list.index()` gives `list.index`), a trailing possessive `'s` is dropped (`c's` gives `c`).

`lexical_query` turns keywords into the text `TantivyIndex.search` receives. That method replaces
every non-alphanumeric character with a space before parsing (see `core/lexical/query.py`), so
no query syntax survives it: phrases, `+`/`-` and field prefixes would be read as plain words
anyway. The string is therefore the keywords' alphanumeric parts, lower-cased, deduplicated in
order, separated by spaces; it passes through `sanitize_query` unchanged.
"""

from __future__ import annotations

import re

__all__ = ["STOPWORDS", "extract_keywords", "lexical_query"]

STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been before
    being below between both but by can can't cannot could couldn't did didn't do does doesn't
    doing don't down during each e.g etc few for from further had hadn't has hasn't have haven't
    having he her here hers herself him himself his how i i'd i'll i'm i've i.e if in into is
    isn't it it's its itself just let's me might more most must mustn't my myself no nor not now
    of off on once only or other ought our ours ourselves out over own same shan't she should
    shouldn't so some such than that that's the their theirs them themselves then there there's
    these they this those through to too under until up us very was wasn't we were weren't what
    what's when where which while who whom why will with won't would wouldn't you your yours
    yourself yourselves
    """.split()
)

_QUOTED = re.compile(
    r"\"(?P<double>[^\"]*)\"|“(?P<curly>[^”]*)”|(?<![\w'])'(?P<single>[^'\s](?:[^']*[^'\s])?)'(?!\w)"
)
_TOKEN = re.compile(
    r"""
    (?<![\w.+*-])--?[a-z][\w-]*                   # command-line flags: -v, --dry-run
    | (?<![\w*])\*{1,2}[a-z_]\w*+(?!\*)           # *args, **kwargs (not *emphasis*)
    | \w+(?:'\w+)*(?:(?:\.|::|-)\w+(?:'\w+)*)*(?:\+\+)?  # words, a.b, a::b, a-b, can't, g++
    """,
    re.VERBOSE,
)
_ALNUM_RUN = re.compile(r"[^\W_]+")
_POSSESSIVE = "'s"


def _phrases_and_rest(text: str) -> list[tuple[str, bool]]:
    """`text` split into (piece, is_quoted) in order; quoted pieces lose their quotes."""
    pieces: list[tuple[str, bool]] = []
    position = 0
    for match in _QUOTED.finditer(text):
        pieces.append((text[position : match.start()], False))
        quoted = next(group for group in match.groups() if group is not None)
        pieces.append((quoted, True))
        position = match.end()
    pieces.append((text[position:], False))
    return pieces


def _words(text: str, keep_stopwords: bool) -> list[str]:
    """Keyword-worthy tokens of lower-cased `text` (stopwords too when `keep_stopwords`)."""
    words: list[str] = []
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token.endswith(_POSSESSIVE) and token not in STOPWORDS:
            token = token[: -len(_POSSESSIVE)]
        if _ALNUM_RUN.search(token) and (keep_stopwords or token not in STOPWORDS):
            words.append(token)
    return words


def extract_keywords(query: str) -> tuple[str, ...]:
    """Lower-cased keywords of `query` in order of first appearance, duplicates removed.

    A quoted phrase of several words is one keyword (stopwords inside it are kept, whitespace
    collapsed); a quoted single token is kept even when it is a stopword (`"with"`). Curly
    apostrophes count as straight ones. Returns () when nothing but stopwords and punctuation is
    left.
    """
    keywords: dict[str, None] = {}
    for piece, quoted in _phrases_and_rest(query.lower().replace("’", "'")):
        phrase = " ".join(piece.split())
        if quoted and " " in phrase:
            keywords.setdefault(phrase, None)
            continue
        for word in _words(piece, keep_stopwords=quoted):
            keywords.setdefault(word, None)
    return tuple(keywords)


def lexical_query(query: str, keywords: tuple[str, ...]) -> str:
    """The BM25 query text: the alphanumeric parts of `keywords`, deduplicated, space-separated.

    Falls back to the alphanumeric words of `query` when the keywords yield none (a query made
    only of stopwords still searches, as the raw text would).
    """
    parts = [part for keyword in keywords for part in _ALNUM_RUN.findall(keyword.lower())]
    if not parts:
        parts = _ALNUM_RUN.findall(query.lower())
    return " ".join(dict.fromkeys(parts))
