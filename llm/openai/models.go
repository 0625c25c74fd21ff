package openai

import (
	"context"

	sdk "github.com/openai/openai-go/v3"

	"github.com/gantry-dev/gantry/llm"
)

var _ llm.ModelLister = (*Provider)(nil)

// ListModels lists the models of GET /models under the base URL, in the
// API's order, up to [llm.MaxListedModels]. OpenAI has no display names.
func (p *Provider) ListModels(ctx context.Context) ([]llm.ModelInfo, error) {
	var out []llm.ModelInfo
	svc := sdk.NewModelService(p.client.Options...)
	pager := svc.ListAutoPaging(ctx)
	for pager.Next() && len(out) < llm.MaxListedModels {
		out = append(out, llm.ModelInfo{ID: pager.Current().ID})
	}
	if err := pager.Err(); err != nil {
		return nil, p.classify(ctx, err, false)
	}
	return out, nil
}
