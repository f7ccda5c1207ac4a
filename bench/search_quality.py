"""Search quality on the whole corpus and the seed catalog: hit@1, hit@5 and MRR of each ranking
variant, on each split of bench/search_queries.yaml: train (what the fusion is chosen and fitted
on), validation and test, the blind `named` and `needs` splits over the corpus, and the blind `seed`
split over the seed catalog (the model's adapter, bench/search_tune.py, is trained on the train,
`named` and `needs` splits: their figures are the model's training figures); and on the held-out
needs of bench/search_heldout.yaml (split `heldout`), bench/search_heldout_fresh.yaml (split
`fresh`, written later for a new draw of endpoints) and bench/search_heldout_paraphrased.yaml (split
`paraphrased`, 600 needs in their style for a later draw), which nothing is chosen or fitted on and
no choice below reads. Then what the score means: how many right answers score at least 0.5, and how
many needs nothing answers (the held-out file's nonsense and out-of-catalog needs) keep their best
score below 0.3; and the same for the judged prompts (JUDGED: the terse prompts of
bench/search_terse.yaml, one to three words, and the sentences of bench/search_sentences.yaml, each
with its first ten endpoints judged one by one), on the half the score's calibration is fitted on
and the half it is not (`--calibrate` fits it again). Last, the needs a newcomer brings to the seed
catalog (bench/search_newcomer_needs.yaml), read among the seed catalog's endpoints: how many rank
every right endpoint above every wrong one, as the seed needs test asks; and that test's own needs
(bench/search_seed_needs.yaml), ranked as the test ranks them, over the seed catalog alone, each
with its margin: its last right endpoint's logit less its first wrong one's, positive when the need
passes, so that a candidate ranking shows which needs it holds by a hair before the test is run.

Runs on BENCH_DATABASE_URL when set (an existing PostgreSQL database: the corpus and the seed
catalog are imported into it unless it already holds them, and it is left in place), otherwise on
a throwaway database created on postgres@127.0.0.1 and dropped at the end. Endpoints are embedded
by the importer, as in production; a rerun on the same database embeds nothing. CORPUS_DIR
overrides the corpus location. Prints figures; asserts nothing.

    .venv/bin/python bench/search_quality.py          # every variant, every split
    .venv/bin/python bench/search_quality.py --fit    # also refit the fusion on the train split
    .venv/bin/python bench/search_quality.py --calibrate  # also refit the score's calibration
    .venv/bin/python bench/search_quality.py --views  # also embed and compare per-field views
    .venv/bin/python bench/search_quality.py --naive  # also the issue's reference baseline
    .venv/bin/python bench/search_quality.py --queries FILE  # also another set, as split "given"

``--queries`` reads a query set of the same form as bench/search_queries.yaml (a list of
``{q: <query>, expect: ["<api slug> <METHOD> <catalog path>", ...]}``) and reports it as a fourth
split, "given": everything chosen on the training split stays as it is, so a set kept apart from
this one (a held-back set) is measured exactly as the served ranking answers it.

``--naive`` embeds each endpoint's text as it comes ("<METHOD> <path> <summary> <description>",
nothing cleaned, dropped or added) and ranks by its cosine alone: the plain dense baseline the
search issue quotes for its held-back queries (hit@5 0.91, MRR 0.71 there), so the figures of
this set can be read against that set's. The issue does not say whether its naive text names the
API, so a second reference puts the API's name in front of the same text ("naive text with the
API's name"); a third is plain BM25 over the naive text, the issue's "BM25 alone" (0.61, 0.49).
With them it estimates the served figures on a set as hard as the held-back one, by weighting the
queries never tuned on so that the references score the issue's figures there.

The "framed" variants ask each query inside a sentence ("Which endpoint lets me <query>?"), with
and without the query normalisation that drops such framing. The variants marked "+" add one signal
to the served relevance, with its weight chosen on the training split (shown in brackets): the query
naming an API (from the catalog's own API names and slugs), the query's first word as a hint of the
operation's kind (learnt from the catalog's summaries and operation ids), and, with --views, the
cosine with one more view of each endpoint (its summary alone, its description alone, its operation
and path words, its API's name and description, its method and path said in plain words: "delete
or remove a comment of a media"), embedded for the run; SEARCH_VIEWS names the views to embed.
"Pseudo-relevance feedback"
moves the query vector towards the mean vector of its k best endpoints and ranks again (Rocchio),
with k and the step chosen on the training split ("+ query feedback [k, step]").

A query is a hit at k when any of its expected endpoints is among the first k endpoints of the
answer at limit 10, read in the order the API serves them (grouped by API, APIs by their best
endpoint); MRR uses the position of the first expected endpoint in that answer (0 when absent).
Grouping can push the best endpoint of a second API below the leader's sixth: the row "fusion
(served), limit 5" reads the answer a client gets when it asks for five, which holds the five best
endpoints whatever their APIs.
"""

import itertools
import os
import re
import time
from pathlib import Path

import harness

LIMIT = 10
# Prompts whose served first ten were judged one by one: what the score's calibration is fitted on
# (each file's `fit` half) and measured by (its `heldout` half).
JUDGED = {
    "terse": harness.ROOT / "bench" / "search_terse.yaml",
    "sentences": harness.ROOT / "bench" / "search_sentences.yaml",
}
# Needs a newcomer brings to the seed catalog, each with every seed endpoint that answers it.
NEWCOMER_NEEDS = harness.ROOT / "bench" / "search_newcomer_needs.yaml"
# The seed needs test's needs (tests/catalog/test_search_seed_needs.py), in the same form.
SEED_NEEDS = harness.ROOT / "bench" / "search_seed_needs.yaml"
# Splits no choice reads: the held-out needs, and a set given on the command line.
NEVER_READ = ("heldout", "fresh", "paraphrased", "given")
FRAMINGS = (
    "I need an API that can {}",
    "Which endpoint lets me {}?",
    "How can I {}?",
    "Can you find me an API to {}",
)


def main() -> None:
    arguments = _arguments()
    with harness.django_database(f"gw_search_quality_{os.getpid()}"):
        _run(
            fit=arguments.fit,
            calibrate=arguments.calibrate,
            views=arguments.views,
            naive=arguments.naive,
            given=arguments.queries,
        )


def _arguments():
    parser = harness.argument_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--fit", action="store_true", help="refit the fusion on the train split")
    parser.add_argument(
        "--calibrate",
        action="store_true",
        help="refit the score's calibration on the judged prompts",
    )
    parser.add_argument("--views", action="store_true", help="compare per-field views")
    parser.add_argument("--naive", action="store_true", help="the issue's reference baseline")
    parser.add_argument("--queries", type=Path, help='another query set, reported as "given"')
    return parser.parse_args()


def _run(
    *, fit: bool, calibrate: bool, views: bool, naive: bool, given: Path | None = None
) -> None:
    import numpy as np
    import yaml

    from catalog.embeddings import query_embed, vectors_from_bytes
    from catalog.models import EndpointEmbedding
    from catalog.search import (
        RANKING,
        Ranking,
        lexical_tokens,
        prompt_words,
        query_normalise,
        search_index_build,
    )

    started = time.perf_counter()
    embedded = harness.corpus_catalog_load()
    print(f"catalog ready in {time.perf_counter() - started:.0f} s ({embedded} endpoints embedded)")
    index = search_index_build()
    print(f"index: {len(index.endpoints)} endpoints, built in {index.built_seconds:.2f} s")

    rows = {key: row for row, key in enumerate(_endpoint_keys(index))}
    queries = harness.search_queries() + harness.heldout_needs()
    for query in queries:
        query["q"] = str(query["q"])  # a need such as "42" reads as a number
    if given is not None:
        queries += [{**query, "split": "given"} for query in yaml.safe_load(given.read_text())]
    for query in queries:
        missing = [key for key in query["expect"] if key not in rows]
        if missing:
            raise SystemExit(f"{query['q']!r}: not in the catalog: {missing}")
        query["rows"] = [rows[key] for key in query["expect"]]
    # Queries without an expected endpoint only teach and check the calibration.
    names = ("train", "validation", "test", "named", "needs", "seed")
    names += ("heldout", "fresh", "paraphrased")
    names += ("given",) if given is not None else ()
    calibration = {name: [q for q in queries if q["split"] == name] for name in names}
    splits = {name: [q for q in items if q["rows"]] for name, items in calibration.items()}
    answered = sum(len(items) for items in splits.values())
    counts = ", ".join(f"{len(items)} {name}" for name, items in splits.items())
    print(f"queries: {len(queries)} ({counts}, {len(queries) - answered} without an answer)")

    stored = {
        endpoint_id: (bytes(vector), bytes(short_vector), text, bytes(use_case_vector))
        for endpoint_id, vector, short_vector, text, use_case_vector in (
            EndpointEmbedding.objects.values_list(
                "endpoint_id", "vector", "short_vector", "text", "use_case_vector"
            )
        )
    }
    row_tokens = [set(lexical_tokens(stored[e.id][2])) for e in index.endpoints]
    naming = _api_naming(index, row_tokens)
    kinds = _operation_kinds(index)
    extra_views = _views(index) if views else {}
    naive_texts = _naive_texts(index) if naive else None
    naive_vectors = _naive_vectors(index, naive_texts) if naive else None
    naive_bm25 = _naive_bm25(naive_texts) if naive else None
    full = vectors_from_bytes([stored[e.id][0] for e in index.endpoints])
    short = vectors_from_bytes([stored[e.id][1] for e in index.endpoints])
    # An endpoint without a use case is placed by its two texts alone, as served.
    use_case = np.array(
        vectors_from_bytes([stored[e.id][3] or stored[e.id][1] for e in index.endpoints])
    )
    without = [row for row, e in enumerate(index.endpoints) if not stored[e.id][3]]
    use_case[without] = (1 - RANKING.short_view) * full[without]
    use_case[without] += RANKING.short_view * short[without]
    signals = {}
    for number, query in enumerate(queries):
        cosine, bm25 = index.signals(query["q"], normalise=True)
        raw_cosine, raw_bm25 = index.signals(query["q"], normalise=False)
        vector = query_embed(query_normalise(query["q"]))
        # The same need framed as a question to a search box.
        framed = FRAMINGS[number % len(FRAMINGS)].format(query["q"])
        signals[query["q"]] = {
            "cosine": cosine,
            "bm25": bm25,
            "raw_cosine": raw_cosine,
            "raw_bm25": raw_bm25,
            "full": full @ vector,
            "short": short @ vector,
            "use_case": use_case @ vector,
            "framed": index.signals(framed, normalise=True),
            "framed_raw": index.signals(framed, normalise=False),
            "words": prompt_words(query["q"]),
            "names_api": naming(query_normalise(query["q"])),
            "kind": kinds(query_normalise(query["q"])),
            "vector": vector,
            **{name: matrix @ vector for name, matrix in extra_views.items()},
        }
        if naive_vectors is not None:
            # The reference embeds the query as typed, as a plain dense search would.
            as_typed_vector = query_embed(query["q"])
            signals[query["q"]]["naive"] = naive_vectors[0] @ as_typed_vector
            signals[query["q"]]["naive_named"] = naive_vectors[1] @ as_typed_vector
            signals[query["q"]]["naive_bm25"] = naive_bm25(query["q"])

    def rrf(s):
        return _rrf(s["cosine"], s["bm25"])

    as_typed = Ranking(**{**RANKING.__dict__, "normalise_query": False})
    variants = [
        ("dense, short text", lambda s: s["short"]),
        ("dense, full text", lambda s: s["full"]),
        ("dense, both texts", lambda s: s["cosine"]),
        ("BM25, full text", lambda s: s["bm25"]),
        ("reciprocal rank fusion", rrf),
        (
            "fusion, query as typed",
            lambda s: as_typed.logits(
                s["raw_cosine"], s["raw_bm25"], index.verified, index.has_use_case
            ),
        ),
        (
            "fusion, framed, as typed",
            lambda s: as_typed.logits(*s["framed_raw"], index.verified, index.has_use_case),
        ),
        (
            "fusion, framed, normalised",
            lambda s: RANKING.logits(*s["framed"], index.verified, index.has_use_case),
        ),
    ]
    if naive_vectors is not None:
        variants[:0] = [
            ("dense, naive text (reference)", lambda s: s["naive"]),
            ("dense, naive text with API name", lambda s: s["naive_named"]),
            ("BM25, naive text (reference)", lambda s: s["naive_bm25"]),
        ]

    def served(s):
        return RANKING.relevance(s["cosine"], s["bm25"], index.verified)

    # One more signal on top of the served relevance, its weight chosen on the training split.
    for label, key, weights in (
        ("+ query names the API", "names_api", (0.02, 0.05, 0.1, 0.2)),
        ("+ kind of operation", "kind", (0.005, 0.01, 0.02, 0.04)),
        *((f"+ {name} view", name, (0.15, 0.3, 0.5)) for name in extra_views),
    ):

        def on_train(weight, key=key):
            ranks = [
                _served_rank(
                    index, served(signals[q["q"]]) + weight * signals[q["q"]][key], q["rows"]
                )
                for q in splits["train"]
            ]
            return _score(ranks)

        chosen = max(weights, key=on_train)
        variants.append(
            (f"{label} [{chosen}]", lambda s, key=key, w=chosen: served(s) + w * s[key])
        )

    def feedback(s, k, step):
        relevance = served(s)
        best = np.argpartition(-relevance, k)[:k]
        moved = s["vector"] + step * index.vectors[best].mean(axis=0)
        moved /= np.linalg.norm(moved)
        return RANKING.relevance(index.vectors @ moved, s["bm25"], index.verified)

    def feedback_on_train(choice):
        ranks = [
            _served_rank(index, feedback(signals[q["q"]], *choice), q["rows"])
            for q in splits["train"]
        ]
        return _score(ranks)

    k, step = max(itertools.product((2, 3, 5, 10), (0.1, 0.2, 0.35, 0.5)), key=feedback_on_train)
    variants.append((f"+ query feedback [{k}, {step}]", lambda s: feedback(s, k, step)))
    variants.append(
        (
            "fusion (served)",
            lambda s: RANKING.logits(s["cosine"], s["bm25"], index.verified, index.has_use_case),
        )
    )
    # The answer's endpoints picked with at most 3 of one API, so that a second API shows sooner;
    # the ten best as they come, without the five best kept ahead (as served before); and the
    # served ranking read in an answer asked for 5 (its five best endpoints, grouped).
    answers = {
        "fusion, 3 per API at most": {"per_api": 3},
        "fusion, ten best as they come": {"head": LIMIT},
        "fusion (served), limit 5": {"limit": 5},
    }
    variants.insert(-1, ("fusion, 3 per API at most", served))
    variants.insert(-1, ("fusion, ten best as they come", served))
    variants.append(("fusion (served), limit 5", served))
    print()
    print(f"{'variant':<32} {'split':<11} {'hit@1':>6} {'hit@5':>6} {'MRR':>6}")
    for name, scorer in variants:
        answer = answers.get(name, {})
        for split, items in splits.items():
            ranks = [
                _served_rank(index, scorer(signals[q["q"]]), q["rows"], **answer) for q in items
            ]
            print(f"{name:<32} {split:<11} {_metrics(ranks)}")

    print()
    print("training queries the served ranking misses at 5:")
    for query in splits["train"]:
        s = signals[query["q"]]
        rank = _served_rank(
            index,
            RANKING.logits(s["cosine"], s["bm25"], index.verified, index.has_use_case),
            query["rows"],
        )
        if rank > 5:
            print(f"  {'>' + str(LIMIT) if rank > LIMIT else rank:>4}  {query['q']}")
    _served_alternatives(index, splits, signals, "verified_prior", (0.0, 0.01, 0.02, 0.03, 0.05))
    _served_alternatives(index, splits, signals, "lexical_best_place", (0, 2, 3, 4, 5, 6, 10))
    if naive_vectors is not None:
        _held_back_estimate(index, splits, signals)
    _score_meaning(index, splits, calibration, signals)
    _judged_prompts(index, splits, calibration, signals, calibrate=calibrate)
    seed = _seed_catalog_index(index)
    _newcomer_needs(seed)
    _seed_needs_margins(seed)
    if fit:
        _fit(index, splits["train"], calibration["train"], signals)


def _served_rank(
    index,
    scores,
    relevant: list[int],
    *,
    limit: int = LIMIT,
    per_api: int | None = None,
    head: int | None = None,
) -> int:
    """1-based position of the first expected endpoint in the answer at ``limit`` as served
    (catalog.search.answer_rows, grouped by API, APIs by their best endpoint); LIMIT + 1 when
    absent. ``head`` changes how many best endpoints are kept ahead of the rest (LIMIT: the ten
    best as they come); ``per_api`` instead keeps at most that many endpoints of one API in the
    answer (the next best take their places)."""
    import numpy as np

    from catalog.search import ANSWER_HEAD, answer_rows

    shortlist = np.argpartition(-scores, LIMIT * LIMIT)[: LIMIT * LIMIT]
    shortlist = shortlist[np.argsort(-scores[shortlist], kind="stable")].tolist()
    if per_api is None:
        rows = answer_rows(shortlist, index.api_of, limit=limit, head=head or ANSWER_HEAD)
    else:
        rows, kept = [], {}
        for row in shortlist:
            api = index.api_of[row]
            if kept.get(api, 0) < per_api:
                rows.append(row)
                kept[api] = kept.get(api, 0) + 1
            if len(rows) == limit:
                break
    groups: dict[int, list[int]] = {}
    for row in rows:
        groups.setdefault(index.api_of[row], []).append(row)
    order = [row for rows in groups.values() for row in rows]
    wanted = set(relevant)
    for position, row in enumerate(order, start=1):
        if row in wanted:
            return position
    return LIMIT + 1


def _score(ranks: list[int]) -> tuple:
    """What the training split chooses by: MRR, then hit@5, then hit@1."""
    return (
        round(sum(1 / rank for rank in ranks if rank <= LIMIT), 6),
        sum(rank <= 5 for rank in ranks),
        sum(rank <= 1 for rank in ranks),
    )


def _api_naming(index, row_tokens):
    """A scorer: for each endpoint, how surely the query names its API. A query word counts when
    it is one of the API's name or slug words ("s3", "trello", "gitlab"); its weight is the share
    of the catalog's endpoints using that word that belong to the API, so a product name weighs
    about 1 and a word that many APIs use ("email", "google", "cloud") little."""
    from collections import Counter

    import numpy as np

    from catalog.search import lexical_tokens

    api_rows: dict[int, list[int]] = {}
    for row, endpoint in enumerate(index.endpoints):
        api_rows.setdefault(endpoint.api.id, []).append(row)
    used = Counter(token for tokens in row_tokens for token in tokens)
    names = {}
    for api_id, rows in api_rows.items():
        api = index.endpoints[rows[0]].api
        words = set(lexical_tokens(f"{api.name} {api.slug}"))
        inside = Counter(token for row in rows for token in row_tokens[row] & words)
        names[api_id] = {token: inside[token] / used[token] for token in words if used[token]}
    api_of_row = np.array([endpoint.api.id for endpoint in index.endpoints])

    def score(query: str):
        tokens = set(lexical_tokens(query))
        per_api = {
            api_id: max((weights[token] for token in tokens & weights.keys()), default=0.0)
            for api_id, weights in names.items()
        }
        return np.array([per_api[api_id] for api_id in api_of_row])

    return score


def _operation_kinds(index):
    """A scorer: log-odds of each endpoint's kind of operation given the query's first word. An
    operation's kind is its operation id's first word when the catalog uses that word often
    ("create", "list", "delete", "describe"), otherwise its method; the first word of its
    summary says how people describe that kind ("add", "remove", "retrieves")."""
    import math
    from collections import Counter, defaultdict

    import numpy as np

    from catalog.models import Endpoint
    from catalog.search import clean_text, lexical_tokens
    from catalog.texts import split_identifier

    rows = {endpoint.id: row for row, endpoint in enumerate(index.endpoints)}
    kinds = [""] * len(index.endpoints)
    first_words = [""] * len(index.endpoints)
    for endpoint_id, operation_id, method, summary, description in Endpoint.objects.filter(
        pk__in=rows
    ).values_list("id", "operation_id", "method", "summary", "description"):
        words = split_identifier(operation_id)
        kinds[rows[endpoint_id]] = (words[0] if words else "", method)
        said = lexical_tokens((clean_text(summary) or clean_text(description)).split(".")[0])
        first_words[rows[endpoint_id]] = said[0] if said else ""
    common = Counter(word for word, _ in kinds)
    kinds = [word if word and common[word] >= 30 else method for word, method in kinds]
    prior = Counter(kinds)
    seen: dict[str, Counter] = defaultdict(Counter)
    for word, kind in zip(first_words, kinds, strict=True):
        if word:
            seen[word][kind] += 1
    total = len(kinds)

    def score(query: str):
        words = lexical_tokens(query)[:1]
        counts = seen.get(words[0]) if words else None
        if not counts or sum(counts.values()) < 20:
            return np.zeros(total)
        n = sum(counts.values())
        odds = {
            kind: math.log((counts[kind] + 5 * count / total) / (n + 5)) - math.log(count / total)
            for kind, count in prior.items()
        }
        return np.array([odds[kind] for kind in kinds])

    return score


def _views(index) -> dict:
    """Each endpoint embedded once more per view, for the run only (a few minutes)."""
    import numpy as np

    from catalog.embeddings import texts_embed
    from catalog.models import Endpoint
    from catalog.search import _first_chars, _words, clean_text

    rows = {endpoint.id: row for row, endpoint in enumerate(index.endpoints)}
    texts: dict[str, list[str]] = {
        name: [""] * len(rows) for name in ("summary", "description", "operation", "API", "effect")
    }
    for endpoint in Endpoint.objects.filter(pk__in=rows).select_related("api"):
        row = rows[endpoint.pk]
        operation = _words(endpoint.operation_id)
        summary = clean_text(endpoint.summary)
        if _words(summary) == operation:
            summary = ""
        description = _first_chars(clean_text(endpoint.description), 300)
        texts["summary"][row] = summary or _first_chars(description, 160) or operation
        texts["description"][row] = description or texts["summary"][row]
        texts["operation"][row] = (
            f"{operation}. {endpoint.method} {_words(endpoint.path.replace('#', ' '))}"
        )
        texts["effect"][row] = _effect_text(endpoint.method, endpoint.path, operation)
        texts["API"][row] = (
            f"{clean_text(endpoint.api.name)}. "
            f"{_first_chars(clean_text(endpoint.api.description), 300)}"
        )
    views = {}
    for name, items in texts.items():
        if name not in VIEWS:
            continue
        unique = list(dict.fromkeys(items))
        vectors = dict(zip(unique, texts_embed(unique, batch_size=64), strict=True))
        views[name] = np.stack([vectors[text] for text in items])
        print(f"{name} view embedded ({len(unique)} texts)")
    return views


VIEWS = os.environ.get("SEARCH_VIEWS", "summary,description,operation,API,effect").split(",")
_VERSION_SEGMENT = re.compile(r"^v\d+(\.\d+)*$|^api$|^rest$", re.IGNORECASE)


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def _effect_text(method: str, path: str, operation: str) -> str:
    """What the operation does, in plain words from its method and path: "delete or remove
    a comment of a media" for DELETE /media/{media-id}/comments/{comment-id}. Paths that name
    no resource (RPC-style "/#GetPipelineExecution") fall back to the operation's words."""
    from catalog.texts import split_identifier

    if "#" in path:
        return operation
    segments = [segment for segment in path.split("/") if segment]
    named = [
        (position, " ".join(split_identifier(segment)))
        for position, segment in enumerate(segments)
        if not segment.startswith("{") and not _VERSION_SEGMENT.match(segment)
    ]
    if not named:
        return operation
    last_position, resource = named[-1]
    one_item = segments[-1].startswith("{") and last_position == len(segments) - 2
    parent = _singular(named[-2][1]) if len(named) > 1 else ""
    thing = _singular(resource) if one_item else resource
    of = f" of a {parent}" if parent else ""
    method = method.upper()
    if method == "GET":
        phrase = f"get or view one {thing}" if one_item else f"list or view all {thing}"
    elif method == "POST":
        phrase = f"create or add a new {_singular(thing)}" if not one_item else f"act on a {thing}"
    elif method in ("PUT", "PATCH"):
        phrase = f"update or change a {_singular(thing)}"
    elif method == "DELETE":
        phrase = f"delete or remove a {_singular(thing)}"
    else:
        phrase = f"{method.lower()} {thing}"
    return f"{phrase}{of}"


def _naive_texts(index) -> list[str]:
    """Each endpoint's text as it comes: "<METHOD> <path> <summary> <description>"."""
    from catalog.models import Endpoint

    rows = {endpoint.id: row for row, endpoint in enumerate(index.endpoints)}
    texts = [""] * len(rows)
    for endpoint in Endpoint.objects.filter(pk__in=rows):
        texts[rows[endpoint.pk]] = (
            f"{endpoint.method} {endpoint.path} {endpoint.summary} {endpoint.description}"
        )
    return texts


def _naive_vectors(index, texts: list[str]):
    """The naive texts, without and with their API's name in front, embedded for the run only
    (several minutes)."""
    from catalog.embeddings import texts_embed

    named = [f"{index.endpoints[row].api.name} {text}" for row, text in enumerate(texts)]
    vectors = texts_embed(texts, batch_size=64), texts_embed(named, batch_size=64)
    print(f"naive texts embedded ({len(texts)} texts, twice)")
    return vectors


def _naive_bm25(texts: list[str]):
    """Plain BM25 over the naive texts (bm25s's own tokens, English stopwords dropped): the
    issue's "BM25 alone" reference. Returns a scorer of a query as typed."""
    import bm25s
    import numpy as np

    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)

    def scores(query: str):
        tokens = bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)
        if not tokens[0]:  # "hello", "????": nothing but stopwords and punctuation
            return np.zeros(len(texts))
        return retriever.get_scores(tokens[0])

    return scores


def _metrics(ranks: list[int]) -> str:
    hit1, hit5, mrr = _rank_figures(ranks).mean(axis=0)
    return f"{hit1:>6.3f} {hit5:>6.3f} {mrr:>6.3f}"


def _rrf(*score_arrays, k: int = 60):
    import numpy as np

    total = np.zeros_like(score_arrays[0], dtype=np.float64)
    for scores in score_arrays:
        order = np.argsort(-scores, kind="stable")
        ranks = np.empty(len(scores), dtype=np.float64)
        ranks[order] = np.arange(1, len(scores) + 1)
        total += 1.0 / (k + ranks)
    return total


def _served_alternatives(index, splits, signals, field: str, values) -> None:
    """The served ranking with other values of one of its fields: queries answered in the first
    five and reciprocal ranks summed, on the training split, on the others, and on all."""
    import dataclasses

    from catalog.search import RANKING

    print()
    print(f"{field} (hit@5 and MRR summed: train | every other split | all):")
    for value in values:
        ranking = dataclasses.replace(RANKING, **{field: value})
        ranks = {
            name: [
                _served_rank(
                    index,
                    ranking.relevance(
                        signals[q["q"]]["cosine"], signals[q["q"]]["bm25"], index.verified
                    ),
                    q["rows"],
                )
                for q in items
            ]
            for name, items in splits.items()
            if name not in NEVER_READ
        }
        others = [rank for name, items in ranks.items() if name != "train" for rank in items]
        every = ranks["train"] + others
        served = " (served)" if value == getattr(RANKING, field) else ""
        print(f"  {value:<5} {_sums(ranks['train'])} | {_sums(others)} | {_sums(every)}{served}")


# The figures for its held-back set: hit@5 and MRR of the plain dense ranking over the
# naive text, and of BM25 alone (taken to be over the same text).
HELD_BACK_REFERENCE = {"naive": (0.91, 0.71), "naive_bm25": (0.61, 0.49)}
BOOTSTRAP_DRAWS = 500


def _held_back_estimate(index, splits, signals) -> None:
    """The served figures on a set as hard as the held-back set, estimated from the splits
    never tuned on. Each query is weighted (exponential tilting: of the weights under which the
    references score the issue's figures, those closest to even in relative entropy), first to
    match the plain dense reference alone, then both references. The estimate holds as far as
    the served ranking fares alike on two queries the references rank alike. ``effective`` is
    the number of evenly weighted queries that carry as much information; the interval is the
    5th to 95th percentile over bootstrap draws of the queries, each tilted afresh."""
    import numpy as np

    from catalog.search import RANKING

    queries = [
        q for name, items in splits.items() if name not in ("train", *NEVER_READ) for q in items
    ]
    references = {name: [] for name in HELD_BACK_REFERENCE}
    served = []
    for query in queries:
        s = signals[query["q"]]
        for name, ranks in references.items():
            ranks.append(_flat_rank(s[name], query["rows"]))
        relevance = RANKING.relevance(s["cosine"], s["bm25"], index.verified)
        served.append(_served_rank(index, relevance, query["rows"]))
    served = _rank_figures(served)

    print()
    print(f"served on a set as hard as the held-back set (estimate, {len(queries)} queries")
    print("never tuned on, weighted so that the references score the issue's figures):")
    print(f"  {'matched':<22} {'effective':>9} {'hit@1':>6} {'hit@5':>14} {'MRR':>14}")
    random = np.random.default_rng(0)
    for matched in (("naive",), ("naive", "naive_bm25")):
        features = np.hstack([_rank_figures(references[name])[:, 1:] for name in matched])
        target = np.concatenate([HELD_BACK_REFERENCE[name] for name in matched])
        weights = _tilted_weights(features, target)
        effective = 1 / (weights**2).sum()
        hit1, hit5, mrr = weights @ served
        draws = []
        for _ in range(BOOTSTRAP_DRAWS):
            sample = random.integers(0, len(queries), len(queries))
            draws.append(_tilted_weights(features[sample], target) @ served[sample])
        low, high = np.percentile(draws, [5, 95], axis=0)
        label = " and ".join(matched)
        print(
            f"  {label:<22} {effective:>9.0f} {hit1:>6.3f} "
            f"{hit5:.3f} ({low[1]:.3f}-{high[1]:.3f}) {mrr:.3f} ({low[2]:.3f}-{high[2]:.3f})"
        )


def _rank_figures(ranks: list[int]):
    """Per query: hit at 1, hit at 5 and reciprocal rank (0 beyond LIMIT)."""
    import numpy as np

    ranks = np.asarray(ranks)
    reciprocal = np.where(ranks <= LIMIT, 1.0 / ranks, 0.0)
    return np.stack([ranks <= 1, ranks <= 5, reciprocal], axis=1).astype(float)


def _tilted_weights(features, target, iterations: int = 100):
    """Weights w_i proportional to exp(lambda . f_i) whose weighted mean of the features is the
    target: lambda minimises the convex dual log sum exp(lambda . (f_i - target)), found by
    Newton's method with backtracking."""
    import numpy as np

    centred = features - target

    def dual(multipliers):
        exponent = centred @ multipliers
        top = exponent.max()
        return top + np.log(np.exp(exponent - top).sum()), np.exp(exponent - top)

    multipliers = np.zeros(features.shape[1])
    value, weights = dual(multipliers)
    for _ in range(iterations):
        weights = weights / weights.sum()
        gradient = weights @ centred
        if np.abs(gradient).max() < 1e-9:
            break
        spread = centred - gradient
        hessian = (spread * weights[:, None]).T @ spread + 1e-9 * np.eye(len(multipliers))
        direction = np.linalg.solve(hessian, gradient)
        for length in 0.5 ** np.arange(20):
            candidate = multipliers - length * direction
            candidate_value, candidate_weights = dual(candidate)
            if candidate_value <= value:
                break
        else:
            break  # no step lowers the dual any more: as near to the target as it gets
        multipliers, value, weights = candidate, candidate_value, candidate_weights
    return weights / weights.sum()


def _flat_rank(scores, relevant: list[int]) -> int:
    """1-based position of the first expected endpoint in a plain ranked list; LIMIT + 1 when
    it is not among the first LIMIT."""
    import numpy as np

    top = np.argpartition(-scores, LIMIT)[:LIMIT]
    top = top[np.argsort(-scores[top], kind="stable")]
    wanted = set(relevant)
    for position, row in enumerate(top.tolist(), start=1):
        if row in wanted:
            return position
    return LIMIT + 1


def _sums(ranks: list[int]) -> str:
    """Queries answered in the first five, and the reciprocal ranks summed."""
    _, hit5, mrr = _rank_figures(ranks).sum(axis=0)
    return f"{hit5:>4.0f} {mrr:8.1f}"


def _answers_the_need(index, query, relevance):
    """A need's endpoints labelled for the calibration, from its best ``LIMIT`` by relevance:
    every expected endpoint (1, wherever it ranks) and the first ten's endpoints of other APIs
    (0). The expected API's other endpoints are left out: the set names the one or few of an
    API's endpoints its need was written for, and a sibling is often half an answer."""
    import numpy as np

    top = np.argpartition(-relevance, LIMIT)[:LIMIT]
    apis = {index.api_of[row] for row in query["rows"]}
    wrong = [row for row in top if row not in query["rows"] and index.api_of[row] not in apis]
    return list(query["rows"]), wrong


def _score_meaning(index, splits, calibration, signals, *, ranking=None) -> None:
    """What the served score says: how often an endpoint with a given score answers its need
    (every split but train and the held-out ones), how many needs have a right answer scoring at
    least 0.5, and how many needs nothing answers keep their best score below 0.3."""
    import numpy as np

    from catalog.search import RANKING

    ranking = ranking or RANKING

    def scores(query):
        s = signals[query["q"]]
        logits = ranking.logits(
            s["cosine"], s["bm25"], index.verified, index.has_use_case, words=s["words"]
        )
        return 1 / (1 + np.exp(-logits))

    edges = [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0001]
    hits = np.zeros(len(edges) - 1)
    totals = np.zeros(len(edges) - 1)
    for name in ("validation", "test", "named", "needs", "seed"):
        for query in splits[name]:
            score = scores(query)
            right, wrong = _answers_the_need(index, query, score)
            for rows, label in ((right, 1), (wrong, 0)):
                for bin_ in np.digitize(score[rows], edges) - 1:
                    totals[bin_] += 1
                    hits[bin_] += label
    print()
    print("how often an endpoint with a given score answers its need (validation, test, named,")
    print("needs, seed: every expected endpoint, and the first ten's endpoints of other APIs):")
    for low, high, hit, total in zip(edges[:-1], edges[1:], hits, totals, strict=True):
        share = f"{hit / total:.2f}" if total else "  - "
        print(f"  score {low:.1f}-{min(high, 1):.1f}: {int(total):>4} endpoints, {share} answer it")
    print()
    print("needs whose best right endpoint scores >= 0.5 (median of that score):")
    for name, items in splits.items():
        best = np.array([scores(query)[query["rows"]].max() for query in items])
        if len(best):
            print(f"  {name:<11} {np.mean(best >= 0.5):.3f} of {len(best)} ({np.median(best):.2f})")
    print("needs nothing answers whose best score stays < 0.3 (their largest best score):")
    for name, items in calibration.items():
        best = np.array([scores(query).max() for query in items if not query["rows"]])
        if len(best):
            print(f"  {name:<11} {np.mean(best < 0.3):.3f} of {len(best)} ({best.max():.2f})")


def _endpoint_keys(index) -> list[str]:
    """Each indexed endpoint as the query files name it: "<api slug> <METHOD> <path>"."""
    return [f"{e.api.slug} {e.method} {e.path}" for e in index.endpoints]


def _newcomer_needs(seed) -> None:
    """The newcomer needs over the seed catalog alone (``seed``, a ``_seed_catalog_index``), as
    the served ranking orders them (endpoints `near` a need left out): needs whose every right
    endpoint ranks above every wrong one ("clean", as tests/catalog/test_search_seed_needs.py asks
    of its needs), hit@1, hit@5, MRR, and the mean average precision of the right endpoints, for
    each writer."""
    import numpy as np
    import yaml

    from catalog.search import RANKING

    keys = _endpoint_keys(seed)
    needs = yaml.safe_load(NEWCOMER_NEEDS.read_text())
    print()
    print(f"newcomer needs over the seed catalog alone ({len(keys)} endpoints):")
    columns = ("clean", "hit@1", "hit@5", "MRR", "MAP")
    print(f"  {'writer':<8} {'needs':>5} " + " ".join(f"{name:>6}" for name in columns))
    for writer in sorted({need["writer"] for need in needs}, reverse=True):
        figures = []
        for need in (need for need in needs if need["writer"] == writer):
            right, near = set(need["right"]), set(need["near"]) - set(need["right"])
            logits = RANKING.logits(*seed.signals(need["q"]), seed.verified, seed.has_use_case)
            order = np.argsort(-logits, kind="stable")
            ranked = [keys[row] for row in order if keys[row] not in near]
            places = sorted(place for place, key in enumerate(ranked) if key in right)
            clean = places[-1] == len(places) - 1
            precision = np.mean([(n + 1) / (place + 1) for n, place in enumerate(places)])
            first = places[0]
            figures.append((clean, first == 0, first < 5, 1 / (first + 1), precision))
        means = np.mean(figures, axis=0)
        print(f"  {writer:<8} {len(figures):>5} " + " ".join(f"{m:>6.3f}" for m in means))


def _seed_rows(index):
    """The rows of the seed catalog's endpoints (the providers `make run` loads) in the index."""
    import numpy as np

    from catalog.management.commands.load_catalog import PROVIDERS_DIR

    seed_slugs = {path.stem for path in PROVIDERS_DIR.glob("*.yaml")}
    return np.array([row for row, e in enumerate(index.endpoints) if e.api.slug in seed_slugs])


def _seed_needs_margins(seed) -> None:
    """Each need of the seed needs test, ranked as the test ranks it, over the seed catalog alone
    (``seed``, a ``_seed_catalog_index``): the logit of its last right endpoint less that of its
    first wrong one (neither right nor near), with both named. The test passes a need when its
    margin is positive; one of a few hundredths of a logit is a pass any change of the model may
    turn."""
    import yaml

    from catalog.search import RANKING

    keys = _endpoint_keys(seed)
    needs = yaml.safe_load(SEED_NEEDS.read_text())
    print()
    print("seed needs test over the seed catalog alone (last right less first wrong, in logits):")
    passed = 0
    rows = range(len(keys))
    for need in needs:
        right, near = set(need["right"]), set(need["near"])
        logits = RANKING.logits(*seed.signals(need["q"]), seed.verified, seed.has_use_case)
        last_right = min((row for row in rows if keys[row] in right), key=logits.__getitem__)
        wrong = (row for row in rows if keys[row] not in right | near)
        first_wrong = max(wrong, key=logits.__getitem__)
        margin = logits[last_right] - logits[first_wrong]
        passed += margin > 0
        print(
            f"  {margin:+6.2f}  {need['q']}  ({keys[last_right]} {logits[last_right]:.2f},"
            f" {keys[first_wrong]} {logits[first_wrong]:.2f})"
        )
    print(f"  {passed} of {len(needs)} pass")


def _seed_catalog_index(index):
    """The seed catalog's endpoints of ``index`` as an index of their own, as `make run` loads
    them: the same vectors, and BM25 over their words alone, whose statistics differ from the
    corpus's enough to turn a margin of a few tenths."""
    import dataclasses

    import bm25s

    rows = _seed_rows(index)
    lexical = bm25s.BM25()
    words = [index.texts_by_hash[index.text_hashes[row]] for row in rows]
    lexical.index(words, show_progress=False)
    return dataclasses.replace(
        index,
        endpoints=[index.endpoints[row] for row in rows],
        api_of=index.api_of[rows],
        verified=index.verified[rows],
        has_use_case=index.has_use_case[rows],
        vectors=index.vectors[rows],
        lexical=lexical,
        unembedded=None,
        text_hashes=[index.text_hashes[row] for row in rows],
    )


def _judged_prompts(index, splits, calibration, signals, *, calibrate: bool) -> None:
    """The judged prompts of JUDGED: how the served ranking orders them (read by their judged
    endpoints) and what their scores say, on the half the score's calibration is fitted on and
    the half it is not; with ``calibrate``, the calibration fitted again on the `fit` halves
    (``_calibration_fit``) and what it makes of every set and split."""
    import numpy as np

    from catalog.search import RANKING

    sets = {name: _judged_read(index, path) for name, path in JUDGED.items()}
    print()
    print("judged prompts, the served first ten read by their judgements:")
    for name, prompts in sets.items():
        for half in ("fit", "heldout"):
            items = [p for p in prompts if p["half"] == half]
            answered = [p for p in items if (p["labels"] == 1).any()]
            places = np.array([int(np.argmax(p["labels"] == 1)) + 1 for p in answered])
            print(
                f"  {name:<9} {half:<8} {len(items)} prompts, {len(answered)} with a right "
                f"endpoint in the first ten: hit@1 {np.mean(places == 1):.3f}, hit@5 "
                f"{np.mean(places <= 5):.3f}, MRR {np.mean(1 / places):.3f}"
            )
    _judged_scores(index, sets, RANKING, "served")
    if calibrate:
        fitted = _calibration_fit(
            index, [p for prompts in sets.values() for p in prompts if p["half"] == "fit"]
        )
        print()
        print(
            f"calibration fitted on the fit halves: scale={fitted.scale:.2f} "
            f"bias={fitted.bias:.2f} short_prompt_lift={fitted.short_prompt_lift:.2f} "
            f"short_prompt_decay={fitted.short_prompt_decay:.2f}"
        )
        _judged_scores(index, sets, fitted, "fitted")
        _score_meaning(index, splits, calibration, signals, ranking=fitted)


def _judged_read(index, path: Path) -> list[dict]:
    """A judged file's prompts, each with its signals, its judged endpoints (``first``: the
    first ten as they were served when judged), best first as served now, and their labels (1
    right, 0 wrong)."""
    import numpy as np
    import yaml

    from catalog.search import RANKING, prompt_words

    rows = {key: row for row, key in enumerate(_endpoint_keys(index))}
    prompts = yaml.safe_load(path.read_text())
    for prompt in prompts:
        prompt["q"] = str(prompt["q"])
        prompt["signals"] = index.signals(prompt["q"])
        prompt["words"] = prompt_words(prompt["q"])
        logits = RANKING.logits(*prompt["signals"], index.verified, index.has_use_case)
        label = {key: 1 for key in prompt["right"]} | {key: 0 for key in prompt["wrong"]}
        missing = [key for key in label if key not in rows]
        if missing:
            raise SystemExit(f"{path.name}: {prompt['q']!r}: not in the catalog: {missing}")
        judged = sorted(label, key=lambda key: -logits[rows[key]])
        prompt["first"] = np.array([rows[key] for key in judged])
        prompt["labels"] = np.array([label[key] for key in judged])
    return prompts


def _judged_score(index, ranking, prompt):
    """The scores ``ranking`` gives the prompt's first ten."""
    import numpy as np

    logits = ranking.logits(
        *prompt["signals"], index.verified, index.has_use_case, words=prompt["words"]
    )
    return 1 / (1 + np.exp(-logits[prompt["first"]].astype(np.float64)))


def _judged_scores(index, sets, ranking, name: str) -> None:
    print(f"what the {name} scores say (the best right endpoint >= 0.5; endpoints >= 0.5 that")
    print("are right; nonsense prompts whose best stays < 0.3, and their largest; log loss):")
    for set_name, prompts in sets.items():
        for half in ("fit", "heldout"):
            items = [p for p in prompts if p["half"] == half]
            figures = _judged_figures(items, lambda p: _judged_score(index, ranking, p))
            print(f"  {set_name:<9} {half:<8} {figures}")


def _judged_figures(items, scores) -> str:
    import numpy as np

    answered = [p for p in items if (p["labels"] == 1).any()]
    best_right = np.array([scores(p)[p["labels"] == 1].max() for p in answered])
    unanswered = np.array([scores(p).max() for p in items if p.get("nonsense")])
    high = [
        label
        for p in items
        for s, label in zip(scores(p), p["labels"], strict=True)
        if label >= 0 and s >= 0.5
    ]
    return (
        f"{np.mean(best_right >= 0.5):.3f} | {np.mean(high) if high else 0:.2f} of {len(high)} | "
        f"{np.mean(unanswered < 0.3):.3f} ({unanswered.max():.2f}) | "
        f"{_balanced_log_loss(items, scores):.3f}"
    )


def _balanced_log_loss(items, scores) -> float:
    """Mean over prompts of the log loss of their judged endpoints, right and wrong weighed
    alike within each prompt."""
    import numpy as np

    losses = []
    for prompt in items:
        probability = np.clip(scores(prompt), 1e-9, 1 - 1e-9)
        loss = 0.0
        for wanted in (1, 0):
            chosen = prompt["labels"] == wanted
            if chosen.any():
                hit = probability[chosen] if wanted else 1 - probability[chosen]
                loss += -np.log(hit).mean()
        losses.append(loss)
    return float(np.mean(losses))


def _calibration_fit(index, prompts):
    """The served weights with the score's calibration (``scale``, ``bias``) and the
    short-prompt lift (``short_prompt_lift``, ``short_prompt_decay``) fitted by maximum
    likelihood on these judged prompts: the mean of ``_balanced_log_loss`` over them, each
    prompt weighing alike. Judged prompts, and not the training split, since the model's
    adapter was trained on the training split's needs: their relevance runs higher than a
    need the model has not read, and a score fitted to them would call a new need's right
    answers noise. The calibration of endpoints without a use case stays as it is (the judged
    prompts' endpoints all have one)."""
    from dataclasses import replace

    from scipy.optimize import minimize

    from catalog.search import RANKING

    def ranking_of(parameters):
        scale, bias, lift, decay = parameters
        return replace(
            RANKING,
            scale=scale,
            bias=bias,
            short_prompt_lift=lift,
            short_prompt_decay=max(decay, 0.1),
        )

    def loss(parameters):
        ranking = ranking_of(parameters)
        return _balanced_log_loss(prompts, lambda p: _judged_score(index, ranking, p))

    start = (RANKING.scale, RANKING.bias, RANKING.short_prompt_lift, RANKING.short_prompt_decay)
    fitted = minimize(
        loss, start, method="Nelder-Mead", options={"maxiter": 4000, "xatol": 1e-4, "fatol": 1e-7}
    )
    return ranking_of(fitted.x)


def _mixed(s: dict, short_view: float, use_case_view: float):
    """A query's cosine with each endpoint's views mixed by these weights, and its BM25."""
    texts = (1 - short_view) * s["full"] + short_view * s["short"]
    return (1 - use_case_view) * texts + use_case_view * s["use_case"], s["bm25"]


def _fit(index, train, calibration_train, signals) -> None:
    """Choose the short view's weight, the use cases', the lexical weight and its saturation on
    the training split (by MRR, then hit@5, then hit@1), then fit the logistic calibration of
    the chosen relevance: "answers the need" against the relevance alone, over each training
    query's endpoints labelled by ``_answers_the_need`` (queries without an answer included,
    their first ten all wrong), each need weighing as much on each side whatever the number of
    its right and wrong endpoints, so that a score never depends on the other candidates and 0.5
    is where an endpoint looks as much like a need's right answers as like its wrong ones. The
    verified prior and the lexical best's place stay as served (``_served_alternatives`` prints
    the figures they were chosen by)."""

    from catalog.search import RANKING, Ranking

    verified = index.verified
    # Relevance alone (the calibration is fitted last), with the prior and the lift as served.
    fit_start = {
        "scale": 1.0,
        "bias": 0.0,
        "verified_prior": RANKING.verified_prior,
        "lexical_best_place": RANKING.lexical_best_place,
    }
    print()
    print(
        "fit on the train split (short view, use case view, lexical weight, saturation: "
        "hit@1 hit@5 MRR):"
    )
    best = None
    grid = itertools.product(
        (0.0, 0.3, 0.5, 0.7),
        (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8),
        (0.0, 0.25, 0.5, 0.75, 1.0),
        (4.0, 8.0, 16.0),
    )
    for short_view, use_case_view, lexical, half in grid:
        ranking = Ranking(short_view, lexical, half, use_case_view=use_case_view, **fit_start)
        ranks = [
            _served_rank(
                index,
                ranking.relevance(*_mixed(signals[q["q"]], short_view, use_case_view), verified),
                q["rows"],
            )
            for q in train
        ]
        print(f"  {short_view:<4} {use_case_view:<4} {lexical:<5} {half:<5} {_metrics(ranks)}")
        key = _score(ranks)
        if best is None or key > best[0]:
            best = (key, short_view, use_case_view, lexical, half)
    _, short_view, use_case_view, lexical, half = best
    _calibrate(index, calibration_train, signals, (short_view, use_case_view, lexical, half))


def _calibrate(index, calibration_train, signals, weights: tuple) -> None:
    """Fit the logistic calibration of the relevance with ``weights`` (short view, use case
    view, lexical weight and saturation) on the training split, as ``_fit`` describes."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    from catalog.search import RANKING, Ranking

    short_view, use_case_view, lexical, half = weights
    ranking = Ranking(
        short_view,
        lexical,
        half,
        use_case_view=use_case_view,
        scale=1.0,
        bias=0.0,
        verified_prior=RANKING.verified_prior,
        lexical_best_place=RANKING.lexical_best_place,
    )
    features, labels, sample_weights = [], [], []
    for query in calibration_train:
        cosine, bm25 = _mixed(signals[query["q"]], short_view, use_case_view)
        relevance = ranking.relevance(cosine, bm25, index.verified)
        right, wrong = _answers_the_need(index, query, relevance)
        features += [relevance[row] for row in right + wrong]
        labels += [1] * len(right) + [0] * len(wrong)
        sample_weights += [1 / max(len(right), 1)] * len(right)
        sample_weights += [1 / max(len(wrong), 1)] * len(wrong)
    model = LogisticRegression(C=100.0, max_iter=1000)
    model.fit(np.array(features).reshape(-1, 1), labels, sample_weight=sample_weights)
    print(
        f"chosen: short_view={short_view} use_case_view={use_case_view} lexical={lexical} "
        f"lexical_half={half} "
        f"scale={model.coef_[0][0]:.2f} bias={model.intercept_[0]:.2f}"
    )


if __name__ == "__main__":
    main()
