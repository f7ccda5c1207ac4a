"""A local x402 facilitator and the in-memory chain under it, for tests, demos and benchmarks.

Plain Python and the x402 SDK: nothing here imports Django or another app of the project.
"""

import sys

# eth-account (under the SDK's EVM mechanism) imports py_ecc, which raises the interpreter's
# recursion limit to 100,000 at import. With it, a deeply nested JSON body overflows the C stack
# in `json.loads` and kills the process instead of raising RecursionError.
_recursion_limit = sys.getrecursionlimit()

from sandbox.facilitator.app import FacilitatorApp  # noqa: E402
from sandbox.facilitator.chain import OfflineChain  # noqa: E402
from sandbox.facilitator.server import FacilitatorServer, serve_in_thread  # noqa: E402

sys.setrecursionlimit(_recursion_limit)

__all__ = ["FacilitatorApp", "FacilitatorServer", "OfflineChain", "serve_in_thread"]
