// Calls a URL through the official x402 v2 fetch wrapper, paying its 402 offer, and prints one
// JSON line: {status, body, paymentResponse, payer}.
//
//   node pay.mjs <url> [method] [json-body]
//
// The payer is a fresh viem account unless PRIVATE_KEY is set. The exact EVM scheme is
// registered for eip155:* (and the SDK's v1 network names), so the wrapper answers
// PAYMENT-REQUIRED with PAYMENT-SIGNATURE; paymentResponse is the decoded PAYMENT-RESPONSE
// header, or null when the answer has none.
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

const [url, method = "GET", body] = process.argv.slice(2);
if (!url) {
  console.error("usage: node pay.mjs <url> [method] [json-body]");
  process.exit(2);
}

const account = privateKeyToAccount(process.env.PRIVATE_KEY || generatePrivateKey());
const client = new x402Client();
registerExactEvmScheme(client, { signer: account });
const fetchWithPayment = wrapFetchWithPayment(fetch, client);

const init = { method: method.toUpperCase(), headers: {} };
if (body !== undefined) {
  init.body = body;
  init.headers["Content-Type"] = "application/json";
}

try {
  const response = await fetchWithPayment(url, init);
  const text = await response.text();
  let parsed = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: keep the text.
  }
  const receipt = response.headers.get("PAYMENT-RESPONSE");
  console.log(
    JSON.stringify({
      status: response.status,
      body: parsed,
      paymentResponse: receipt ? decodePaymentResponseHeader(receipt) : null,
      payer: account.address,
    }),
  );
} catch (error) {
  console.error(JSON.stringify({ error: String(error?.message ?? error), payer: account.address }));
  process.exit(1);
}
