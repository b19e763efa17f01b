package groundwire

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// FieldViolation names one invalid request field and what is wrong with it (google.rpc.BadRequest).
type FieldViolation struct {
	// Field is the path of the field, for example "top_k" or "documents[2].document_id".
	Field string
	// Description says what is wrong and how to fix it.
	Description string
}

// Error is a failed call: the gRPC status code and message, plus the details the server attached.
//
// It works with errors.As, and status.FromError / status.Code still see the original status.
// errors.Is(err, context.Canceled) and errors.Is(err, context.DeadlineExceeded) hold for the codes
// CANCELED and DEADLINE_EXCEEDED.
type Error struct {
	// Code is the gRPC status code.
	Code codes.Code
	// Message is the server's message (it names the fix for bad input).
	Message string
	// FieldViolations are the BadRequest details: one per invalid field. Empty when none.
	FieldViolations []FieldViolation
	// RetryDelay is the server's RetryInfo delay; 0 when the server sent none.
	RetryDelay time.Duration

	status *status.Status
}

// Error formats the code, message and field violations.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "groundwire: %s: %s", e.Code, e.Message)
	for _, v := range e.FieldViolations {
		fmt.Fprintf(&b, "; %s: %s", v.Field, v.Description)
	}
	return b.String()
}

// GRPCStatus returns the status the error was made from (used by status.FromError and status.Code).
func (e *Error) GRPCStatus() *status.Status { return e.status }

// Is reports whether the error is context.Canceled (code CANCELED) or context.DeadlineExceeded
// (code DEADLINE_EXCEEDED), so errors.Is works as for other context-aware calls.
func (e *Error) Is(target error) bool {
	switch target {
	case context.Canceled:
		return e.Code == codes.Canceled
	case context.DeadlineExceeded:
		return e.Code == codes.DeadlineExceeded
	}
	return false
}

// Violation returns the field violation for field, if there is one.
func (e *Error) Violation(field string) (FieldViolation, bool) {
	for _, v := range e.FieldViolations {
		if v.Field == field {
			return v, true
		}
	}
	return FieldViolation{}, false
}

// asError turns any error returned by a gRPC call into *Error (nil stays nil; *Error is kept).
func asError(err error) error {
	if err == nil {
		return nil
	}
	if e, ok := err.(*Error); ok {
		return e
	}
	st, ok := status.FromError(err)
	if !ok {
		st = status.FromContextError(err) // context errors get their codes; others are UNKNOWN
	}
	e := &Error{Code: st.Code(), Message: st.Message(), status: st}
	for _, detail := range st.Details() {
		switch d := detail.(type) {
		case *errdetails.BadRequest:
			for _, v := range d.GetFieldViolations() {
				e.FieldViolations = append(e.FieldViolations, FieldViolation{Field: v.GetField(), Description: v.GetDescription()})
			}
		case *errdetails.RetryInfo:
			if d.GetRetryDelay() != nil {
				e.RetryDelay = d.GetRetryDelay().AsDuration()
			}
		}
	}
	return e
}
