"""Semantic search over the catalog's endpoints: what is embedded, the in-memory index and the
ranking.

Each endpoint is described by one text (``endpoint_search_text``): its summary, operation name,
description, the API's name, slug and description, the words of its path and its parameter
names; by a short one (``endpoint_short_text``); and, when it has them, by its use cases, needs
it answers in users' words (catalog.use_cases), whose vectors are averaged into one. The texts'
vectors are computed when the endpoint is imported or edited and stored in
``EndpointEmbedding`` (see catalog.services.endpoint_embeddings_refresh), so a process only
reads vectors and never re-embeds the catalog.

Each process holds one ``SearchIndex``: the vectors as a float32 matrix, a BM25 index over the
full texts and the use cases, and what an answer shows. ``search_index_current()`` compares the
catalog version with the one the index was built from on every search (one primary-key read)
and rebuilds the index when it moved; requests arriving during a rebuild keep using the
previous index.

Ranking fuses the two signals into one relevance, then maps it to a score (see ``Ranking``):

    texts  = (1 - short_view) * cos(query, full text) + short_view * cos(query, short text)
    cosine = (1 - use_case_view) * texts + use_case_view * cos(query, use cases)  # texts without
    relevance = cosine + lexical * bm25 / (bm25 + lexical_half) + verified_prior * verified
    relevance[BM25's best] = max(itself, just above the 5th best relevance)
    score = 1 / (1 + exp(-(scale * relevance + bias)))

The cosines are one dot product with a mixed vector built when the index is; the BM25 term
(over the full text and the use cases) is saturated to [0, 1) so that it means the same whatever
the query's length; ``verified`` is 1 for an endpoint the operator verified in a verified API.
The endpoint that matches the query's words best always gets a place among the first five: where
the two signals disagree, each has its best candidate in the answer's head.

The score is a fixed function of the endpoint's own relevance, never of the other candidates':
two endpoints that match a need as well score alike, the same relevance scores the same in
every query, and a need nothing answers scores low everywhere. The logistic map is fitted once
on the training split of bench/search_queries.yaml (``bench/search_quality.py --fit``): 0.5 is
the relevance at which an endpoint looks as much like a need's right answers as like the wrong
endpoints that crowd its first ten, each need counting once on each side.
"""

import hashlib
import logging
import math
import re
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from catalog import prices
from catalog.texts import SENTENCE_END, SPACES, endpoint_brief_source, split_identifier
from catalog.use_cases import use_cases_of
from catalog.version import catalog_version_current

logger = logging.getLogger("catalog.search")

# --- What gets embedded ---------------------------------------------------------------------------

DESCRIPTION_CHARS = 300
API_DESCRIPTION_CHARS = 160
MAX_PARAMETERS = 12
# Transport-level parameters that many APIs take on every operation (Google's standard query
# parameters, API keys, response formats): they say nothing about what an endpoint does.
TRANSPORT_PARAMETERS = frozenset(
    {
        "access token",
        "alt",
        "api key",
        "apikey",
        "bearer token",
        "callback",
        "fields",
        "format",
        "key",
        "oauth token",
        "pp",
        "pretty print",
        "quota user",
        "upload protocol",
        "upload type",
        "user ip",
        "xgafv",
    }
)

_TAG = re.compile(r"<[^>]+>")
_MARKDOWN_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_URL = re.compile(r"https?://\S+")
_VERSION_WORD = re.compile(r"^(v\d+(\.\d+)*|\d+([.-]\d+)*)$")


def clean_text(text: str) -> str:
    """Prose without HTML tags, markdown links, URLs or markup characters."""
    text = _MARKDOWN_LINK.sub(r"\1", text or "")
    text = _TAG.sub(" ", text)
    text = _URL.sub(" ", text)
    text = text.replace("`", "").replace("*", "").replace("#", " ").replace("\\r", " ")
    text = text.replace("\\n", " ").replace("&nbsp;", " ").replace("&amp;", "&")
    return SPACES.sub(" ", text).strip()


def _first_chars(text: str, limit: int) -> str:
    """Whole sentences up to ``limit`` characters (at least the first sentence's start)."""
    if len(text) <= limit:
        return text
    kept = ""
    for sentence in SENTENCE_END.split(text):
        if kept and len(kept) + len(sentence) + 1 > limit:
            break
        kept = f"{kept} {sentence}".strip()
    return kept[:limit]


def _words(text: str) -> str:
    seen: list[str] = []
    for word in split_identifier(text):
        if not _VERSION_WORD.match(word) and word not in seen:
            seen.append(word)
    return " ".join(seen)


def endpoint_search_text(
    *,
    api_name: str,
    api_slug: str,
    api_description: str,
    method: str,
    path: str,
    operation_id: str,
    summary: str,
    description: str,
    parameter_names: list[str],
) -> str:
    """The text that stands for an endpoint in the index (embedded and BM25-indexed).

    What the endpoint does comes first (the model reads at most 128 word pieces), then which API
    it belongs to, then the words of its path and its parameters. Summaries that only repeat the
    operation name ("addCards()") add nothing, so the operation's words stand in for them.
    """
    summary = clean_text(summary)
    description = _first_chars(clean_text(description), DESCRIPTION_CHARS)
    operation = _words(operation_id)
    if summary and _words(summary) == operation:
        summary = ""
    parts = []
    if summary:
        parts.append(summary.rstrip(".") + ".")
    if operation:
        parts.append(operation + ".")
    if description and description.lower() != summary.lower():
        parts.append(description.rstrip(".") + ".")
    api_line = f"{clean_text(api_name)} API ({_words(api_slug)})"
    api_about = _first_chars(clean_text(api_description), API_DESCRIPTION_CHARS)
    if api_about:
        api_line += f": {api_about.rstrip('.')}"
    parts.append(api_line + ".")
    parts.append(f"{method.upper()} {_words(path)}.")
    names = []
    for name in parameter_names:
        words = _words(name)
        if words and words not in names and words not in TRANSPORT_PARAMETERS:
            names.append(words)
    if names:
        parts.append("Parameters: " + ", ".join(names[:MAX_PARAMETERS]) + ".")
    return " ".join(parts)


SHORT_DESCRIPTION_CHARS = 160


def endpoint_short_text(
    *, api_name: str, method: str, path: str, operation_id: str, summary: str, description: str
) -> str:
    """The endpoint's second, short view: its API, method, path and one line of what it does
    (its summary, else the start of its description, else its operation's words). The full
    text describes more, which also dilutes what the endpoint is mostly about; the index mixes
    the two vectors (``Ranking.short_view``). A whole description here would be that dilution
    again: half of the corpus's endpoints have no summary, and a third of their descriptions run
    past 64 word pieces."""
    operation = _words(operation_id)
    line = clean_text(summary)
    if line and _words(line) == operation:
        line = operation  # "addCards()" says nothing its words do not
    line = line or _first_chars(clean_text(description), SHORT_DESCRIPTION_CHARS) or operation
    return f"{clean_text(api_name)}. {method.upper()} {path}. {line}"


@dataclass(frozen=True)
class SearchTexts:
    """What is embedded for one endpoint: its full text, its short text and its use cases."""

    full: str
    short: str
    use_cases: tuple[str, ...] = ()

    @property
    def hash(self) -> str:
        """The SHA-256 stored with the vectors. An endpoint without use cases hashes as before
        use cases existed, and one with a single use case as before it could have several, so
        their stored vectors stay current."""
        joined = "\n".join((self.full, self.short, *self.use_cases))
        return hashlib.sha256(joined.encode()).hexdigest()


def endpoint_search_texts_for(endpoint: Any, api: Any) -> SearchTexts:
    """The texts embedded for an Endpoint and its ProviderApi."""
    short = endpoint_short_text(
        api_name=api.name,
        method=endpoint.method,
        path=endpoint.path,
        operation_id=endpoint.operation_id,
        summary=endpoint.summary,
        description=endpoint.description,
    )
    return SearchTexts(
        endpoint_search_text_for(endpoint, api), short, use_cases_of(endpoint.use_cases)
    )


def endpoint_search_text_for(endpoint: Any, api: Any) -> str:
    """``endpoint_search_text`` for an Endpoint and its ProviderApi (or rows with their fields)."""
    names = [
        param.get("name", "")
        for params in (endpoint.path_params, endpoint.query_params, endpoint.body_params)
        for param in (params or [])
        if isinstance(param, dict)
    ]
    return endpoint_search_text(
        api_name=api.name,
        api_slug=api.slug,
        api_description=api.description,
        method=endpoint.method,
        path=endpoint.path,
        operation_id=endpoint.operation_id,
        summary=endpoint.summary,
        description=endpoint.description,
        parameter_names=names,
    )


# --- Lexical side ---------------------------------------------------------------------------------

# Words that say nothing about which endpoint is meant ("an API to ...", "how do I ...").
_STOPWORD_TEXT = """
a about all an and any are as at be by can could do does for from give have how i if in into
is it its let me my need of on or our please show some that the their them then there these
this those to use using via want way we what when where which who whose will with would you
your api apis endpoint endpoints service
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_stemmers = threading.local()


def lexical_tokens(text: str) -> list[str]:
    """Lower-case English stems of the words of ``text``, identifiers split, stopwords dropped."""
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:  # PyStemmer's stemmers are not thread-safe: one per thread
        import Stemmer

        stemmer = _stemmers.english = Stemmer.Stemmer("english")
    words = [word for word in split_identifier(text) if word not in _STOPWORDS and len(word) > 1]
    return stemmer.stemWords(words)


# --- Queries --------------------------------------------------------------------------------------

# Framing around the need, removed from the start of a prompt (repeatedly): "Can you find me an
# API that lets me send an SMS?" -> "send an SMS".
_ACTOR = r"(?:i|we|you|one)"
_QUERY_FRAMING = [
    re.compile(pattern + r"\s+", re.IGNORECASE)
    for pattern in (
        r"^(?:please\s+)?(?:can|could|would)\s+you(?:\s+please)?",
        rf"^how\s+(?:do|can|could|should|would|to)(?:\s+{_ACTOR})?",
        rf"^{_ACTOR}(?:'m|\s+am|\s+are)?\s+(?:want|need|would\s+like|looking|searching)"
        r"(?:\s+(?:to|for))?",
        r"^(?:looking|searching)\s+for",
        r"^is\s+there",
        r"^(?:please\s+)?(?:find|give|show|recommend|suggest|get)(?:\s+(?:me|us))?"
        r"(?=\s+(?:an?|the|some|any)?\s*(?:api|endpoint|tool|service|way)s?\b)",
        r"^(?:which|what)\s+(?:api|endpoint|tool|service)s?"
        r"(?:\s+(?:can|will|should\s+i\s+use\s+to|do\s+i\s+use\s+to))?",
        r"^(?:an?|the|some|any)?\s*(?:api|endpoint|tool|service|way|method)s?"
        r"\s+(?:to|that|for|which|where|i\s+can\s+use\s+to)"
        r"(?:\s+(?:can|will|could))?",
        r"^(?:lets?|allows?|helps?|enables?)\s+(?:me|us|you)(?:\s+to)?",
        r"^help\s+(?:me|us)(?:\s+to)?",
        r"^please",
    )
]

# A concrete value in a need says what the need is about, not what it asks for, and its letters
# pull the query's vector towards whatever endpoint shares them (a blog's address towards a
# product scraper, a quoted phrase towards its topic): each is replaced by its kind.
_CONCRETE_VALUES = [
    (re.compile(r"https?://\S+", re.IGNORECASE), "a web page"),
    (re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"), "an email address"),
    (re.compile(r"\"[^\"]+\"|\u201c[^\u201d]+\u201d"), "a phrase"),
]


def prompt_words(prompt: str, *, normalise: bool = True) -> int:
    """How many words the need has, as ``Ranking.logits`` reads its length."""
    return max(1, len((query_normalise(prompt) if normalise else prompt).split()))


def query_normalise(prompt: str) -> str:
    """The need without the words around it, its concrete values by their kind: "I want to
    send an SMS" -> "send an SMS", "is jane@acme.com real" -> "is an email address real"."""
    text = SPACES.sub(" ", prompt).strip()
    for pattern, kind in _CONCRETE_VALUES:
        text = pattern.sub(kind, text)
    changed = True
    while changed:
        changed = False
        for pattern in _QUERY_FRAMING:
            shorter = pattern.sub("", text, count=1)
            if shorter != text and shorter.strip():
                text, changed = shorter, True
    return text.rstrip("?.! ") or text


# --- Ranking --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ranking:
    """How the two signals are fused into one relevance, and how relevance maps to a score.

    ``short_view`` (the weight of the short text's vector in the mix of the two texts' vectors),
    ``use_case_view`` (the weight of the use case's vector against that mix, for an endpoint
    that has one), ``lexical`` and ``lexical_half`` order the results (chosen on the training
    split).
    ``verified_prior`` is added to the relevance of an endpoint that the operator verified, in a
    verified API: at about equal relevance, the endpoint the gateway knows to work comes first
    (chosen on every split of bench/search_queries.yaml, see docs/search.md). ``scale`` and
    ``bias`` only calibrate: a logistic fit of "answers the need" on the relevance alone, over
    judged needs the model never read, so the score grows with relevance, never changes the
    order, and does not depend on which other endpoints a query finds (a share of the
    candidates' total would score five equally good endpoints as five poor ones, and the best
    of a nonsense query as a good one).

    ``short_prompt_lift`` and ``short_prompt_decay`` calibrate short prompts: a prompt of a few
    words ("weather forecast", "send sms") meets its answers' texts and use cases, written as
    sentences, at a lower cosine than a sentence would, and would score its right answers as
    noise. Every endpoint's logit for a prompt of ``words`` words gains
    ``short_prompt_lift * exp(-(words - 1) / short_prompt_decay)``: the same for every endpoint
    of one prompt, so it never changes the order, and nearly nothing past ten words.

    ``lexical_best_place`` (0: off) lifts the endpoint with the highest BM25 score to just above
    the relevance at that place when it ranks below it, so that the words' best match is always
    among the first that many: the dense signal outweighs BM25 in the sum, and where the two
    disagree the lexical favourite (an operation named by the query's own words, "gist", "MFA
    session token") is often the answer. It takes the place, and the score, of the endpoint it
    passes; an endpoint already at that place or above keeps its own.
    """

    short_view: float
    lexical: float
    lexical_half: float
    scale: float
    bias: float
    verified_prior: float = 0.0
    use_case_view: float = 0.0
    lexical_best_place: int = 0
    normalise_query: bool = True
    # The calibration of an endpoint without a use case, whose relevance comes from its texts
    # alone (0: the same as the others').
    texts_scale: float = 0.0
    texts_bias: float = 0.0
    short_prompt_lift: float = 0.0
    short_prompt_decay: float = 1.0

    def relevance(
        self, cosine: np.ndarray, bm25: np.ndarray, verified: np.ndarray | None = None
    ) -> np.ndarray:
        """``verified``: 1.0 for each verified endpoint of a verified API, else 0.0."""
        relevance = cosine
        if self.lexical:
            relevance = relevance + self.lexical * (bm25 / (bm25 + self.lexical_half))
        if self.verified_prior and verified is not None:
            relevance = relevance + self.verified_prior * verified
        if self.lexical_best_place:
            relevance = _lexical_best_lifted(relevance, bm25, self.lexical_best_place)
        return relevance

    def logits(
        self,
        cosine: np.ndarray,
        bm25: np.ndarray,
        verified: np.ndarray | None = None,
        has_use_case: np.ndarray | None = None,
        *,
        words: int | None = None,
    ) -> np.ndarray:
        """The calibrated relevance, by which the answer is ordered. ``has_use_case`` (True for
        each endpoint with a use case; None: every one) picks each endpoint's calibration: a
        relevance made from the texts alone runs lower for as good a match, and calibrated
        alike, an endpoint without a use case would score and rank below an equal one with it.
        ``words``: the prompt's length in words (``prompt_words``); None: no short-prompt lift."""
        relevance = self.relevance(cosine, bm25, verified)
        lift = self.short_prompt_lift_for(words)
        if has_use_case is None or not self.texts_scale or has_use_case.all():
            return self.scale * relevance + (self.bias + lift)
        scale = np.where(has_use_case, self.scale, self.texts_scale)
        bias = np.where(has_use_case, self.bias, self.texts_bias) + lift
        logits = (scale * relevance + bias).astype(relevance.dtype)
        if self.lexical_best_place:  # its place, kept across the two calibrations
            logits = _lexical_best_lifted(logits, bm25, self.lexical_best_place)
        return logits

    def short_prompt_lift_for(self, words: int | None) -> float:
        if not words or not self.short_prompt_lift:
            return 0.0
        return self.short_prompt_lift * math.exp(-(words - 1) / self.short_prompt_decay)


# The weights chosen by `bench/search_quality.py --fit` on the training split, but for the
# verified prior, chosen on every split, and the lexical best's place, the least intrusive of
# the places the training split rates alike (the script prints the sums of both); the use cases'
# weight was chosen on the training split with the others as they were (the texts' calibration
# is the one fitted on it before use cases); see docs/search.md. The calibration (scale, bias)
# and the short-prompt lift are fitted together by `--calibrate` on the `fit` halves of the
# judged prompts (bench/search_terse.yaml, bench/search_sentences.yaml), not on the training
# split, whose needs the model's adapter was trained on. Nothing is chosen or fitted on the
# held-out needs (bench/search_heldout.yaml, bench/search_heldout_fresh.yaml, the `heldout`
# halves of the judged prompts).
RANKING = Ranking(
    short_view=0.5,
    lexical=0.25,
    lexical_half=8.0,
    scale=11.39,
    bias=-8.65,
    verified_prior=0.02,
    lexical_best_place=5,
    use_case_view=0.7,
    texts_scale=9.41,
    texts_bias=-5.90,
    short_prompt_lift=1.38,
    short_prompt_decay=3.90,
)


def _lexical_best_lifted(relevance: np.ndarray, bm25: np.ndarray, place: int) -> np.ndarray:
    if len(relevance) <= place:
        return relevance
    best = int(np.argmax(bm25))
    if bm25[best] <= 0:
        return relevance
    floor = np.partition(relevance, len(relevance) - place)[len(relevance) - place]
    if relevance[best] >= floor:
        return relevance
    lifted = relevance.copy()
    lifted[best] = np.nextafter(floor, np.inf, dtype=relevance.dtype)
    return lifted


def _sigmoid(values: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-values))


# --- Which endpoints make up an answer ------------------------------------------------------------

# An answer is read grouped by API, APIs in the order of their best endpoint. Taken as they come,
# the ten best put a leading API's weaker endpoints into its group at the top, where they push
# the best endpoint of a second API below fifth place (13 of the 659 queries of
# bench/search_queries.yaml). So the first five endpoints of every answer are its five best,
# whatever the limit.
ANSWER_HEAD = 5


def answer_rows(
    order: Iterable[int], api_of: Sequence[int], *, limit: int, head: int = ANSWER_HEAD
) -> list[int]:
    """The rows of an answer of at most ``limit`` endpoints, from rows best first.

    The ``head`` best come first; after them, the best of the others whose place, once the
    answer is grouped, comes after all of the head: an endpoint of an API not in the head, or
    of the head's last API. A weaker endpoint of any other API of the head would join its group
    inside the head and push one of the best out, so it is left out of the answer.
    """
    chosen: list[int] = []
    head_apis: set[int] = set()
    last_api = None
    for row in order:
        api = api_of[row]
        if len(chosen) < head:
            if api not in head_apis:
                head_apis.add(api)
                last_api = api
        elif api in head_apis and api != last_api:
            continue
        chosen.append(row)
        if len(chosen) >= limit:
            break
    return chosen


# --- The in-memory index --------------------------------------------------------------------------


@dataclass
class IndexedApi:
    id: int
    name: str
    slug: str
    base_url: str
    verified: bool


@dataclass
class IndexedEndpoint:
    id: int
    api: IndexedApi
    path: str
    method: str
    description: str  # what its brief is made from (catalog.texts.endpoint_brief_source)
    price: str
    is_payable: bool
    verified: bool


@dataclass
class SearchIndex:
    """Every enabled endpoint of every enabled API, as of catalog version ``version``."""

    version: int
    endpoints: list[IndexedEndpoint]
    api_of: np.ndarray  # each row's API id
    verified: np.ndarray  # each row's 1.0 when the endpoint and its API are verified, else 0.0
    has_use_case: np.ndarray  # each row's True when the endpoint has a use case
    # (len(endpoints), DIMENSIONS) float32: each endpoint's full and short vectors mixed by
    # Ranking.short_view; zero rows have no embedding yet
    vectors: np.ndarray
    lexical: Any  # bm25s.BM25 over the same texts, or None when the catalog is empty
    unembedded: np.ndarray | None = None  # rows without a stored vector, when there are any
    texts_by_hash: dict[str, list[str]] = field(default_factory=dict)
    # each row's stored text hash ("" without a vector), and the weights its vector was mixed
    # with (``_views``): what a rebuild may take from this index instead of reading it again
    text_hashes: list[str] = field(default_factory=list)
    views: tuple[float, float] = (0.0, 0.0)
    built_seconds: float = 0.0

    def signals(self, prompt: str, *, normalise: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """The query's cosine similarity with every endpoint and every endpoint's BM25 score."""
        from catalog.embeddings import query_embed

        query = query_normalise(prompt) if normalise else prompt
        cosine = self.vectors @ query_embed(query)
        bm25 = np.zeros(len(self.endpoints), dtype=np.float32)
        if self.lexical is not None:
            vocabulary = self.lexical.vocab_dict
            tokens = [token for token in lexical_tokens(query) if token in vocabulary]
            if tokens:
                bm25 = self.lexical.get_scores(tokens)
        if self.unembedded is not None and len(self.unembedded) < len(cosine):
            # No vector yet: lend the endpoint the cosine found at its BM25 rank among the
            # embedded ones, so that its words alone place it.
            embedded = np.ones(len(cosine), dtype=bool)
            embedded[self.unembedded] = False
            cosines = np.sort(cosine[embedded])[::-1]
            ascending = np.sort(bm25)
            ranks = len(ascending) - np.searchsorted(ascending, bm25[self.unembedded], "right")
            cosine[self.unembedded] = cosines[np.minimum(ranks, len(cosines) - 1)]
        return cosine, bm25

    def search(
        self, prompt: str, *, limit: int, ranking: Ranking = RANKING
    ) -> list[tuple[IndexedEndpoint, float]]:
        """The endpoints of the answer (see ``answer_rows``) with their calibrated scores, best
        first."""
        if not self.endpoints:
            return []
        query = query_normalise(prompt) if ranking.normalise_query else prompt
        cosine, bm25 = self.signals(query, normalise=False)
        words = prompt_words(query, normalise=False)
        logits = ranking.logits(cosine, bm25, self.verified, self.has_use_case, words=words)
        rows = self.answer(logits, limit=limit)
        scores = _sigmoid(logits[rows].astype(np.float64))
        return [
            (self.endpoints[row], round(float(score), 4))
            for row, score in zip(rows, scores, strict=True)
        ]

    def answer(self, logits: np.ndarray, *, limit: int) -> list[int]:
        """``answer_rows`` for these logits. Sorting a shortlist is enough but for an answer that
        leaves out more endpoints than the shortlist holds beyond ``limit``."""
        count = min(len(logits), max(4 * limit, 100))
        top = np.argpartition(-logits, count - 1)[:count]
        top = top[np.argsort(-logits[top], kind="stable")]
        rows = answer_rows(top.tolist(), self.api_of, limit=limit)
        if len(rows) < limit and count < len(logits):
            order = np.argsort(-logits, kind="stable")
            rows = answer_rows(order.tolist(), self.api_of, limit=limit)
        return rows


def search_index_build(
    *, previous: SearchIndex | None = None, ranking: Ranking = RANKING
) -> SearchIndex:
    """Read the catalog and its stored vectors into a new index.

    Endpoints without a stored vector (their embedding failed or is still being computed) are
    placed by their words alone (see ``SearchIndex.signals``); ``reindex_search`` embeds them.
    A rebuild takes from the previous index the vectors and tokenised texts of every endpoint
    whose stored text is unchanged, and reads only the others' (see ``_rows_from_previous``).
    """
    import bm25s
    from django.db import connection

    from catalog.embeddings import DIMENSIONS, model_name
    from catalog.models import Endpoint, EndpointEmbedding, ProviderApi

    started = time.perf_counter()
    version = catalog_version_current()
    apis = {
        row["id"]: IndexedApi(
            id=row["id"],
            name=row["name"],
            slug=row["slug"],
            base_url=row["base_url"],
            verified=row["verified"],
        )
        for row in ProviderApi.objects.filter(enabled=True).values(
            "id", "name", "slug", "base_url", "verified"
        )
    }
    endpoint_rows = list(
        Endpoint.objects.filter(enabled=True, api__enabled=True)
        .order_by("api_id", "path", "method")
        .values_list(
            "id",
            "api_id",
            "path",
            "method",
            "summary",
            "description",
            "price_kind",
            "price_micros",
            "is_payable",
            "verified",
            "use_cases",
        )
    )
    endpoints: list[IndexedEndpoint] = [
        IndexedEndpoint(
            id=endpoint_id,
            api=apis[api_id],
            path=path,
            method=method,
            description=endpoint_brief_source(summary, description),
            price=prices.price_search_label(kind=price_kind, micros=price_micros),
            is_payable=is_payable,
            verified=verified,
        )
        for (
            endpoint_id,
            api_id,
            path,
            method,
            summary,
            description,
            price_kind,
            price_micros,
            is_payable,
            verified,
            _,
        ) in endpoint_rows
    ]
    use_cases = [row[-1] for row in endpoint_rows]
    row_of = {endpoint.id: row for row, endpoint in enumerate(endpoints)}
    vectors = np.zeros((len(endpoints), DIMENSIONS), dtype=np.float32)
    has_use_case = np.zeros(len(endpoints), dtype=bool)
    tokens: list[list[str] | None] = [None] * len(endpoints)
    text_hashes = [""] * len(endpoints)
    texts_by_hash: dict[str, list[str]] = {}
    stored = EndpointEmbedding.objects.filter(
        model=model_name(), endpoint__enabled=True, endpoint__api__enabled=True
    )
    if previous is not None and previous.views == _views(ranking):
        changed = _rows_from_previous(
            previous, stored, row_of, vectors, has_use_case, tokens, text_hashes, texts_by_hash
        )
        # In batches a query's parameters can hold (SQLite's may be limited to 999).
        batch = min(2000, (connection.features.max_query_params or 2000) - 10)
        to_read = [
            stored.filter(endpoint_id__in=changed[start : start + batch])
            for start in range(0, len(changed), batch)
        ]
    else:
        to_read = [stored]
    known = previous.texts_by_hash if previous is not None else {}
    for rows in to_read:
        # Filled row by row from a streamed query: the stored vectors are never all held twice.
        embedded = rows.values_list(
            "endpoint_id", "text", "text_hash", "vector", "short_vector", "use_case_vector"
        ).iterator(chunk_size=2000)
        for endpoint_id, text, text_hash, vector, short_vector, use_case_vector in embedded:
            row = row_of.get(endpoint_id)
            if row is None:
                continue
            vectors[row] = _mixed_vector(ranking, vector, short_vector, use_case_vector)
            has_use_case[row] = bool(use_case_vector)
            words = texts_by_hash.get(text_hash) or known.get(text_hash)
            if words is None:  # interned: the corpus's 600k tokens are some 20k distinct stems
                words = [sys.intern(word) for word in lexical_tokens(f"{text} {use_cases[row]}")]
            texts_by_hash[text_hash] = tokens[row] = words
            text_hashes[row] = text_hash
    missing = [row for row, words in enumerate(tokens) if words is None]
    if missing:
        _tokens_for_unembedded(endpoints, missing, tokens)
        logger.warning(
            "%d endpoints have no stored embedding and are found by keywords only; "
            "run `manage.py reindex_search`",
            len(missing),
        )
    lexical = None
    if endpoints:
        lexical = bm25s.BM25()
        lexical.index(tokens, show_progress=False)
    index = SearchIndex(
        version=version,
        endpoints=endpoints,
        api_of=np.array([endpoint.api.id for endpoint in endpoints], dtype=np.int64),
        verified=np.array(
            [endpoint.verified and endpoint.api.verified for endpoint in endpoints],
            dtype=np.float32,
        ),
        has_use_case=has_use_case,
        vectors=vectors,
        lexical=lexical,
        unembedded=np.array(missing, dtype=np.int64) if missing else None,
        texts_by_hash=texts_by_hash,
        text_hashes=text_hashes,
        views=_views(ranking),
    )
    index.built_seconds = time.perf_counter() - started
    logger.info(
        "Search index built for catalog version %s: %d endpoints in %.2f s",
        version,
        len(endpoints),
        index.built_seconds,
    )
    return index


def _views(ranking: Ranking) -> tuple[float, float]:
    return (ranking.short_view, ranking.use_case_view)


def _mixed_vector(
    ranking: Ranking, vector: bytes, short_vector: bytes, use_case_vector: bytes
) -> np.ndarray:
    """One endpoint's row of the index: its vectors mixed by the ranking's weights. An endpoint
    without a use case is placed by its two texts alone."""
    texts = (1 - ranking.short_view) * np.frombuffer(vector, dtype="<f4")
    texts += ranking.short_view * np.frombuffer(short_vector, dtype="<f4")
    if not use_case_vector:
        return texts
    use_case = np.frombuffer(use_case_vector, dtype="<f4")
    return (1 - ranking.use_case_view) * texts + ranking.use_case_view * use_case


def _rows_from_previous(
    previous: SearchIndex,
    stored,
    row_of: dict[int, int],
    vectors: np.ndarray,
    has_use_case: np.ndarray,
    tokens: list[list[str] | None],
    text_hashes: list[str],
    texts_by_hash: dict[str, list[str]],
) -> list[int]:
    """Copy from ``previous`` the rows whose stored text is unchanged (the same hash, so the
    same vectors); returns the endpoint ids whose stored rows must be read. After one edit, a
    rebuild reads some 16k hashes instead of 16k texts and vectors (50 MB)."""
    previous_row = {endpoint.id: row for row, endpoint in enumerate(previous.endpoints)}
    changed = []
    for endpoint_id, text_hash in stored.values_list("endpoint_id", "text_hash").iterator(
        chunk_size=5000
    ):
        row = row_of.get(endpoint_id)
        if row is None:
            continue
        old = previous_row.get(endpoint_id)
        if old is None or previous.text_hashes[old] != text_hash:
            changed.append(endpoint_id)
            continue
        vectors[row] = previous.vectors[old]
        has_use_case[row] = previous.has_use_case[old]
        texts_by_hash[text_hash] = tokens[row] = previous.texts_by_hash[text_hash]
        text_hashes[row] = text_hash
    return changed


def _tokens_for_unembedded(
    endpoints: list[IndexedEndpoint], rows: list[int], tokens: list[list[str] | None]
) -> None:
    from catalog.models import Endpoint

    by_id = {
        endpoint.pk: endpoint
        for endpoint in Endpoint.objects.filter(pk__in=[endpoints[row].id for row in rows])
        .select_related("api")
        .only(*Endpoint.SEARCH_TEXT_FIELDS)
    }
    for row in rows:
        endpoint = by_id.get(endpoints[row].id)
        text = ""
        if endpoint is not None:
            text = f"{endpoint_search_text_for(endpoint, endpoint.api)} {endpoint.use_cases}"
        tokens[row] = lexical_tokens(text)


_current: SearchIndex | None = None
_build_lock = threading.Lock()


def search_index_current() -> SearchIndex:
    """This process's index, rebuilt first when the catalog version moved since it was built.

    One thread rebuilds; the others keep answering from the previous index meanwhile (only the
    very first build makes them wait).
    """
    global _current

    index = _current
    if index is not None and index.version == catalog_version_current():
        return index
    if index is None:
        with _build_lock:
            if _current is None:
                _current = search_index_build()
            return _current
    if _build_lock.acquire(blocking=False):
        try:
            if _current.version != catalog_version_current():
                _current = search_index_build(previous=_current)
        finally:
            _build_lock.release()
    return _current


def search_index_reset() -> None:
    """Forget this process's index (tests; the next search builds a new one)."""
    global _current
    with _build_lock:
        _current = None


def search_warm_up() -> None:
    """Load the model, export its query encoder if no earlier start did, and build the index
    before the first request (gateway.wsgi calls it).

    A database that is not reachable or not migrated yet only postpones the index to the first
    search; the model is loaded regardless.
    """
    from django.db import DatabaseError, connections

    from catalog.embeddings import embedding_model, query_encoder_prepare

    embedding_model()
    query_encoder_prepare()  # each worker opens the encoder at its first search
    try:
        search_index_current()
    except DatabaseError:
        logger.warning("Search index not built at start-up; the first search builds it")
    finally:
        # gunicorn --preload forks after this: workers must not share the master's connection.
        connections.close_all()
