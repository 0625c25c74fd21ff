package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/gantry-dev/gantry/serveapi"
)

// APIError is an error answer of the API, as the console shows it.
type APIError struct {
	Status  int
	Code    string
	Message string
}

func (e *APIError) Error() string { return fmt.Sprintf("%s (%s)", e.Message, e.Code) }

// recorder is the response writer of an in-process API call.
type recorder struct {
	h    http.Header
	code int
	buf  bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.h }
func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.buf.Write(b)
}
func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}

// call makes one API call in-process: body (nil = none) is sent as JSON,
// a 2xx answer is decoded into out (nil = ignored), and an error answer
// becomes an *APIError.
func (c *Console) call(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.RemoteAddr = "console"
	rec := &recorder{h: http.Header{}}
	c.o.API.ServeHTTP(rec, req)
	if rec.code == 0 {
		rec.code = http.StatusOK
	}
	if rec.code >= 300 {
		var eb serveapi.ErrorBody
		if json.Unmarshal(rec.buf.Bytes(), &eb) != nil || eb.Error.Message == "" {
			eb.Error.Code, eb.Error.Message = http.StatusText(rec.code), rec.buf.String()
		}
		return &APIError{Status: rec.code, Code: eb.Error.Code, Message: eb.Error.Message}
	}
	if out != nil && rec.buf.Len() > 0 {
		if err := json.Unmarshal(rec.buf.Bytes(), out); err != nil {
			return fmt.Errorf("console: %s %s: %w", method, path, err)
		}
	}
	return nil
}
