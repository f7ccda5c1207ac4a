"""gunicorn settings of the gateway, read with ``--config python:gateway.gunicorn_config`` (``make
serve`` and the benchmarks pass it; command-line options still override).

The master loads the model and builds the search index before it forks (``--preload``, see
gateway.wsgi), but an ONNX Runtime session must be opened after the fork, by each worker. Each
worker opens its own here, before it takes its first request, instead of making the first search
it answers wait for it. Each worker also learns its thread count, which bounds its calls to
providers in flight (gateway.inflight).
"""

# gunicorn 27's control socket lives at one path per user ($XDG_RUNTIME_DIR or ~/.gunicorn), so a
# second gateway on the machine (a benchmark beside `make run`) would take over the first's. The
# gateway is managed by signals and never uses it.
control_socket_disable = True


def post_worker_init(worker) -> None:
    from catalog.embeddings import query_encoder_warm_up
    from gateway.inflight import worker_threads_set

    worker_threads_set(worker.cfg.threads)

    try:
        seconds = query_encoder_warm_up()
    except Exception:  # search then opens it at its first request, and reports what fails
        worker.log.exception("Worker %s could not open the search query encoder", worker.pid)
        return
    worker.log.info("Worker %s opened the search query encoder in %.2f s", worker.pid, seconds)
