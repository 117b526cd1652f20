// Package ociimage builds the controller's container image without Docker:
// it compiles cmd/tinyctl as a static Linux binary for each platform and
// assembles an OCI image index from layers it writes itself — no base image
// is pulled, so a build works offline.
//
// Each image has two layers: a base (an /etc/passwd and /etc/group naming
// the nonroot user 65532, and the Mozilla root certificates from
// golang.org/x/crypto/x509roots/fallback as /etc/ssl/certs/ca-certificates.crt,
// which the controller needs for a NATS server behind a public TLS
// certificate) and the binary at /tinyctl. There is no shell and no package
// manager. The image runs as 65532:65532 with entrypoint /tinyctl and
// command serve.
//
// Build returns the index; WriteLayout, WriteTarballs and Push put it in an
// OCI layout directory, docker-loadable tarballs or a registry. The command
// in cmd/ociimage drives them (`go tool task image`).
package ociimage
