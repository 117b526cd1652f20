package api

import "errors"

func errorsIsInvalid(err error) bool { return errors.Is(err, ErrInvalid) }
