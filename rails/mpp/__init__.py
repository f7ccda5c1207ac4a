"""The mpp rail: provider endpoints paid with the Payment HTTP authentication scheme (tempo
charges in USDC.e), verified and settled by the official pympp SDK."""
