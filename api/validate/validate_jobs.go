package validate

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/defaults"
)

// Limits on the stream and consumer settings. JetStream itself refuses a
// non-zero max age or duplicate window below 100ms.
const (
	MinStreamReplicas = 1
	MaxStreamReplicas = 5
	MinStreamWindow   = 100 * time.Millisecond
	MinAckWait        = time.Second
	MaxAckWait        = 12 * time.Hour
)

// MaxSubjects bounds spec.jobs.subjects and spec.jobs.publish: overlap
// is checked pairwise, and a component needs a handful.
const MaxSubjects = 256

func validateJobs(j api.Jobs, path *field.Path) field.ErrorList {
	errs := validateSubjects(j.Subjects, path.Child("subjects"))
	errs = append(errs, validatePublish(j.Publish, path.Child("publish"))...)
	errs = append(errs, validateStream(j.Stream, path.Child("stream"))...)
	errs = append(errs, validateConsumer(j.Consumer, path.Child("consumer"))...)
	return errs
}

// validateSubjects checks each subject, then reports duplicates and pairs
// that overlap (NATS refuses both in one stream). Each problem is reported
// on the later subject of a pair.
func validateSubjects(subjects []string, path *field.Path) field.ErrorList {
	if len(subjects) == 0 {
		return field.ErrorList{field.Required(path, "at least one NATS subject such as jobs.extract.>")}
	}
	if len(subjects) > MaxSubjects {
		return field.ErrorList{field.TooMany(path, len(subjects), MaxSubjects)}
	}
	var errs field.ErrorList
	var valid []int
	for i, s := range subjects {
		switch p := subjectProblem(s); {
		case s == "":
			errs = append(errs, field.Required(path.Index(i), "a NATS subject"))
		case p != "":
			errs = append(errs, field.Invalid(path.Index(i), s, p))
		default:
			errs = append(errs, overlaps(subjects, valid, i, path)...)
			valid = append(valid, i)
		}
	}
	return errs
}

// validatePublish checks the subjects a worker may publish: the grammar of
// job subjects (wildcards allowed, nothing reserved), no duplicates.
func validatePublish(subjects []string, path *field.Path) field.ErrorList {
	if len(subjects) > MaxSubjects {
		return field.ErrorList{field.TooMany(path, len(subjects), MaxSubjects)}
	}
	var errs field.ErrorList
	seen := make(map[string]bool, len(subjects))
	for i, s := range subjects {
		switch p := subjectProblem(s); {
		case s == "":
			errs = append(errs, field.Required(path.Index(i), "a NATS subject"))
		case p != "":
			errs = append(errs, field.Invalid(path.Index(i), s, p))
		case seen[s]:
			errs = append(errs, field.Duplicate(path.Index(i), s))
		}
		seen[s] = true
	}
	return errs
}

// overlaps compares subjects[i] with the earlier valid subjects.
func overlaps(subjects []string, earlier []int, i int, path *field.Path) field.ErrorList {
	s := subjects[i]
	for _, j := range earlier {
		switch other := subjects[j]; {
		case other == s:
			return field.ErrorList{field.Duplicate(path.Index(i), s)}
		case subjectsCollide(other, s):
			return field.ErrorList{field.Invalid(path.Index(i), s,
				fmt.Sprintf("overlaps %s (%q): a job matching both would be stored twice", path.Index(j), other))}
		}
	}
	return nil
}

func validateStream(s api.StreamSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Replicas != 0 { // 0: the cluster's default
		errs = append(errs, between(path.Child("replicas"), int64(s.Replicas), MinStreamReplicas, MaxStreamReplicas)...)
	}
	if s.Storage != "file" && s.Storage != "memory" {
		errs = append(errs, field.NotSupported(path.Child("storage"), s.Storage, []string{"file", "memory"}))
	}
	maxAge, err := parseDuration(path.Child("maxAge"), s.MaxAge)
	switch {
	case err != nil:
		errs = append(errs, err)
	case maxAge < 0 || (maxAge > 0 && maxAge < MinStreamWindow):
		errs = append(errs, field.Invalid(path.Child("maxAge"), string(s.MaxAge), "must be 0 (keep jobs until consumed) or at least 100ms"))
	}
	errs = append(errs, validateDuplicateWindow(s.DuplicateWindow, maxAge, path.Child("duplicateWindow"))...)
	errs = append(errs, nonNegative(path.Child("maxMsgs"), s.MaxMsgs, "0 takes the cluster's cap")...)
	errs = append(errs, nonNegative(path.Child("maxBytes"), s.MaxBytes, "0 asks for no byte limit")...)
	return errs
}

// validateDuplicateWindow checks the window against its floor and against a
// valid, limited maxAge.
func validateDuplicateWindow(d api.Duration, maxAge time.Duration, path *field.Path) field.ErrorList {
	window, err := parseDuration(path, d)
	switch {
	case err != nil:
		return field.ErrorList{err}
	case window < MinStreamWindow:
		return field.ErrorList{field.Invalid(path, string(d), "must be at least 100ms")}
	case maxAge >= MinStreamWindow && window > maxAge:
		return field.ErrorList{field.Invalid(path, string(d), fmt.Sprintf(
			"must not exceed maxAge (%s); the default is %s, so set it when maxAge is shorter", maxAge, defaults.DuplicateWindow))}
	}
	return nil
}

func validateConsumer(c api.ConsumerSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, durationRange(path.Child("ackWait"), c.AckWait, MinAckWait, MaxAckWait)...)
	errs = append(errs, atLeast(path.Child("maxDeliver"), int64(c.MaxDeliver), 1)...)
	errs = append(errs, atLeast(path.Child("maxAckPending"), int64(c.MaxAckPending), 1)...)
	for i, b := range c.Backoff {
		errs = append(errs, durationRange(path.Child("backoff").Index(i), b, MinAckWait, MaxAckWait)...)
	}
	if c.MaxDeliver >= 1 && len(c.Backoff) > c.MaxDeliver {
		e := field.TooMany(path.Child("backoff"), len(c.Backoff), c.MaxDeliver)
		e.Detail += " (maxDeliver): JetStream refuses more backoffs than deliveries"
		errs = append(errs, e)
	}
	return errs
}

// parseDuration parses d as a Go duration.
func parseDuration(path *field.Path, d api.Duration) (time.Duration, *field.Error) {
	v, err := time.ParseDuration(string(d))
	if err != nil {
		return 0, field.Invalid(path, string(d), "must be a duration such as 30s, 5m or 24h")
	}
	return v, nil
}

// durationRange checks that d parses and lies in [lo, hi].
func durationRange(path *field.Path, d api.Duration, lo, hi time.Duration) field.ErrorList {
	v, err := parseDuration(path, d)
	if err != nil {
		return field.ErrorList{err}
	}
	if v < lo || v > hi {
		return field.ErrorList{field.Invalid(path, string(d), fmt.Sprintf("must be between %s and %s", lo, hi))}
	}
	return nil
}

// between checks lo <= v <= hi.
func between(path *field.Path, v, lo, hi int64) field.ErrorList {
	if v < lo || v > hi {
		return field.ErrorList{field.Invalid(path, v, fmt.Sprintf("must be between %d and %d, inclusive", lo, hi))}
	}
	return nil
}

// atLeast checks v >= lo.
func atLeast(path *field.Path, v, lo int64) field.ErrorList {
	if v < lo {
		return field.ErrorList{field.Invalid(path, v, fmt.Sprintf("must be greater than or equal to %d", lo))}
	}
	return nil
}

// nonNegative checks v >= 0.
func nonNegative(path *field.Path, v int64, meaning string) field.ErrorList {
	if v < 0 {
		return field.ErrorList{field.Invalid(path, v, "must be greater than or equal to 0; "+meaning)}
	}
	return nil
}
