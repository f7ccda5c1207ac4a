"""The seed catalog's obvious needs, typed as a new user would: for each, every endpoint that
answers it ranks above every endpoint that does not.

Each need lists the endpoints that answer it (``right``) and those that answer part of it or a
neighbouring need (``near``: a bulk variant, the result half of an asynchronous pair, a sibling
that also fits), which may rank anywhere; every other endpoint of the seed catalog is wrong and
must rank below all of ``right``. The ranking is the served one, over the whole seed catalog that
``make run`` loads, with the real model. The needs live in bench/search_seed_needs.yaml, which
bench/search_quality.py reads too, to print by how much each passes or fails.
"""

from pathlib import Path

import numpy as np
import pytest
import yaml
from django.core.management import call_command

from catalog.search import RANKING, prompt_words, search_index_build
from catalog.services import endpoint_embeddings_refresh

SEED_NEEDS_FILE = Path(__file__).resolve().parents[2] / "bench" / "search_seed_needs.yaml"

# need: (right, near)
_NEEDS = yaml.safe_load(SEED_NEEDS_FILE.read_text())
SEED_NEEDS = {need["q"]: (need["right"], need["near"]) for need in _NEEDS}
# Needs the ranking does not answer cleanly yet (the file says what ranks above them)
NOT_YET = {need["q"] for need in _NEEDS if need.get("not_yet")}


_indexes: list = []


@pytest.fixture
def seed_index(db):
    """The seed catalog, indexed in memory once for the module: the index answers without the
    database, so later tests keep it after their own transactions have rolled back."""
    if not _indexes:
        call_command("load_catalog", verbosity=0)
        endpoint_embeddings_refresh()
        _indexes.append(search_index_build())
    return _indexes[0]


def endpoint_key(endpoint) -> str:
    return f"{endpoint.api.slug} {endpoint.method} {endpoint.path}"


def test_the_needs_name_endpoints_of_the_seed_catalog(seed_index):
    keys = {endpoint_key(endpoint) for endpoint in seed_index.endpoints}
    named = {key for right, near in SEED_NEEDS.values() for key in right + near}
    assert named <= keys, sorted(named - keys)


@pytest.mark.parametrize(
    "need",
    [
        pytest.param(need, marks=pytest.mark.xfail(strict=True, reason="ranked below a wrong one"))
        if need in NOT_YET
        else need
        for need in SEED_NEEDS
    ],
)
def test_every_right_endpoint_ranks_above_every_wrong_one(seed_index, need):
    right, near = SEED_NEEDS[need]
    keys = [endpoint_key(endpoint) for endpoint in seed_index.endpoints]
    logits = RANKING.logits(*seed_index.signals(need), seed_index.verified, seed_index.has_use_case)
    order = [keys[row] for row in np.argsort(-logits, kind="stable")]
    last_right = max(order.index(key) for key in right)
    wrong_above = [key for key in order[:last_right] if key not in right and key not in near]
    assert wrong_above == []


def served_scores(seed_index, need: str) -> np.ndarray:
    """Every endpoint's score for ``need``, as a search serves it."""
    signals = seed_index.signals(need)
    words = prompt_words(need)
    logits = RANKING.logits(*signals, seed_index.verified, seed_index.has_use_case, words=words)
    return 1 / (1 + np.exp(-logits))


@pytest.mark.parametrize(
    "need",
    [
        "xyzzy plugh",
        "fold the laundry",
        "book a flight to rome",
        "send an sms",
        "yawn",
        "hug my cat",
        "weather",
    ],
)
def test_a_need_the_seed_catalog_does_not_serve_scores_low_everywhere(seed_index, need):
    assert served_scores(seed_index, need).max() < 0.3


def test_a_clear_need_scores_its_answer_above_the_half(seed_index):
    keys = [endpoint_key(endpoint) for endpoint in seed_index.endpoints]
    scores = served_scores(seed_index, "take a screenshot of a website")
    assert scores[keys.index("screenshotone GET /take")] > 0.5


# A few words typed into a search box, and every endpoint that answers them.
TERSE_NEEDS = {
    "verify email": SEED_NEEDS["verify if an email address is deliverable"][0],
    "youtube comments": ["youtube GET /youtube/v3/commentThreads"],
    "text embeddings": ["zhipu-glm POST /api/paas/v4/embeddings"],
    "screenshot a website": ["screenshotone GET /take"],
}


@pytest.mark.parametrize("need", TERSE_NEEDS)
def test_a_terse_need_scores_every_right_answer_above_the_half(seed_index, need):
    keys = [endpoint_key(endpoint) for endpoint in seed_index.endpoints]
    scores = served_scores(seed_index, need)
    assert [key for key in TERSE_NEEDS[need] if scores[keys.index(key)] <= 0.5] == []


def test_a_sentence_with_a_concrete_value_scores_its_best_answer_above_the_half(seed_index):
    """Users and agents write the value they have into the need; the score, calibrated on needs
    the model never read, still reads its answer as worth reading."""
    keys = [endpoint_key(endpoint) for endpoint in seed_index.endpoints]
    scores = served_scores(
        seed_index, "check whether jane@acme.com is a real address that can receive mail"
    )
    verifiers = SEED_NEEDS["verify if an email address is deliverable"][0]
    assert max(scores[keys.index(key)] for key in verifiers) > 0.5


def test_a_web_address_in_a_need_is_read_as_a_page_not_as_its_words(seed_index):
    """The words of an address ("news", "markets") say what the page is about, not what the need
    asks for: a need to read a page finds the page readers, not the news searches."""
    keys = [endpoint_key(endpoint) for endpoint in seed_index.endpoints]
    need = "read https://news.example.org/2026/11/markets-today and tell me what it says"
    logits = RANKING.logits(*seed_index.signals(need), seed_index.verified, seed_index.has_use_case)
    right, near = SEED_NEEDS["scrape a web page as markdown"]
    assert keys[int(np.argmax(logits))] in right + near
