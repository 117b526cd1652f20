// Package keyring says where a tinyctl runtime keeps its NATS credentials —
// the Secrets `tinyctl install` writes in the runtime namespace: the
// broker's token, or with jwt auth the operator and account keys, the
// server's trust configuration, the account signing key the controller
// mints with and the publisher's credentials — and mints, from that
// signing key, the credentials of parties the controller does not serve:
// job producers (Producer). Package provision writes the Secrets; the CLI,
// the controller's chart and the tests read them by these names.
package keyring
