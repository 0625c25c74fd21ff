package llm

import (
	"encoding/json"
	"testing"
)

func TestStreamBody(t *testing.T) {
	b := func(s ...string) [][]byte {
		out := make([][]byte, len(s))
		for i, v := range s {
			out[i] = []byte(v)
		}
		return out
	}
	tests := []struct {
		name        string
		head        string
		msgs, tools [][]byte
		want        string
		wantErr     bool
	}{
		{"fields and tools", `{"model":"m"}`, b(`{"a":1}`, `{"b":2}`), b(`{"t":1}`),
			`{"model":"m","messages":[{"a":1},{"b":2}],"tools":[{"t":1}],"stream":true}`, false},
		{"no tools", `{"model":"m"}`, b(`{"a":1}`), nil,
			`{"model":"m","messages":[{"a":1}],"stream":true}`, false},
		{"empty head", `{}`, nil, nil, `{"messages":[],"stream":true}`, false},
		{"padded head", " {\"model\":\"m\"}\n", nil, nil, `{"model":"m","messages":[],"stream":true}`, false},
		{"not an object", `[1]`, nil, nil, "", true},
		{"empty", ``, nil, nil, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := StreamBody([]byte(tt.head), tt.msgs, tt.tools)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("StreamBody(%q) = %s, want an error", tt.head, got.Bytes())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := string(got.Bytes()); s != tt.want {
				t.Fatalf("body\n got %s\nwant %s", s, tt.want)
			}
			if got.Len() != int64(len(tt.want)) {
				t.Fatalf("Len = %d, want %d", got.Len(), len(tt.want))
			}
			if !json.Valid(got.Bytes()) {
				t.Fatalf("not valid JSON: %s", got.Bytes())
			}
		})
	}
}
