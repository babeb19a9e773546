package test

import "errors"

// setChildSubreaper: macOS has no child subreaper; the tests that need one skip there.
func setChildSubreaper(bool) error {
	return errors.ErrUnsupported
}
