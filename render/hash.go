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

// stamp adds the content-hash, revision and cluster annotations to obj,
// whose metadata is accessor. The hash is taken first, so it depends on
// neither the revision nor the cluster's name: the same content has the
// same hash in every cluster and at every revision.
func stamp(obj any, accessor metav1.Object, m meta) error {
	h, err := ContentHash(obj)
	if err != nil {
		return err
	}
	ann := accessor.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AnnotationContentHash] = h
	ann[AnnotationRevision] = strconv.FormatUint(m.revision, 10)
	ann[AnnotationCluster] = m.cluster
	accessor.SetAnnotations(ann)
	return nil
}
