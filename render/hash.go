package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ContentHash returns the hex SHA-256 of obj's JSON encoding. encoding/json
// writes struct fields in declaration order and map keys sorted, so equal
// content always hashes the same.
func ContentHash(obj any) (string, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return "", fmt.Errorf("content hash of %T: %w", obj, err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// stamp adds the content-hash and revision annotations to obj, whose
// metadata is accessor. The hash is taken first, so it does not depend on
// the revision.
func stamp(obj any, accessor metav1.Object, revision uint64) error {
	h, err := ContentHash(obj)
	if err != nil {
		return err
	}
	ann := accessor.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AnnotationContentHash] = h
	ann[AnnotationRevision] = strconv.FormatUint(revision, 10)
	accessor.SetAnnotations(ann)
	return nil
}
