package core

import (
	"errors"
	"fmt"

	"github.com/fileshed/fileshed/core/store"
)

// Code is the stable wire value of an error ("FILE_NOT_FOUND"). Codes are never renamed:
// prompts and habits built on the original tool depend on them.
type Code string

// Error is the one error type core returns. Message, Hint and Details are written for the
// model (zone-relative paths only); Err is the cause, logged once at the edge, never sent.
type Error struct {
	Code    Code
	Message string
	Hint    string
	Details map[string]any
	Err     error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Errf builds an *Error with a formatted message and the catalogue's default hint.
func Errf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Hint: defaultHint(code), Details: map[string]any{}}
}

// With adds a detail and returns e.
func (e *Error) With(key string, value any) *Error {
	e.Details[key] = value
	return e
}

// WithHint replaces the hint and returns e.
func (e *Error) WithHint(format string, args ...any) *Error {
	e.Hint = fmt.Sprintf(format, args...)
	return e
}

// Because records the cause and returns e. An INTERNAL_ERROR caused by the state database
// refusing a connection becomes STATE_UNAVAILABLE (with its hint): not a fault to report,
// a moment to wait.
func (e *Error) Because(err error) *Error {
	e.Err = err
	if e.Code == InternalError && store.Unavailable(err) {
		e.Code, e.Hint = StateUnavailable, defaultHint(StateUnavailable)
	}
	return e
}

// Unavailable is the STATE_UNAVAILABLE error of err, a bare error from the state database,
// when it refused a connection; nil otherwise.
func Unavailable(err error) *Error {
	if !store.Unavailable(err) {
		return nil
	}
	return Errf(InternalError, "The state database refused a connection").Because(err)
}

// AsError returns err as an *Error when it is one.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// IsCode reports whether err is a fileshed error with code c.
func IsCode(err error, c Code) bool {
	e, ok := AsError(err)
	return ok && e.Code == c
}
