"""Payers on the mpp rail using the official pympp client: a fresh Tempo account that answers a
402's ``WWW-Authenticate: Payment`` challenge with a signed transfer."""

import asyncio

import httpx
from eth_account import Account
from mpp import Challenge, Credential
from mpp.client import Mpp
from mpp.methods.tempo import TempoAccount
from mpp.methods.tempo import client as tempo
from mpp.runtime import CredentialParams


class MppPayer:
    def __init__(self, rpc_url: str):
        self.account = TempoAccount.from_key("0x" + Account.create().key.hex().removeprefix("0x"))
        self.rpc_url = rpc_url
        self.method = tempo.charge(account=self.account, rpc_url=rpc_url)

    @property
    def address(self) -> str:
        return self.account.address

    def fetch(self, url: str, *, method: str = "GET", **kwargs) -> httpx.Response:
        """What an application using the SDK does: request, pay the 402, request again."""

        async def fetch():
            client = Mpp(methods=[self.method])
            try:
                response = await client.fetch(url, method=method, timeout=30, **kwargs)
                await response.aread()
                return response
            finally:
                await client.aclose()

        return asyncio.run(fetch())

    def authorization(self, challenge_response, **changes) -> str:
        """The Authorization header paying a 402's challenge, as the SDK's tempo method signs
        it; ``changes`` (amount, recipient) alter the transfer it signs."""
        challenge = Challenge.from_www_authenticate(challenge_response.headers["WWW-Authenticate"])
        if not changes:
            return asyncio.run(self._create(challenge))
        return asyncio.run(self._create_altered(challenge, changes))

    async def _create(self, challenge: Challenge) -> str:
        return await self.method.create_credential(CredentialParams(challenge=challenge))

    async def credential(self, challenge: Challenge) -> Credential:
        return Credential.from_authorization(await self._create(challenge))

    async def _create_altered(self, challenge: Challenge, changes: dict) -> str:
        from mpp.methods.tempo._attribution import encode as encode_attribution
        from mpp.methods.tempo.client import TempoMethod

        method = TempoMethod(account=self.account, rpc_url=self.rpc_url)
        request = {**challenge.request, **changes}
        raw_tx, chain_id = await method._build_tempo_transfer(
            amount=str(request["amount"]),
            currency=request["currency"],
            recipient=request["recipient"],
            memo=encode_attribution(challenge_id=challenge.id, server_id=challenge.realm),
            rpc_url=self.rpc_url,
            expires=challenge.expires,
        )
        credential = Credential(
            challenge=challenge.to_echo(),
            payload={"type": "transaction", "signature": raw_tx},
            source=f"did:pkh:eip155:{chain_id}:{self.address}",
        )
        return credential.to_authorization()
