package ociimage

import (
	"archive/tar"
	"bytes"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// The user the controller runs as: distroless's "nonroot", which the
// chart's podSecurity.runAsUser also names.
const (
	UID      = 65532
	userName = "nonroot"
)

// Paths in the image.
const (
	Entrypoint = "/tinyctl"
	certsFile  = "etc/ssl/certs/ca-certificates.crt"
)

// file is one entry of a layer, owned by uid (and the group of that
// number); a directory when dir is set.
type file struct {
	name string
	mode int64
	uid  int
	dir  bool
	data []byte
}

// baseFiles are the base layer's entries: the nonroot user and group, and
// the root certificates.
func baseFiles() []file {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:/home/%s:/sbin/nologin\n", userName, UID, UID, userName, userName)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\n", userName, UID)
	return []file{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/ssl/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/", mode: 0o755, dir: true},
		{name: certsFile, mode: 0o644, data: rootsPEM()},
		{name: "home/", mode: 0o755, dir: true},
		{name: "home/" + userName + "/", mode: 0o700, uid: UID, dir: true},
	}
}

// rootsPEM is the NSS root store as PEM. Roots that NSS trusts only with
// constraints a PEM file cannot carry (a distrust date) are left out.
func rootsPEM() []byte {
	var b bytes.Buffer
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate})
	}
	return b.Bytes()
}

// binaryFile is the layer entry of the binary at path, placed at at (such
// as /tinyctl), owned by root: the nonroot user can run it but not change
// it.
func binaryFile(path, at string) (file, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return file{}, err
	}
	return file{name: strings.TrimPrefix(at, "/"), mode: 0o755, data: data}, nil
}

// layer writes files into an uncompressed tar with modification time at
// (the commit's time, for reproducible digests) and returns it as an OCI
// layer.
func layer(at time.Time, files ...file) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, Uid: f.uid, Gid: f.uid, ModTime: at,
			Format: tar.FormatPAX, Typeflag: tar.TypeReg, Size: int64(len(f.data))}
		if f.dir {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
}
