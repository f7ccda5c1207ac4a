"""A local Tempo chain behind a JSON-RPC endpoint, for the mpp rail's tests, demos and benchmarks.

It answers the calls the pympp tempo method makes, from the client building a transfer
(``eth_chainId``, ``eth_gasPrice``, ``eth_estimateGas``) to the server settling it
(``eth_sendRawTransactionSync``, ``eth_getTransactionReceipt``, ``eth_getBlockByNumber``): signed
type-0x76 transactions are decoded, their TIP-20 transfers move in-memory balances, and each
receipt carries the ``Transfer`` / ``TransferWithMemo`` logs a real node emits.

Plain Python, rlp and eth-account: nothing here imports Django or another app of the project.
"""

from sandbox.tempo.chain import TempoChain
from sandbox.tempo.rpc import TempoRpcServer, serve_in_thread

__all__ = ["TempoChain", "TempoRpcServer", "serve_in_thread"]
