package validate

import (
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The image reference grammar, after the distribution project's:
//
//	reference  := name [ ":" tag ] [ "@" digest ]
//	name       := [ host [ ":" port ] "/" ] component ( "/" component )*
//	host       := domain-label ( "." domain-label )* | "[" ipv6 "]"
//	component  := [a-z0-9]+ ( ( "." | "_" | "__" | "-"+ ) [a-z0-9]+ )*
//	tag        := [A-Za-z0-9_] [A-Za-z0-9_.-]{0,127}
//	digest     := "sha256:" [a-f0-9]{64}
//
// Only sha256 digests are accepted. The compiled expressions below are
// read-only. Not go-containerregistry's name package: it accepts names
// containerd refuses ("-app:1", "app//x:1") and normalises ("nginx"
// becomes index.docker.io/library/nginx:latest), where a spec's image must
// be checked as written.
const (
	imageDomainLabel = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	imageHost        = `(?:` + imageDomainLabel + `(?:\.` + imageDomainLabel + `)*|\[[a-fA-F0-9:]+\])`
	imageDomain      = imageHost + `(?::[0-9]+)?`
	imageComponent   = `[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*`
	imageName        = `(?:` + imageDomain + `/)?` + imageComponent + `(?:/` + imageComponent + `)*`
	maxImageName     = 255
)

var (
	imageNameRE   = regexp.MustCompile(`^` + imageName + `$`)
	imageTagRE    = regexp.MustCompile(`^[\w][\w.-]{0,127}$`)
	imageDigestRE = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)
)

// imageRef is an image reference cut into its parts.
type imageRef struct {
	name, tag, digest string
	hasTag, hasDigest bool
}

// parseImageRef cuts ref at "@" (digest) and at the last ":" after the last
// "/" (tag). It does not check the parts.
func parseImageRef(ref string) imageRef {
	var r imageRef
	rest, digest, hasDigest := strings.Cut(ref, "@")
	r.digest, r.hasDigest = digest, hasDigest
	r.name = rest
	if i := strings.LastIndexByte(rest, ':'); i > strings.LastIndexByte(rest, '/') {
		r.name, r.tag, r.hasTag = rest[:i], rest[i+1:], true
	}
	return r
}

// validateImage checks an image reference and requires it to be pinned by
// a tag, a digest or both.
func validateImage(path *field.Path, ref string) field.ErrorList {
	if ref == "" {
		return field.ErrorList{field.Required(path, "an image reference such as registry.example.com/team/worker:1.2.3")}
	}
	r := parseImageRef(ref)
	var errs field.ErrorList
	switch {
	case len(r.name) > maxImageName:
		errs = append(errs, field.Invalid(path, ref, "the repository name must be at most 255 characters"))
	case !imageNameRE.MatchString(r.name):
		errs = append(errs, field.Invalid(path, ref, imageNameProblem(r.name)))
	}
	if r.hasTag && !imageTagRE.MatchString(r.tag) {
		errs = append(errs, field.Invalid(path, ref,
			"the tag must be 1-128 letters, digits, '_', '.' or '-', and may not start with '.' or '-'"))
	}
	if r.hasDigest && !imageDigestRE.MatchString(r.digest) {
		errs = append(errs, field.Invalid(path, ref, "the digest must be sha256: followed by 64 lowercase hex digits"))
	}
	if !r.hasTag && !r.hasDigest {
		errs = append(errs, field.Invalid(path, ref, "pin a tag or digest, e.g. worker:1.2.3 or worker@sha256:<64 hex digits>"))
	}
	return errs
}

// imageNameProblem explains why name is not a valid repository name.
func imageNameProblem(name string) string {
	_, repo, hasHost := strings.Cut(name, "/")
	if !hasHost {
		repo = name
	}
	if repo != strings.ToLower(repo) {
		return "the repository path must be lowercase"
	}
	return "must be [host[:port]/]path[:tag][@sha256:digest], with path components of lowercase letters and digits " +
		"separated by '.', '_', '__' or '-', e.g. registry.example.com/team/worker:1.2.3"
}

// isLatestTag reports whether ref is pinned only by the mutable tag latest.
func isLatestTag(ref string) bool {
	r := parseImageRef(ref)
	return r.hasTag && r.tag == "latest" && !r.hasDigest
}
