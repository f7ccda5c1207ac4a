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

Runs on BENCH_DATABASE_URL when set (the corpus and the seed catalog are imported into it unless
it holds them), otherwise on a throwaway database. Seeded: the same corpus and queries give the
same adapter on the same machine. About 40 minutes on two cores: 15 the import, 25 the training.

    .venv/bin/python bench/search_tune.py [--out catalog/search_adapter.npz]
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


def main() -> None:
    parser = harness.argument_parser(__doc__)
    parser.add_argument("--out", type=Path, default=OUT)
    arguments = parser.parse_args()
    os.environ["SEARCH_ADAPTER"] = ""  # mine and train from the untuned model
    with harness.django_database("gw_bench_search_tune"):
        harness.corpus_catalog_load()
        pairs = _pairs()
        print(f"{len(pairs)} pairs from the {', '.join(TRAIN_SPLITS)} splits")
        adapters = _train(pairs)
        _write(adapters, arguments.out)


def _pairs() -> list[tuple[str, str, str, str]]:
    """(need, expected endpoint's text, best wrong text, another high wrong text)."""
    import numpy as np
    import yaml

    from catalog.models import EndpointEmbedding
    from catalog.search import query_normalise, search_index_build

    random.seed(SEED)
    index = search_index_build()
    rows = {f"{e.api.slug} {e.method} {e.path}": row for row, e in enumerate(index.endpoints)}
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


def _train(pairs: list[tuple[str, str, str, str]]) -> dict:
    import torch

    from catalog.embeddings import embedding_model, lora_targets

    torch.manual_seed(SEED)
    random.seed(SEED)
    torch.set_num_threads(os.cpu_count() or 1)
    model = embedding_model()
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    adapters = {}
    for name, linear in lora_targets(model):
        down = torch.nn.Parameter(torch.empty(RANK, linear.in_features))
        torch.nn.init.kaiming_uniform_(down, a=5**0.5)
        up = torch.nn.Parameter(torch.zeros(linear.out_features, RANK))
        adapters[name] = (down, up)
        linear.register_forward_hook(_adapter_hook(down, up, ALPHA / RANK))
    parameters = [tensor for pair in adapters.values() for tensor in pair]
    optimiser = torch.optim.AdamW(parameters, lr=LEARNING_RATE)
    steps = EPOCHS * -(-len(pairs) // BATCH)
    warm_up = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda step: min(1.0, (step + 1) / warm_up) * max(0.0, 1 - step / steps)
    )
    model.train()
    started, step = time.perf_counter(), 0
    for _ in range(EPOCHS):
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
