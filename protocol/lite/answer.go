package lite

import "io"

// Frame types a forwarder tells apart (protocol.FrameResult, protocol.FrameError).
const (
	FrameResult = "result"
	FrameError  = "error"
)

// Error is the body of an "error" frame (protocol.Error, same text).
type Error struct {
	Code    string
	Message string
	Event   string
	Field   string
}

func (e *Error) Error() string { return "hookd: " + e.Code + ": " + e.Message }

// Result is the part of a result frame's result a forwarder renders (protocol.Result's
// fields of the same JSON names).
type Result struct {
	DecisionID string
	Revision   string
	Output     []byte // raw JSON, as json.RawMessage
	Stdout     string
	Stderr     string
	ExitCode   int
}

// Answer is one answer line, decoded as far as a forwarder reads it.
type Answer struct {
	// Head is false when the line does not decode as protocol.Frame's "type" and "error"
	// fields (invalid JSON, or one of them of the wrong type): such a line is not a
	// terminal frame, whatever it says.
	Head bool
	Type string
	// Error is the error frame's body (nil when it has none).
	Error *Error
	// Result is the result frame's result, nil when the line has none or it does not
	// decode (a field of the wrong type).
	Result *Result
}

// Terminal reports whether the line ends an answer.
func (a *Answer) Terminal() bool { return a.Head && (a.Type == FrameResult || a.Type == FrameError) }

// Err is the error an error frame stands for: its body, or an internal error when it has
// none. nil for other frames.
func (a *Answer) Err() error {
	if !a.Head || a.Type != FrameError {
		return nil
	}
	if a.Error == nil {
		return &Error{Code: CodeInternal, Message: "error frame without error body"}
	}
	return a.Error
}

// DecodeAnswer decodes one answer line as json.Unmarshal into a struct of "type",
// "error" (*protocol.Error) would (Head, Type, Error), and, separately, into a struct of
// "result" with the fields of Result (Result; nil when that fails or there is none).
func DecodeAnswer(line []byte) Answer {
	s := &scanner{b: line}
	var a Answer
	headErr, resultErr := false, false
	if s.peek() != '{' {
		// null decodes into nothing (a frame without a type: not terminal); anything
		// else fails.
		a.Head = s.peek() == 'n' && s.literal() == nil && s.end() == nil
		return a
	}
	var res *Result
	err := s.object(1, func(key []byte, depth int) error {
		switch {
		case is(key, "type"):
			err := s.stringField(&a.Type, depth)
			headErr = headErr || s.typeErr
			s.typeErr = false
			return err
		case is(key, "error"):
			err := s.structField(depth, func(null bool) {
				if null {
					a.Error = nil
				} else if a.Error == nil {
					a.Error = new(Error)
				}
			}, func(key []byte, depth int) error {
				e := a.Error
				switch {
				case is(key, "code"):
					return s.stringField(&e.Code, depth)
				case is(key, "message"):
					return s.stringField(&e.Message, depth)
				case is(key, "event"):
					return s.stringField(&e.Event, depth)
				case is(key, "field"):
					return s.stringField(&e.Field, depth)
				}
				_, err := s.skip(depth)
				return err
			})
			headErr = headErr || s.typeErr
			s.typeErr = false
			return err
		case is(key, "result"):
			err := s.structField(depth, func(null bool) {
				if null {
					res = nil
				} else if res == nil {
					res = new(Result)
				}
			}, func(key []byte, depth int) error {
				switch {
				case is(key, "decision_id"):
					return s.stringField(&res.DecisionID, depth)
				case is(key, "revision"):
					return s.stringField(&res.Revision, depth)
				case is(key, "output"):
					return s.rawField(&res.Output, depth)
				case is(key, "stdout"):
					return s.stringField(&res.Stdout, depth)
				case is(key, "stderr"):
					return s.stringField(&res.Stderr, depth)
				case is(key, "exit_code"):
					return s.intField(&res.ExitCode, depth)
				}
				_, err := s.skip(depth)
				return err
			})
			resultErr = resultErr || s.typeErr
			s.typeErr = false
			return err
		}
		_, err := s.skip(depth)
		return err
	})
	if err != nil || s.end() != nil {
		return Answer{}
	}
	if headErr {
		a = Answer{}
	} else {
		a.Head = true
	}
	if !resultErr {
		a.Result = res
	}
	return a
}

// Render writes r as a Claude Code command hook would answer: Output (a JSON object) or
// Stdout (plain text) on stdout, Stderr on stderr, and returns the exit code to use
// (protocol.Result.Render).
func (r *Result) Render(stdout, stderr io.Writer) int {
	switch {
	case len(r.Output) > 0 && string(r.Output) != "null" && string(r.Output) != "{}":
		// One write; the full slice expression makes append copy, never scribble past
		// Output into a buffer it may share (the answer frame it was decoded from).
		_, _ = stdout.Write(append(r.Output[:len(r.Output):len(r.Output)], '\n'))
	case r.Stdout != "":
		_, _ = io.WriteString(stdout, r.Stdout)
	}
	if r.Stderr != "" {
		_, _ = io.WriteString(stderr, r.Stderr)
	}
	return r.ExitCode
}

// FailClosed is the answer a client gives when neither the daemon nor an in-process
// engine could evaluate the event (events.FailClosed, the fields a forwarder renders):
// exit 2 with the reason on stderr; for PermissionRequest, which ignores exit 2, an
// explicit JSON deny.
func FailClosed(event, reason string) *Result {
	if event == "PermissionRequest" {
		out := []byte(`{"hookSpecificOutput":{"decision":{"behavior":"deny","message":`)
		out = appendString(out, reason, true)
		out = append(out, `},"hookEventName":"PermissionRequest"}}`...)
		return &Result{Output: out}
	}
	return &Result{ExitCode: 2, Stderr: reason + "\n"}
}
