package main

import (
	"errors"
	"fmt"
)

// Exit codes of `tinyctl diff`, which follows kubectl diff: 0 no
// difference, 1 differences found, greater than 1 an error. Usage errors
// keep exitUsage (2); every other error exits with exitDiffError.
const (
	exitDiffFound = 1
	exitDiffError = 3
)

// exitCodeError makes a command exit with code. When err is nil nothing is
// printed (a diff was found, say); otherwise err is printed as usual.
type exitCodeError struct {
	code int
	err  error
}

func (e exitCodeError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e exitCodeError) Unwrap() error { return e.err }

// exitCode returns the code an exitCodeError in err's chain asks for.
func exitCode(err error) (exitCodeError, bool) {
	var ce exitCodeError
	ok := errors.As(err, &ce)
	return ce, ok
}
