package keyring

// The broker's token Secret (token auth), as the nats chart and the
// tinyctl chart expect it by default.
const (
	TokenSecret = "nats-auth"
	TokenKey    = "token"
)

// The Secrets of the broker's decentralized auth (AuthJWT), in the
// runtime namespace.
const (
	// KeysSecret holds the seeds of the operator, the system account,
	// tinyctl's account and its signing key: the root of trust. Nothing
	// mounts it; only `tinyctl install` reads it.
	KeysSecret = "tinyctl-nats-keys"
	// JWTSecret holds, under JWTKey, the server configuration that trusts
	// the operator and preloads the accounts (public JWTs only). The
	// broker mounts it.
	JWTSecret = "nats-jwt"
	JWTKey    = "auth.conf"
	// SignerSecret holds what the controller mounts: the control
	// account's signing key seed (SignerSeedKey) and public key
	// (SignerAccountKey), with which it mints its own user; the operator
	// signing key's seed (SignerOperatorKey), with which it signs (and
	// derives) every namespace's accounts and mints their users; and
	// credentials of the system account that may only push account JWTs
	// into the broker's resolver (SignerClaimsKey).
	SignerSecret      = "tinyctl-account-signer"
	SignerSeedKey     = "seed"
	SignerAccountKey  = "account"
	SignerOperatorKey = "operator-signing"
	SignerClaimsKey   = "claims.creds"
	// PublisherSecret holds, under PublisherCredsKey, credentials that may
	// write specs and read status, and nothing else: what `tinyctl apply`
	// and other publishers use.
	PublisherSecret   = "tinyctl-publisher"
	PublisherCredsKey = "publisher.creds"
)
