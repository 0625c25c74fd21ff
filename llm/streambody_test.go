package llm

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestStreamBody(t *testing.T) {
	b := stringPieces
	tests := []struct {
		name    string
		head    string
		msgs    []Piece
		tools   string
		want    string
		wantErr bool
	}{
		{"fields and tools", `{"model":"m"}`, b(`{"a":1}`, `{"b":2}`), `[{"t":1}]`,
			`{"model":"m","messages":[{"a":1},{"b":2}],"tools":[{"t":1}],"stream":true}`, false},
		{"no tools", `{"model":"m"}`, b(`{"a":1}`), "",
			`{"model":"m","messages":[{"a":1}],"stream":true}`, false},
		{"three messages", `{"model":"m"}`, b(`{"a":1}`, `{"b":2}`, `{"c":3}`), `[{"t":1},{"u":2}]`,
			`{"model":"m","messages":[{"a":1},{"b":2},{"c":3}],"tools":[{"t":1},{"u":2}],"stream":true}`, false},
		{"empty head", `{}`, nil, "", `{"messages":[],"stream":true}`, false},
		{"empty head, tools", `{ }`, nil, `[1]`, `{ "messages":[],"tools":[1],"stream":true}`, false},
		{"padded head", " {\"model\":\"m\"}\n", nil, "", `{"model":"m","messages":[],"stream":true}`, false},
		{"not an object", `[1]`, nil, "", "", true},
		{"empty", ``, nil, "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := StreamBody([]byte(tt.head), tt.msgs, []byte(tt.tools))
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

func TestBodyReader(t *testing.T) {
	var b Body
	for _, p := range []string{`{"a":`, "", `"` + strings.Repeat("x", 5000) + `"`, ",", `"b":1}`} {
		b.AppendString(p)
	}
	for range 2 { // every reader starts from the whole body
		checkBody(t, &b, []byte(`{"a":"`+strings.Repeat("x", 5000)+`","b":1}`))
	}
	checkBody(t, &Body{}, nil)
}
