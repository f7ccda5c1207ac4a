"""`python -m sandbox.facilitator --host 127.0.0.1 --port 8402`: the local facilitator double."""

from __future__ import annotations

import argparse

from sandbox.facilitator.app import FacilitatorApp
from sandbox.facilitator.chain import DEFAULT_INITIAL_BALANCE, DEFAULT_NETWORKS, OfflineChain
from sandbox.facilitator.server import make_facilitator_server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m sandbox.facilitator",
        description="A local x402 facilitator over an in-memory chain (no network, no chain).",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8402)
    parser.add_argument(
        "--network",
        action="append",
        dest="networks",
        help=f"a CAIP-2 network to run (repeatable; default {' and '.join(DEFAULT_NETWORKS)})",
    )
    parser.add_argument(
        "--initial-balance",
        type=int,
        default=DEFAULT_INITIAL_BALANCE,
        help="every address's starting USDC balance in base units (default 1,000 USDC)",
    )
    parser.add_argument("--quiet", action="store_true", help="no access log")
    args = parser.parse_args(argv)

    chain = OfflineChain(
        networks=args.networks or DEFAULT_NETWORKS, initial_balance=args.initial_balance
    )
    server = make_facilitator_server(args.host, args.port, FacilitatorApp(chain), quiet=args.quiet)
    host, port = server.server_address[:2]
    print(f"x402 facilitator double on http://{host}:{port} ({', '.join(chain.networks)})")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
