"""`python -m sandbox.tempo --host 127.0.0.1 --port 8545`: the local Tempo chain's JSON-RPC."""

from __future__ import annotations

import argparse

from sandbox.tempo.chain import DEFAULT_INITIAL_BALANCE, TEMPO_CHAIN_ID, TempoChain
from sandbox.tempo.rpc import TempoRpcApp, make_rpc_server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m sandbox.tempo",
        description="A local Tempo chain's JSON-RPC over in-memory balances (no network).",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8545)
    parser.add_argument("--chain-id", type=int, default=TEMPO_CHAIN_ID)
    parser.add_argument(
        "--initial-balance",
        type=int,
        default=DEFAULT_INITIAL_BALANCE,
        help="every address's starting balance of every token in base units (default 1,000)",
    )
    parser.add_argument("--quiet", action="store_true", help="no access log")
    args = parser.parse_args(argv)

    chain = TempoChain(chain_id=args.chain_id, initial_balance=args.initial_balance)
    server = make_rpc_server(args.host, args.port, TempoRpcApp(chain), quiet=args.quiet)
    host, port = server.server_address[:2]
    print(f"Tempo JSON-RPC double on http://{host}:{port} (chain id {chain.chain_id})")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
