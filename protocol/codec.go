package protocol

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
)

// ErrLineTooLong is returned by LineReader.ReadLine for a line over the limit. The rest
// of the line has been consumed, so the stream stays usable.
var ErrLineTooLong = errors.New("protocol: line too long")

// LineReader reads newline-delimited lines with a size limit.
type LineReader struct {
	r   *bufio.Reader
	max int
}

// NewLineReader returns a reader of lines of at most max bytes (max <= 0: no limit). The
// limit counts the line as ReadLine returns it: the terminating "\n" (or "\r\n") is not
// part of it, and a final line without a newline has the same limit as any other.
func NewLineReader(r io.Reader, max int) *LineReader {
	return &LineReader{r: bufio.NewReaderSize(r, 8<<10), max: max}
}

// ReadLine returns the next line without its trailing newline (and "\r"). At EOF after a
// partial line it returns the partial line and nil; a following call returns io.EOF. A
// line over the limit is consumed up to its newline and reported as ErrLineTooLong; it is
// never held in memory beyond max+2 bytes.
func (l *LineReader) ReadLine() ([]byte, error) {
	var buf []byte
	tooLong := false
	for {
		chunk, err := l.r.ReadSlice('\n')
		if !tooLong {
			// Keep up to max+2 bytes (room for "\r\n", which trimEOL removes); whether the
			// line itself fits is decided on the trimmed line, so a final line without a
			// newline gets no extra byte.
			if l.max > 0 && len(buf)+len(chunk) > l.max+2 {
				tooLong = true
				buf = nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case err == nil:
			if tooLong {
				return nil, ErrLineTooLong
			}
			return l.line(buf)
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if tooLong {
				return nil, ErrLineTooLong
			}
			if len(buf) == 0 {
				return nil, io.EOF
			}
			return l.line(buf)
		default:
			return nil, err
		}
	}
}

// Buffered returns how many bytes have been read ahead of the lines returned so far: the
// start of a pipelined next line.
func (l *LineReader) Buffered() int { return l.r.Buffered() }

// line trims the terminator and applies the limit to what is left.
func (l *LineReader) line(buf []byte) ([]byte, error) {
	line := trimEOL(buf)
	if l.max > 0 && len(line) > l.max {
		return nil, ErrLineTooLong
	}
	return line, nil
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// DecodeRequest parses and validates one request line. Every failure is an *Error whose
// message names the offending field.
func DecodeRequest(line []byte) (*Request, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, Errorf(CodeBadRequest, "empty request line")
	}
	var req Request
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return nil, &Error{Code: CodeBadRequest, Message: "decoding request: " + describeJSONError(err)}
	}
	if dec.More() {
		return nil, Errorf(CodeBadRequest, "decoding request: trailing data after the JSON object")
	}
	if req.V != Version {
		return nil, &Error{Code: CodeUnsupportedVersion, Field: "v",
			Message: "request has protocol version " + itoa(req.V) + "; this daemon speaks version " + itoa(Version)}
	}
	switch req.Op {
	case "":
		req.Op = OpEvent
	case OpEvent, OpPing, OpStatus, OpReload:
	default:
		return nil, &Error{Code: CodeBadRequest, Field: "op", Message: "unknown op " + quote(req.Op) + " (want event, ping, status or reload)"}
	}
	if req.EventText != "" {
		if len(req.Event) > 0 {
			return nil, &Error{Code: CodeBadRequest, Field: "event_text", Message: "request has both event and event_text"}
		}
		if !json.Valid([]byte(req.EventText)) {
			// Say why (a syntax error's offset, or nesting beyond encoding/json's 10,000
			// levels), on the error path only.
			why := json.Unmarshal([]byte(req.EventText), new(json.RawMessage))
			msg := "event_text is not valid JSON"
			if why != nil {
				msg += ": " + why.Error()
			}
			return nil, &Error{Code: CodeBadRequest, Field: "event_text", Message: msg}
		}
	}
	if req.Op == OpEvent {
		if req.EventText != "" {
			ev := bytes.TrimSpace([]byte(req.EventText))
			if len(ev) == 0 || ev[0] != '{' {
				return nil, &Error{Code: CodeBadRequest, Field: "event_text", Message: "event payload must be a JSON object"}
			}
			// Hooks get these bytes exactly, whitespace and trailing newline included.
			req.Event, req.EventText = json.RawMessage(req.EventText), ""
			return validateEnv(&req)
		}
		ev := bytes.TrimSpace(req.Event)
		if len(ev) == 0 || bytes.Equal(ev, []byte("null")) {
			return nil, &Error{Code: CodeBadRequest, Field: "event", Message: "request has no event payload"}
		}
		if ev[0] != '{' {
			return nil, &Error{Code: CodeBadRequest, Field: "event", Message: "event payload must be a JSON object"}
		}
		req.Event = ev
	}
	return validateEnv(&req)
}

func validateEnv(req *Request) (*Request, error) {
	for i, kv := range req.Env {
		if !strings.Contains(kv, "=") {
			return nil, &Error{Code: CodeBadRequest, Field: "env", Message: "env[" + itoa(i) + "] is not KEY=VALUE"}
		}
	}
	return req, nil
}

// EventHeader is the part of an event payload every event shares.
type EventHeader struct {
	HookEventName string `json:"hook_event_name"`
	SessionID     string `json:"session_id"`
	Cwd           string `json:"cwd"`
}

// describeJSONError turns encoding/json errors into a short message with the offset or
// field, without echoing the (possibly large) input.
func describeJSONError(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return "invalid JSON at byte " + itoa(int(se.Offset)) + ": " + se.Error()
	case errors.As(err, &te):
		f := te.Field
		if f == "" {
			f = "(top level)"
		}
		return "field " + quote(f) + " must be " + te.Type.String() + ", not JSON " + te.Value
	default:
		return err.Error()
	}
}

// WriteFrame encodes f as one line on w.
func WriteFrame(w io.Writer, f *Frame) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

func itoa(i int) string { return strconv.Itoa(i) }

func quote(s string) string { return strconv.Quote(s) }

// EventName extracts hook_event_name from a payload without validating the rest; "" if
// the payload is not a JSON object or has none. Clients use it to fail safe on garbage.
func EventName(payload []byte) string {
	var h struct {
		Name string `json:"hook_event_name"`
	}
	if json.Unmarshal(payload, &h) != nil {
		return ""
	}
	return h.Name
}
