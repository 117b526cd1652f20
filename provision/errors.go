package provision

import "errors"

// ErrReleaseBusy means a release has an install, upgrade or rollback in
// progress (its last revision is pending and recent), so it was not
// touched. Retry when that operation has finished.
var ErrReleaseBusy = errors.New("release has an operation in progress")

// ErrChartUnavailable means a chart could not be found or fetched: its
// repository is unreachable or does not serve that chart and version, or
// an embedded chart does not exist.
var ErrChartUnavailable = errors.New("chart unavailable")

// ErrTokenSecret means the broker's token Secret exists but holds no token
// under the expected key; provision never overwrites it.
var ErrTokenSecret = errors.New("broker token secret has no token")

// ErrNamespaceTerminating means the runtime namespace is being deleted (a
// recent uninstall); nothing can be installed into it until it is gone.
var ErrNamespaceTerminating = errors.New("namespace is being deleted")
