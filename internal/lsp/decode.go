package lsp

import (
	"bytes"
	"encoding/json"
)

// rawLocations decodes the answer of definition-like requests: null, a
// Location, a Location[] or a LocationLink[].
type rawLocations struct{ list []location }

func (r *rawLocations) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || bytes.Equal(b, []byte("null")) {
		return nil
	}
	if b[0] == '{' {
		var l location
		if err := json.Unmarshal(b, &l); err != nil {
			return err
		}
		r.list = []location{l}
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return err
	}
	for _, it := range items {
		var probe struct {
			URI       string `json:"uri"`
			TargetURI string `json:"targetUri"`
		}
		if err := json.Unmarshal(it, &probe); err != nil {
			return err
		}
		if probe.TargetURI != "" {
			var ll locationLink
			if err := json.Unmarshal(it, &ll); err != nil {
				return err
			}
			r.list = append(r.list, location{URI: ll.TargetURI, Range: ll.TargetSelectionRange})
			continue
		}
		var l location
		if err := json.Unmarshal(it, &l); err != nil {
			return err
		}
		r.list = append(r.list, l)
	}
	return nil
}

func (r rawLocations) locations() []location { return r.list }

// rawSymbols decodes textDocument/documentSymbol: DocumentSymbol[] (tree)
// or SymbolInformation[] (flat).
type rawSymbols struct {
	tree []documentSymbol
	flat []symbolInformation
}

func (r *rawSymbols) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || bytes.Equal(b, []byte("null")) {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return err
	}
	for _, it := range items {
		var probe struct {
			Location *json.RawMessage `json:"location"`
		}
		if err := json.Unmarshal(it, &probe); err != nil {
			return err
		}
		if probe.Location != nil {
			var s symbolInformation
			if err := json.Unmarshal(it, &s); err != nil {
				return err
			}
			r.flat = append(r.flat, s)
			continue
		}
		var s documentSymbol
		if err := json.Unmarshal(it, &s); err != nil {
			return err
		}
		r.tree = append(r.tree, s)
	}
	return nil
}
