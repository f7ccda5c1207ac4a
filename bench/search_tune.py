"""Tune the search model to the catalog's needs: low-rank adapters (LoRA) on every linear layer of
all-MiniLM-L6-v2, trained on the needs of bench/search_queries.yaml's `train`, `named` and `needs`
splits and of bench/search_catalog_needs.yaml (needs written for 2,400 endpoints drawn from the
corpus) against the endpoints they expect, and written to catalog/search_adapter.npz, which
catalog.embeddings merges into the model's weights when it loads.

Each need is paired with each endpoint it expects and with two wrong endpoints the untuned model
ranks high for it (the best wrong one, and one drawn from the next nine), and the model learns to
put the expected endpoint first among those and the other needs' endpoints of its batch (a
contrastive loss over cosines scaled by 20). The `validation`, `test` and `seed` splits and the
held-out needs of bench/search_heldout.yaml are never read here, and no need of
search_catalog_needs.yaml is written for an endpoint they expect, so bench/search_quality.py
measures the tuned model on them as on needs and endpoints it has not seen.

That first stage is kept in bench/search_adapter_needs.npz. The second (`--use-cases`) starts
from it and trains on the catalog's own use cases (catalog/use_cases.tsv): for endpoints drawn at
random, one of the two lines written in a newcomer's words (the goal, or the fourth line) as the
need, against the endpoint's short text or its first use case, with two wrong endpoints the
first stage's index ranks high for that line as the hard negatives (often its API's siblings). It
reads no query: the endpoints any `validation`, `test` or `seed` query or any held-out need
expects are left out, so they stay unseen. Its adapter is the one served.

Runs on BENCH_DATABASE_URL when set (the corpus and the seed catalog are imported into it unless
it holds them), otherwise on a throwaway database. Seeded: the same corpus and queries give the
same adapter on the same machine. The first stage takes about 40 minutes on two cores (15 the
import, 25 the training), the second about 25 on every eligible endpoint once the catalog is
embedded with the first (`--lines-per-endpoint 2`, both lines of each, twice that).

    .venv/bin/python bench/search_tune.py --out bench/search_adapter_needs.npz
    .venv/bin/python bench/search_tune.py --use-cases 16000 [--out catalog/search_adapter.npz]
"""

import os
import random
import time
from pathlib import Path

import harness

TRAIN_SPLITS = ("train", "named", "needs")
CATALOG_NEEDS = harness.ROOT / "bench" / "search_catalog_needs.yaml"
RANK = 8
ALPHA = 16
EPOCHS = 1
BATCH = 32
LEARNING_RATE = 3e-4
TEMPERATURE_SCALE = 20.0
SEED = 20261126
OUT = harness.ROOT / "catalog" / "search_adapter.npz"
NEEDS_ADAPTER = harness.ROOT / "bench" / "search_adapter_needs.npz"
# The second stage: which use-case lines stand for the need (0-based: the goal and the fourth
# line), the candidate texts, its seed and learning rate, with the first stage's other settings.
USE_CASE_NEED_LINES = (1, 3)
USE_CASE_CANDIDATES = ("short", "task")
USE_CASE_SEED = 20261127
USE_CASE_LEARNING_RATE = 1e-4


def main() -> None:
    parser = harness.argument_parser(__doc__)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--use-cases",
        type=int,
        default=0,
        help="the second stage: continue bench/search_adapter_needs.npz on this many endpoints' "
        "use cases",
    )
    parser.add_argument(
        "--lines-per-endpoint",
        type=int,
        choices=(1, len(USE_CASE_NEED_LINES)),
        default=1,
        help="the second stage: one of an endpoint's newcomer lines drawn at random, or each",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=USE_CASE_SEED,
        help="the second stage's seed: its draws of endpoints, lines, candidates and order",
    )
    parser.add_argument(
        "--extra-needs",
        type=Path,
        help="the second stage: also pair each need of this file (written as "
        "search_catalog_needs.yaml is) with the endpoints it expects",
    )
    parser.add_argument(
        "--epochs", type=int, default=EPOCHS, help="passes over the pairs (the same pairs each)"
    )
    arguments = parser.parse_args()
    if arguments.epochs < 1:
        parser.error("--epochs must be at least 1")
    if arguments.use_cases:
        # mine with the first stage's model, over vectors it embedded
        os.environ["SEARCH_ADAPTER"] = str(NEEDS_ADAPTER)
    else:
        os.environ["SEARCH_ADAPTER"] = ""  # mine and train from the untuned model
    with harness.django_database("gw_bench_search_tune"):
        harness.corpus_catalog_load()
        if arguments.use_cases:
            pairs = _use_case_pairs(
                arguments.use_cases,
                arguments.lines_per_endpoint,
                arguments.seed,
                arguments.extra_needs,
            )
            print(f"{len(pairs)} pairs from the use cases of {arguments.use_cases} endpoints")
            adapters = _train(
                pairs,
                from_adapter=NEEDS_ADAPTER,
                seed=arguments.seed,
                learning_rate=USE_CASE_LEARNING_RATE,
                epochs=arguments.epochs,
            )
        else:
            pairs = _pairs()
            print(f"{len(pairs)} pairs from the {', '.join(TRAIN_SPLITS)} splits")
            adapters = _train(pairs, epochs=arguments.epochs)
        _write(adapters, arguments.out)


def _pairs() -> list[tuple[str, str, str, str]]:
    """(need, expected endpoint's text, best wrong text, another high wrong text)."""
    import numpy as np
    import yaml

    from catalog.models import EndpointEmbedding
    from catalog.search import query_normalise, search_index_build

    random.seed(SEED)
    index = search_index_build()
    rows = _rows_by_key(index)
    texts = dict(EndpointEmbedding.objects.values_list("endpoint_id", "text"))
    text_of = [texts.get(endpoint.id, "") for endpoint in index.endpoints]
    queries = [query for query in harness.search_queries() if query["split"] in TRAIN_SPLITS]
    queries += yaml.safe_load(CATALOG_NEEDS.read_text())
    pairs = []
    for query in queries:
        if not query["expect"]:
            continue
        expected = [rows[key] for key in query["expect"]]
        cosine, _ = index.signals(str(query["q"]))
        wrong = [int(row) for row in np.argsort(-cosine)[:30] if int(row) not in expected]
        need = query_normalise(str(query["q"]))
        for row in expected:
            another = random.choice(wrong[1:10])
            pairs.append((need, text_of[row], text_of[wrong[0]], text_of[another]))
    return pairs


def _use_case_pairs(
    count: int, lines_per_endpoint: int, seed: int, extra_needs: Path | None = None
) -> list[tuple[str, str, str, str]]:
    """(a newcomer's line of an endpoint, that endpoint's short text or first use case, the
    same text of the line's best wrong endpoint, and of another high wrong one); and the same
    for each need of ``extra_needs`` against the endpoints it expects."""
    import numpy as np
    import yaml

    from catalog.models import Endpoint
    from catalog.search import endpoint_search_texts_for, query_normalise, search_index_build

    random.seed(seed)
    index = search_index_build()
    unseen = _evaluated_endpoints()
    row_of_id = {endpoint.id: row for row, endpoint in enumerate(index.endpoints)}
    texts = {
        row_of_id[endpoint.id]: endpoint_search_texts_for(endpoint, endpoint.api)
        for endpoint in Endpoint.objects.select_related("api").filter(id__in=list(row_of_id))
    }
    eligible = [
        row
        for row, endpoint in enumerate(index.endpoints)
        if _endpoint_key(endpoint) not in unseen and row in texts and len(texts[row].use_cases) >= 4
    ]

    def text(row: int, form: str) -> str:
        return texts[row].short if form == "short" else texts[row].use_cases[0]

    def pair(row: int, need: str) -> tuple[str, str, str, str]:
        cosine, _ = index.signals(need)
        wrong = [
            int(other)
            for other in np.argsort(-cosine)[:30]
            if int(other) != row and int(other) in texts
        ]
        form = random.choice(USE_CASE_CANDIDATES)
        another = random.choice(wrong[1:10])
        return (query_normalise(need), text(row, form), text(wrong[0], form), text(another, form))

    every_line = lines_per_endpoint > 1
    pairs = []
    for row in random.sample(eligible, min(count, len(eligible))):
        for number in USE_CASE_NEED_LINES if every_line else (random.choice(USE_CASE_NEED_LINES),):
            pairs.append(pair(row, texts[row].use_cases[number]))
    if extra_needs:
        rows = _rows_by_key(index)
        for query in yaml.safe_load(extra_needs.read_text()):
            for key in query["expect"]:
                if key in unseen:
                    raise SystemExit(f"{extra_needs}: {key} is expected by an evaluated need")
                if key not in rows:
                    raise SystemExit(f"{extra_needs}: {key} is not an enabled endpoint")
                pairs.append(pair(rows[key], str(query["q"])))
    return pairs


def _endpoint_key(endpoint) -> str:
    """How the query files name an endpoint: "<slug> <METHOD> <path>"."""
    return f"{endpoint.api.slug} {endpoint.method} {endpoint.path}"


def _rows_by_key(index) -> dict[str, int]:
    """Each indexed endpoint's row, by its key."""
    return {_endpoint_key(endpoint): row for row, endpoint in enumerate(index.endpoints)}


def _evaluated_endpoints() -> set[str]:
    """The endpoints an evaluation split or a held-out need expects. The `paraphrased` needs'
    endpoints are not among them: they were written after the served adapter, whose second
    stage read one use-case line of each, and leaving them out would change its draw."""
    expected = set()
    for query in harness.search_queries() + harness.heldout_needs():
        if query["split"] in ("validation", "test", "seed", "heldout", "fresh"):
            expected.update(query["expect"] or [])
    return expected


def _train(
    pairs: list[tuple[str, str, str, str]],
    *,
    from_adapter: Path | None = None,
    seed: int = SEED,
    learning_rate: float = LEARNING_RATE,
    epochs: int = EPOCHS,
) -> dict:
    """LoRA adapters trained on ``pairs``, each starting from ``from_adapter`` (an adapter file) or,
    without one, from zero (its down projection drawn at random, its up projection zero)."""
    import numpy as np
    import torch

    from catalog.embeddings import lora_targets, published_model

    torch.manual_seed(seed)
    random.seed(seed)
    torch.set_num_threads(os.cpu_count() or 1)
    # the published model, whatever SEARCH_ADAPTER names: the adapters are trained on top of it
    model = published_model()
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    initial = np.load(from_adapter) if from_adapter else None
    adapters = {}
    for name, linear in lora_targets(model):
        if initial is None:
            down = torch.nn.Parameter(torch.empty(RANK, linear.in_features))
            torch.nn.init.kaiming_uniform_(down, a=5**0.5)
            up = torch.nn.Parameter(torch.zeros(linear.out_features, RANK))
        else:  # the file's up projection has the scale folded in
            down = torch.nn.Parameter(torch.from_numpy(initial[f"{name}.down"].astype(np.float32)))
            up = initial[f"{name}.up"].astype(np.float32) / (ALPHA / RANK)
            up = torch.nn.Parameter(torch.from_numpy(up))
        adapters[name] = (down, up)
        linear.register_forward_hook(_adapter_hook(down, up, ALPHA / RANK))
    parameters = [tensor for pair in adapters.values() for tensor in pair]
    optimiser = torch.optim.AdamW(parameters, lr=learning_rate)
    steps = epochs * -(-len(pairs) // BATCH)
    warm_up = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda step: min(1.0, (step + 1) / warm_up) * max(0.0, 1 - step / steps)
    )
    model.train()
    started, step = time.perf_counter(), 0
    for _ in range(epochs):
        random.shuffle(pairs)
        for start in range(0, len(pairs), BATCH):
            batch = pairs[start : start + BATCH]
            loss = _batch_loss(model, batch)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            step += 1
            seconds = time.perf_counter() - started
            print(f"step {step}/{steps}: loss {loss.item():.3f} ({seconds:.0f} s)")
    model.eval()
    return {
        name: (down.detach().numpy(), up.detach().numpy() * (ALPHA / RANK))
        for name, (down, up) in adapters.items()
    }


def _adapter_hook(down, up, scale: float):
    def hook(module, inputs, output):
        return output + (inputs[0] @ down.T @ up.T) * scale

    return hook


def _batch_loss(model, batch):
    """Cross-entropy of each need's expected endpoint among every text of the batch; another
    pair of the same need is not counted against it."""
    import torch

    def embed(texts):
        features = model.preprocess(texts)
        return torch.nn.functional.normalize(model(features)["sentence_embedding"], dim=-1)

    needs = embed([pair[0] for pair in batch])
    candidates = embed([pair[column] for column in (1, 2, 3) for pair in batch])
    scores = needs @ candidates.T * TEMPERATURE_SCALE
    same_need = torch.tensor(
        [
            [
                column < len(batch) and column != row and batch[column][0] == batch[row][0]
                for column in range(3 * len(batch))
            ]
            for row in range(len(batch))
        ]
    )
    scores = scores.masked_fill(same_need, float("-inf"))
    return torch.nn.functional.cross_entropy(scores, torch.arange(len(batch)))


def _write(adapters: dict, out: Path) -> None:
    """Each layer's low-rank update as float16, ``<layer>.down`` and ``<layer>.up`` (the scale
    folded into ``up``): the layer's weight becomes weight + up @ down."""
    import numpy as np

    arrays = {}
    for name, (down, up) in adapters.items():
        arrays[f"{name}.down"] = down.astype(np.float16)
        arrays[f"{name}.up"] = up.astype(np.float16)
    np.savez_compressed(out, **arrays)
    print(f"{out}: {len(adapters)} layers, {out.stat().st_size / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
