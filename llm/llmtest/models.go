package llmtest

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/gantry-dev/gantry/llm"
)

// SetModels sets the models GET /v1/models (and GET /models, OpenAI's
// path under a /v1 base URL) lists; the zero list is empty.
func (s *Server) SetModels(models ...llm.ModelInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = slices.Clone(models)
}

// handleModels lists the models of SetModels in one page whose entries
// carry both Anthropic's fields (type, display_name, created_at; has_more)
// and OpenAI's (object, created, owned_by), so both SDKs read it.
func (s *Server) handleModels(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	models := slices.Clone(s.models)
	s.mu.Unlock()
	data := []map[string]any{}
	for _, m := range models {
		data = append(data, map[string]any{
			"id": m.ID, "type": "model", "display_name": m.DisplayName, "created_at": "2025-01-01T00:00:00Z",
			"object": "model", "created": 1735689600, "owned_by": "llmtest",
		})
	}
	page := map[string]any{"object": "list", "data": data, "has_more": false}
	if len(models) > 0 {
		page["first_id"], page["last_id"] = models[0].ID, models[len(models)-1].ID
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(page)
}
