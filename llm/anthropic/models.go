package anthropic

import (
	"context"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/gantry-dev/gantry/llm"
)

var _ llm.ModelLister = (*Provider)(nil)

// ListModels lists the models of GET /v1/models, newest first as the API
// orders them, paging until the list ends or reaches
// [llm.MaxListedModels].
func (p *Provider) ListModels(ctx context.Context) ([]llm.ModelInfo, error) {
	var out []llm.ModelInfo
	pager := p.client.Models.ListAutoPaging(ctx, sdk.ModelListParams{Limit: sdk.Int(100)})
	for pager.Next() && len(out) < llm.MaxListedModels {
		m := pager.Current()
		out = append(out, llm.ModelInfo{ID: m.ID, DisplayName: m.DisplayName})
	}
	if err := pager.Err(); err != nil {
		return nil, p.classify(ctx, err, false)
	}
	return out, nil
}
