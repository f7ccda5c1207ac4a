"""Payers using the official x402 Python client: a fresh wallet that answers a rail's 402."""

from eth_account import Account
from x402 import x402ClientSync
from x402.http import x402HTTPClientSync
from x402.http.utils import encode_payment_signature_header
from x402.mechanisms.evm.exact import register_exact_evm_client
from x402.mechanisms.evm.signers import EthAccountSigner
from x402.schemas.v1 import PaymentRequiredV1


class Payer:
    def __init__(self):
        self.account = Account.create()
        self.client = x402ClientSync()
        register_exact_evm_client(self.client, EthAccountSigner(self.account))
        self.http = x402HTTPClientSync(self.client)

    @property
    def address(self) -> str:
        return self.account.address

    def pay(self, challenge, url: str) -> dict[str, str]:
        """The headers that pay a 402 (x402 v2 when it carries PAYMENT-REQUIRED)."""
        headers, _ = self.http.handle_402_response(dict(challenge.items()), challenge.content, url)
        return headers

    def pay_v1(self, challenge) -> dict[str, str]:
        """The X-PAYMENT header of an x402 v1 client, from the v1 fields of the 402's body."""
        body = challenge.json()
        required = PaymentRequiredV1(error=body["error"], accepts=body["accepts"])
        payload = self.client.create_payment_payload(required)
        return {"X-PAYMENT": encode_payment_signature_header(payload)}


def signed_for(payer: Payer, challenge, **changes) -> dict[str, str]:
    """The PAYMENT-SIGNATURE of a v2 payment signed for the challenge's first requirement with
    ``changes`` made to it first (to pay another recipient, network or amount)."""
    from x402.http.utils import decode_payment_required_header

    required = decode_payment_required_header(challenge["PAYMENT-REQUIRED"])
    required.accepts = [required.accepts[0].model_copy(update=changes)]
    payload = payer.client.create_payment_payload(required)
    return {"PAYMENT-SIGNATURE": encode_payment_signature_header(payload)}


def tampered(headers: dict[str, str], **authorization) -> dict[str, str]:
    """A signed v2 payment with its authorization changed after signing."""
    from x402.http.utils import decode_payment_signature_header

    payload = decode_payment_signature_header(headers["PAYMENT-SIGNATURE"])
    payload.payload["authorization"].update(authorization)
    return {"PAYMENT-SIGNATURE": encode_payment_signature_header(payload)}
