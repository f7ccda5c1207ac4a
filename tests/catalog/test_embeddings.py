"""The query encoder: ONNX Runtime running the search model, exported once and kept on disk."""

import logging
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from catalog import embeddings
from catalog.embeddings import DIMENSIONS, query_embed, texts_embed
from tests.processes import python_without_a_catalog


@pytest.mark.parametrize(
    "text",
    [
        "screenshot a web page",
        "é",
        "find the work email of a person at a company " * 30,  # past the 128 word pieces
        "Vérifier qu'une adresse e-mail existe — 检查邮箱",
    ],
)
def test_a_query_is_embedded_as_the_endpoint_texts_are(text):
    query_embed.cache_clear()

    vector = query_embed(text)

    assert vector.shape == (DIMENSIONS,)
    assert vector.dtype == np.float32
    np.testing.assert_allclose(vector, texts_embed([text])[0], atol=1e-5)
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)


def test_the_encoder_is_exported_once_and_then_read_from_its_directory(
    settings, tmp_path, monkeypatch
):
    settings.SEARCH_ONNX_DIR = str(tmp_path / "encoders")
    exports = []

    def export(model, names):
        exports.append(names)
        return b"exported encoder"

    monkeypatch.setattr(embeddings, "_encoder_export", export)
    model = embeddings.embedding_model()

    first = embeddings._encoder_file(model, ("input_ids", "attention_mask"))
    again = embeddings._encoder_file(model, ("input_ids", "attention_mask"))

    assert first == again
    assert exports == [("input_ids", "attention_mask")]
    assert [path.name for path in (tmp_path / "encoders").iterdir()] == [first.split("/")[-1]]
    assert (tmp_path / "encoders" / first.split("/")[-1]).read_bytes() == b"exported encoder"


def test_an_encoder_directory_that_cannot_be_written_still_gives_the_encoder(
    settings, tmp_path, monkeypatch, caplog
):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the directory should be")
    settings.SEARCH_ONNX_DIR = str(blocker / "encoders")
    monkeypatch.setattr(embeddings, "_encoder_export", lambda model, names: b"exported encoder")

    with caplog.at_level(logging.WARNING, logger="catalog.embeddings"):
        encoder = embeddings._encoder_file(embeddings.embedding_model(), ("input_ids",))

    assert encoder == b"exported encoder"
    assert "next start exports it" in caplog.text


def test_a_changed_model_gets_an_encoder_of_its_own(settings, tmp_path):
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"weights")
    settings.SEARCH_MODEL_DIR = str(tmp_path)
    names = ("input_ids", "attention_mask")
    before = embeddings._model_fingerprint(names)

    (tmp_path / "model.safetensors").write_bytes(b"other weights")

    assert embeddings._model_fingerprint(names) != before
    with_token_types = embeddings._model_fingerprint((*names, "token_type_ids"))
    assert with_token_types != embeddings._model_fingerprint(names)


def test_queries_embedded_by_concurrent_threads_get_their_own_vectors():
    texts = [f"send an sms to customer number {number}" for number in range(32)]
    expected = texts_embed(texts)
    query_embed.cache_clear()

    with ThreadPoolExecutor(max_workers=8) as pool:
        vectors = list(pool.map(query_embed, texts))

    np.testing.assert_allclose(np.stack(vectors), expected, atol=1e-5)


# What gunicorn --preload does: the master warms search up, then forks workers that search and,
# one day, exit. A worker that inherited an open ONNX Runtime session would hang at its exit.
FORKED_WORKER = """
import os, sys, time
import django

django.setup()
from catalog.embeddings import query_embed
from catalog.search import search_warm_up

search_warm_up()
child = os.fork()
if child == 0:
    query_embed("send an sms")
    sys.exit(0)
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    pid, status = os.waitpid(child, os.WNOHANG)
    if pid:
        print("worker exited", os.waitstatus_to_exitcode(status))
        sys.exit(0)
    time.sleep(0.1)
os.kill(child, 9)
print("worker still running 60 s after it was asked to exit")
sys.exit(1)
"""


def test_a_worker_forked_after_the_warm_up_searches_and_exits():
    result = python_without_a_catalog(FORKED_WORKER)

    assert result.returncode == 0, result.stdout + result.stderr[-2000:]
    assert "worker exited 0" in result.stdout


def test_the_adapter_is_added_to_the_published_weights(settings):
    adapter_path = settings.SEARCH_ADAPTER
    tuned = dict(embeddings.lora_targets(embeddings.embedding_model()))
    settings.SEARCH_ADAPTER = ""
    published = dict(embeddings.lora_targets(embeddings._load()))

    with np.load(adapter_path) as adapter:
        assert sorted(f"{name}.up" for name in tuned) == sorted(
            key for key in adapter.files if key.endswith(".up")
        )
        for name, layer in tuned.items():
            update = adapter[f"{name}.up"].astype(np.float32) @ adapter[f"{name}.down"].astype(
                np.float32
            )
            change = layer.weight.detach().numpy() - published[name].weight.detach().numpy()
            np.testing.assert_allclose(change, update, atol=1e-6)
            assert np.abs(update).max() > 0


def test_vectors_are_named_after_the_adapter_they_were_made_with(settings, tmp_path):
    settings.SEARCH_ADAPTER = ""
    assert embeddings.model_name() == "all-MiniLM-L6-v2"

    adapter = tmp_path / "adapter.npz"
    adapter.write_bytes(b"one update")
    settings.SEARCH_ADAPTER = str(adapter)
    first = embeddings.model_name()
    adapter.write_bytes(b"another update")

    assert first.startswith("all-MiniLM-L6-v2+")
    assert embeddings.model_name() not in (first, "all-MiniLM-L6-v2")
    settings.SEARCH_ADAPTER = str(tmp_path / "missing.npz")
    assert embeddings.model_name() == "all-MiniLM-L6-v2"
